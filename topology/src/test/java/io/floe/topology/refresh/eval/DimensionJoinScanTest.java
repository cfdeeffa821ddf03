package io.floe.topology.refresh.eval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.ViewScanOracle.View;
import io.floe.topology.refresh.eval.join.DimensionTable;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hash-join recompute (DESIGN §3.10) over real Iceberg tables and Parquet files: a fact table
 * of trades joined to dimension tables, each read at a pinned snapshot into a hash table ({@link
 * DimensionTables}) and probed per fact batch before the aggregation ({@link ViewScan}). Every
 * result is checked against the oracle, DuckDB joining and aggregating every live row of each
 * table's snapshot.
 */
class DimensionJoinScanTest {

  private static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()),
          Types.NestedField.optional(3, "lot", Types.LongType.get()));

  private static final Schema SIDES =
      new Schema(
          Types.NestedField.optional(1, "side", Types.StringType.get()),
          Types.NestedField.optional(2, "label", Types.StringType.get()));

  @TempDir Path dir;
  private IcebergFixture lake;
  private ExecutorService threads;
  private Table trades;
  private Table symbols;
  private Table sides;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    threads = Executors.newFixedThreadPool(2);
    // Given trades of AAPL, MSFT, IBM and ORCL over two days, some without a side
    trades = lake.createTrades("market", "trades");
    Random random = new Random(11);
    for (String day : List.of("2026-04-07", "2026-04-08")) {
      List<Record> rows = new ArrayList<>(lake.randomTrades(random, 3000, day, 0, 24));
      for (int i = 0; i < 40; i++) {
        rows.add(lake.trade("IBM", day + "T10:0" + (i % 10) + ":00Z", 10.0 + i, (long) i, null));
      }
      lake.append(trades, rows);
    }
    // and a dimension of symbols without ORCL and with a row whose key is null
    symbols = lake.createTable("ref", "symbols", SYMBOLS, PartitionSpec.unpartitioned());
    lake.append(
        symbols,
        List.of(
            symbol("AAPL", "tech", 10L),
            symbol("MSFT", "tech", 20L),
            symbol("IBM", "services", 5L),
            symbol(null, "nobody", 1L)));
    // and a dimension of sides, B and S
    sides = lake.createTable("ref", "sides", SIDES, PartitionSpec.unpartitioned());
    lake.append(sides, List.of(side("B", "buy"), side("S", "sell"), side(null, "none")));
  }

  @AfterEach
  void tearDown() throws Exception {
    threads.shutdownNow();
    lake.close();
  }

  private static Record symbol(String symbol, String sector, Long lot) {
    GenericRecord record = GenericRecord.create(SYMBOLS);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    record.setField("lot", lot);
    return record;
  }

  private static Record side(String side, String label) {
    GenericRecord record = GenericRecord.create(SIDES);
    record.setField("side", side);
    record.setField("label", label);
    return record;
  }

  private static final String BY_SECTOR =
      """
      SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume,
             count(*) AS trades, max(t.price) AS high, min_by(t.price, t.id) AS open
      FROM lake.market.trades t %s JOIN lake.ref.symbols s ON t.symbol = s.symbol
      GROUP BY s.sector, date_trunc('hour', t.ts)
      """;

  @Test
  void shouldEqualTheOracleForAnInnerJoinDroppingFactRowsWithoutADimensionRow()
      throws InvalidViewException {
    // When the view of volume by sector is recomputed over every bucket
    List<Object[]> rows = recompute(BY_SECTOR.formatted("INNER"), new DimensionTables(1 << 24));

    // Then it is the oracle's, and ORCL's trades, whose symbol the dimension lacks, count nowhere
    assertMatchesOracle(BY_SECTOR.formatted("INNER"), rows);
    assertThat(rows).noneMatch(row -> row[0] == null);
  }

  @Test
  void shouldEqualTheOracleForALeftJoinFillingNullsForMissingDimensionRows()
      throws InvalidViewException {
    List<Object[]> rows = recompute(BY_SECTOR.formatted("LEFT"), new DimensionTables(1 << 24));

    // Then ORCL's trades are the null sector's
    assertMatchesOracle(BY_SECTOR.formatted("LEFT"), rows);
    assertThat(rows).anyMatch(row -> row[0] == null);
  }

  @Test
  void shouldJoinNoRowOnANullKeyOnEitherSide() throws InvalidViewException {
    // Given a view keyed on side, null in some trades and in one dimension row
    String inner =
        """
        SELECT d.label, date_trunc('day', t.ts) AS day, count(*) AS trades,
               sum(t.quantity * 2) AS double_volume
        FROM lake.market.trades t JOIN lake.ref.sides d USING (side)
        GROUP BY d.label, date_trunc('day', t.ts)
        """;
    String left = inner.replace(" JOIN ", " LEFT JOIN ");

    // When both joins are recomputed
    DimensionTables tables = new DimensionTables(1 << 24);
    List<Object[]> innerRows = recompute(inner, tables);
    List<Object[]> leftRows = recompute(left, tables);

    // Then the null side matches no dimension row: dropped by the inner join, a null label in the
    // left join, never "none"
    assertMatchesOracle(inner, innerRows);
    assertMatchesOracle(left, leftRows);
    assertThat(innerRows).noneMatch(row -> row[0] == null || "none".equals(row[0]));
    assertThat(leftRows).anyMatch(row -> row[0] == null);
    assertThat(leftRows).noneMatch(row -> "none".equals(row[0]));
  }

  @Test
  void shouldMultiplyFactRowsByDuplicateDimensionKeysAsSqlDoes() throws InvalidViewException {
    // Given a second IBM row in the dimension, of another sector
    lake.append(symbols, List.of(symbol("IBM", "hardware", 7L)));
    String query =
        """
        SELECT t.symbol, s.sector, date_trunc('day', t.ts) AS day, count(*) AS trades
        FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol
        GROUP BY t.symbol, s.sector, date_trunc('day', t.ts)
        """;

    // When the view is recomputed
    List<Object[]> rows = recompute(query, new DimensionTables(1 << 24));

    // Then each IBM trade counts once under each of its two sectors, as the oracle says
    assertMatchesOracle(query, rows);
    Map<String, Long> ibm = new LinkedHashMap<>();
    for (Object[] row : rows) {
      if ("IBM".equals(row[0])) {
        ibm.merge((String) row[1], (Long) row[3], Long::sum);
      }
    }
    assertThat(ibm).containsOnlyKeys("services", "hardware");
    assertThat(ibm.get("services")).isEqualTo(ibm.get("hardware")).isPositive();
  }

  @Test
  void shouldJoinSeveralDimensionsWithDuplicatesInEach() throws InvalidViewException {
    // Given duplicate keys in both dimensions
    lake.append(symbols, List.of(symbol("AAPL", "consumer", 1L)));
    lake.append(sides, List.of(side("B", "bid")));
    String query =
        """
        SELECT s.sector, d.label, date_trunc('hour', t.ts) AS hour_ts, count(*) AS trades,
               sum(t.quantity) AS volume, avg(t.price) AS mean
        FROM lake.market.trades t
        LEFT JOIN lake.ref.symbols s ON s.symbol = t.symbol
        JOIN lake.ref.sides d ON t.side = d.side
        WHERE t.price > 20 AND s.lot IS DISTINCT FROM 20
        GROUP BY s.sector, d.label, date_trunc('hour', t.ts)
        """;

    // When it is recomputed on two workers
    List<Object[]> rows =
        recompute(query, new DimensionTables(1 << 24), BucketRangeSet.of(ViewScanOracle.all()), 2);

    // Then every combination of matches counts, as in the oracle
    assertMatchesOracle(query, rows);
  }

  @Test
  void shouldRecomputeOnlyTheChunksBuckets() throws InvalidViewException {
    // Given a chunk of the second day's morning
    String query = BY_SECTOR.formatted("LEFT");
    long from = Instant.parse("2026-04-08T03:00:00Z").toEpochMilli() * 1000;
    long to = Instant.parse("2026-04-08T09:00:00Z").toEpochMilli() * 1000;
    BucketRangeSet chunk = BucketRangeSet.of(new BucketRange(from, to));

    // When only its buckets are recomputed
    View view = view(query);
    List<Object[]> rows =
        ViewScan.evaluate(view.query(), scan(view, new DimensionTables(1 << 24), chunk), threads, 2)
            .rows();

    // Then they are the oracle's rows of those buckets, and only those
    assertThat(rows).hasSize(6 * 3);
    List<List<Object>> expected = new ArrayList<>();
    for (List<Object> row : expected(query)) {
      long bucket = Long.parseLong(row.get(1).toString().substring(3));
      if (bucket >= from && bucket < to) {
        expected.add(row);
      }
    }
    assertThat(Oracle.difference(query, 0, expected, ViewScanOracle.normalized(view, rows)))
        .isEmpty();
  }

  @Test
  void shouldBuildADimensionsHashTableOncePerPinnedSnapshot() throws InvalidViewException {
    // Given one set of dimension tables for two refreshes of the same dimension snapshot
    DimensionTables tables = new DimensionTables(1 << 24);
    String query = BY_SECTOR.formatted("INNER");
    recompute(query, tables);
    recompute(query, tables);
    assertThat(tables.builds()).as("builds for one snapshot").isEqualTo(1);

    // When the dimension changes (MSFT's row deleted by position, a sector renamed in a new row)
    lake.deleteByPosition(symbols, r -> "MSFT".equals(r.getField("symbol")));
    lake.append(symbols, List.of(symbol("ORCL", "software", 3L)));
    symbols.refresh();
    List<Object[]> rows = recompute(query, tables);

    // Then the next refresh builds the new snapshot's table and equals the oracle at it
    assertThat(tables.builds()).isEqualTo(2);
    assertMatchesOracle(query, rows);
    assertThat(rows).anyMatch(row -> "software".equals(row[0]));
  }

  @Test
  void shouldRejectADimensionLargerThanItsMemoryBound() throws InvalidViewException {
    // Given a bound of 500 bytes and a dimension of 4 rows
    DimensionTables tables = new DimensionTables(500);
    View view = view(BY_SECTOR.formatted("INNER"));

    // When its hash table is built, then it is rejected with the reason
    assertThatThrownBy(() -> scan(view, tables, BucketRangeSet.of(ViewScanOracle.all())))
        .isInstanceOf(DimensionTable.DimensionTooLargeException.class)
        .hasMessageContaining("Cannot join dimension lake.ref.symbols at snapshot")
        .hasMessageContaining("passed 500 bytes")
        .hasMessageContaining(DimensionTables.BYTES_CONFIG);
  }

  // --- helpers

  private Table tableNamed(TableName name) {
    return name.table().equals("symbols") ? symbols : sides;
  }

  private View view(String sql) throws InvalidViewException {
    Map<TableName, Schema> schemas =
        Map.of(
            TableName.parse("lake.ref.symbols"), symbols.schema(),
            TableName.parse("lake.ref.sides"), sides.schema());
    ViewPlan plan =
        ViewQueryBinder.bind(ViewQueryParser.parse(sql), trades.schema(), schemas, ZoneOffset.UTC);
    return new View(sql, plan, CompiledQuery.compile(plan));
  }

  private List<Object[]> recompute(String sql, DimensionTables tables) throws InvalidViewException {
    return recompute(sql, tables, BucketRangeSet.of(ViewScanOracle.all()), 1);
  }

  private List<Object[]> recompute(
      String sql, DimensionTables tables, BucketRangeSet ranges, int parallelism)
      throws InvalidViewException {
    View view = view(sql);
    return ViewScan.evaluate(view.query(), scan(view, tables, ranges), threads, parallelism).rows();
  }

  /** A scan of the fact table's current snapshot, each dimension pinned at its current one. */
  private ViewScan.Scan scan(View view, DimensionTables tables, BucketRangeSet ranges) {
    List<DimensionTable> dimensions = new ArrayList<>();
    for (ViewPlan.Dimension dimension : view.plan().dimensions()) {
      Table table = tableNamed(dimension.table());
      table.refresh();
      dimensions.add(
          tables.tableOf(
              table,
              table.currentSnapshot().snapshotId(),
              dimension.keys(),
              dimension.requiredColumns()));
    }
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        trades.newScan().useSnapshot(trades.currentSnapshot().snapshotId()).planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ViewScan.Scan(
        trades.io(),
        StorageKind.LOCAL,
        trades.schema(),
        tasks,
        view.plan().requiredColumns(),
        view.plan().bucketColumn(),
        ranges,
        true,
        Expressions.alwaysTrue(),
        null,
        dimensions);
  }

  private List<List<Object>> expected(String sql) throws InvalidViewException {
    List<Oracle.Source> dimensions = new ArrayList<>();
    for (ViewPlan.Dimension dimension : view(sql).plan().dimensions()) {
      Table table = tableNamed(dimension.table());
      dimensions.add(
          new Oracle.Source(
              table, dimension.table().toString(), table.currentSnapshot().snapshotId()));
    }
    return Oracle.expected(
        new Oracle.Source(trades, "lake.market.trades", trades.currentSnapshot().snapshotId()),
        dimensions,
        sql);
  }

  private void assertMatchesOracle(String sql, List<Object[]> rows) throws InvalidViewException {
    Optional<String> difference =
        Oracle.difference(
            sql.strip(),
            trades.currentSnapshot().snapshotId(),
            expected(sql),
            ViewScanOracle.normalized(view(sql), rows));
    assertThat(difference).isEmpty();
    assertThat(rows).isNotEmpty();
  }
}
