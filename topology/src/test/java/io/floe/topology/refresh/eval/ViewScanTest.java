package io.floe.topology.refresh.eval;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.ViewScanOracle.View;
import io.floe.topology.view.InvalidViewException;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The columnar recompute over real Iceberg tables and files, checked against the oracle (DuckDB
 * evaluating the view from every live row, read by Iceberg's generic reader): every column type,
 * every bucket column type, deletes of every kind, pruned row groups. Only {@code min_by} and
 * {@code max_by} whose keys tie are checked against Floe's engine fed every live row directly
 * ({@link RowAggregation}) instead: Floe takes the smallest of the tied values, DuckDB any.
 */
class ViewScanTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private ExecutorService threads;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    threads = Executors.newFixedThreadPool(2);
  }

  @AfterEach
  void tearDown() throws Exception {
    threads.shutdownNow();
    lake.close();
  }

  /** Where the recompute takes the tables' files to be: on local files here. */
  StorageKind storage() {
    return StorageKind.LOCAL;
  }

  private static final String SYMBOLS_QUERY =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts,
             min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
             max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trades,
             count(DISTINCT side) AS sides, avg(price) AS mean
      FROM lake.market.trades
      GROUP BY symbol, date_trunc('minute', ts)
      """;

  private static Schema typesSchema(Type bucketType) {
    return new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "b", bucketType),
        Types.NestedField.optional(3, "i", Types.IntegerType.get()),
        Types.NestedField.optional(4, "l", Types.LongType.get()),
        Types.NestedField.optional(5, "f", Types.FloatType.get()),
        Types.NestedField.optional(6, "d", Types.DoubleType.get()),
        Types.NestedField.optional(7, "s", Types.StringType.get()),
        Types.NestedField.optional(8, "flag", Types.BooleanType.get()),
        Types.NestedField.optional(9, "t", Types.TimeType.get()),
        Types.NestedField.optional(10, "dt", Types.DateType.get()),
        Types.NestedField.optional(11, "dec", Types.DecimalType.of(10, 2)),
        Types.NestedField.optional(12, "bin", Types.BinaryType.get()));
  }

  private static Type bucketType(String name) {
    return switch (name) {
      case "date" -> Types.DateType.get();
      case "timestamp" -> Types.TimestampType.withoutZone();
      case "timestamptz" -> Types.TimestampType.withZone();
      default -> Types.TimestampNanoType.withZone();
    };
  }

  private static Object bucketValue(Type type, long minutes) {
    LocalDateTime at = LocalDateTime.of(2026, 4, 8, 0, 0).plusMinutes(minutes);
    return switch (type.typeId()) {
      case DATE -> at.toLocalDate();
      case TIMESTAMP ->
          ((Types.TimestampType) type).shouldAdjustToUTC() ? at.atOffset(ZoneOffset.UTC) : at;
      default -> at.atOffset(ZoneOffset.UTC).plusNanos(minutes % 7);
    };
  }

  /** Rows with nulls in every optional column, over a few days, in several files. */
  private Table typesTable(String bucketType) {
    return typesTable(bucketType, Map.of(), 500);
  }

  /** The same with table properties of the writer, and {@code rows} rows per file. */
  private Table typesTable(String bucketType, Map<String, String> properties, int rows) {
    return typesTable(bucketType, properties, rows, false);
  }

  /** The same, each file's rows in order of the bucket column (nulls first) when asked. */
  private Table typesTable(
      String bucketType, Map<String, String> properties, int rows, boolean sorted) {
    Type type = bucketType(bucketType);
    Schema schema = typesSchema(type);
    Map<String, String> all = new java.util.HashMap<>(properties);
    // Nanosecond timestamps need format v3.
    all.put("format-version", type.typeId() == Type.TypeID.TIMESTAMP_NANO ? "3" : "2");
    Table table =
        lake.catalog()
            .createTable(
                TableIdentifier.of("market", "types_" + bucketType),
                schema,
                PartitionSpec.unpartitioned(),
                all);
    Random random = new Random(7);
    long id = 0;
    for (int file = 0; file < 4; file++) {
      List<Record> records = new ArrayList<>();
      for (int r = 0; r < rows; r++) {
        GenericRecord record = GenericRecord.create(schema);
        record.setField("id", id++);
        record.setField("b", nullOr(random, bucketValue(type, random.nextInt(3 * 1440))));
        record.setField("i", nullOr(random, random.nextInt(100) - 50));
        record.setField("l", nullOr(random, (long) random.nextInt(1000)));
        record.setField("f", nullOr(random, random.nextInt(40) / 4.0f));
        record.setField("d", nullOr(random, random.nextInt(400) / 8.0));
        record.setField("s", nullOr(random, "s" + random.nextInt(5)));
        record.setField("flag", nullOr(random, random.nextBoolean()));
        record.setField("t", nullOr(random, LocalTime.ofSecondOfDay(random.nextInt(86_400))));
        record.setField("dt", nullOr(random, LocalDate.of(2026, 1, 1 + random.nextInt(28))));
        record.setField("dec", nullOr(random, BigDecimal.valueOf(random.nextInt(100_000), 2)));
        record.setField(
            "bin", nullOr(random, ByteBuffer.wrap(new byte[] {(byte) random.nextInt(4)})));
        records.add(record);
      }
      if (sorted) {
        records.sort(
            java.util.Comparator.comparing(
                (Record r) -> (Number) IcebergValues.toNative(type, r.getField("b")),
                java.util.Comparator.nullsFirst(
                    java.util.Comparator.comparingLong(Number::longValue))));
      }
      lake.append(table, records);
    }
    return table;
  }

  private static Object nullOr(Random random, Object value) {
    return random.nextInt(10) == 0 ? null : value;
  }

  @ParameterizedTest
  @ValueSource(strings = {"date", "timestamp", "timestamptz", "timestamp_ns"})
  void shouldEqualTheOracleForEveryBucketColumnTypeOnTheDirectPath(String bucketType)
      throws InvalidViewException {
    Table table = typesTable(bucketType);
    String query =
        "SELECT s, date_trunc('day', b) AS day_b, count(*) AS n, count(d) AS nd, sum(i) AS si,"
            + " sum(l) AS sl, sum(d) AS sd, min(i) AS mini, max(l) AS maxl, min(f) AS minf,"
            + " max(d) AS maxd, min(s) AS mins, max(b) AS maxb, min(t) AS mint, max(dt) AS maxdt,"
            + " min_by(d, id) AS dbyid, max_by(b, id) AS bbyid, max_by(s, id) AS sbyid,"
            + " arbitrary(s) AS anys, bool_and(flag) AS alls, count_if(flag) AS nflag,"
            + " avg(d) AS avgd, stddev(d) AS sdd, approx_percentile(d, 0.5) AS medd,"
            + " count(DISTINCT i) AS di, sum(l) FILTER (WHERE i > 0) AS pos"
            + " FROM lake.market.t GROUP BY 1, 2";

    ViewScan.Result result = assertMatchesOracle(table, query, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowGroupsRead()).as("row groups read directly").isEqualTo(4);
  }

  @ParameterizedTest
  @ValueSource(strings = {"date", "timestamp", "timestamptz", "timestamp_ns"})
  void shouldBreakTiesOfMinByAndMaxByAsTheRowEvaluatorDoes(String bucketType)
      throws InvalidViewException {
    // Keys of a few hundred values over 2000 rows tie often: the oracle cannot decide these.
    Table table = typesTable(bucketType);
    String query =
        "SELECT s, date_trunc('day', b) AS day_b, min_by(d, l) AS dbyl, max_by(i, b) AS ibyb,"
            + " max_by(s, l) AS sbyl, min_by(dt, flag) AS dtbyflag"
            + " FROM lake.market.t GROUP BY 1, 2";

    ViewScan.Result result =
        assertSameRowsAsTheRowEvaluator(table, query, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowGroupsRead()).as("row groups read directly").isEqualTo(4);
  }

  @ParameterizedTest
  @ValueSource(strings = {"v1", "v2"})
  void shouldDecodeManyPagesOfEachVersionAndDictionariesThatFallBackToOtherEncodings(
      String pageVersion) throws InvalidViewException, IOException {
    // Small pages and dictionaries: many pages per column chunk, dictionary-encoded ones followed
    // by
    // plain or delta-encoded ones once the dictionary is full, as in a high-cardinality column.
    Table table =
        typesTable(
            "timestamptz",
            Map.of(
                "write.parquet.page-version", pageVersion,
                "write.parquet.page-row-limit", "300",
                "write.parquet.dict-size-bytes", "256"),
            3000);
    String query =
        "SELECT s, date_trunc('day', b) AS day_b, count(*) AS n, sum(i) AS si, sum(l) AS sl,"
            + " sum(d) AS sd, min(f) AS minf, max(t) AS maxt, max(dt) AS maxdt,"
            + " min_by(d, id) AS first_d, count_if(flag) AS nflag FROM lake.market.t GROUP BY 1, 2";

    ViewScan.Result result = assertMatchesOracle(table, query, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowGroupsRead()).as("row groups read directly").isEqualTo(4);
    java.util.Set<org.apache.parquet.column.Encoding> encodings = new java.util.HashSet<>();
    for (FileScanTask task : table.newScan().planFiles()) {
      try (org.apache.parquet.hadoop.ParquetFileReader reader =
          org.apache.parquet.hadoop.ParquetFileReader.open(
              new org.apache.parquet.io.LocalInputFile(localPath(task.file().location())))) {
        for (var block : reader.getFooter().getBlocks()) {
          for (var chunk : block.getColumns()) {
            encodings.addAll(chunk.getEncodings());
          }
        }
      }
    }
    assertThat(encodings)
        .as("encodings of the files")
        .containsAll(
            pageVersion.equals("v1")
                ? List.of(
                    org.apache.parquet.column.Encoding.PLAIN_DICTIONARY,
                    org.apache.parquet.column.Encoding.PLAIN)
                : List.of(
                    org.apache.parquet.column.Encoding.RLE_DICTIONARY,
                    org.apache.parquet.column.Encoding.DELTA_BINARY_PACKED,
                    org.apache.parquet.column.Encoding.PLAIN));
  }

  @ParameterizedTest
  @ValueSource(strings = {"v1", "v2"})
  void shouldEqualTheOracleOnPrunedPagesOfEveryTypeWithNullsAndFallenBackDictionaries(
      String pageVersion) throws InvalidViewException {
    // Given files sorted by the bucket column, each column chunk of a row group in many pages of
    // at most 300 rows and about 500 bytes, so that the pages of wide columns (ended by the size,
    // checked every 100 rows) and narrow ones (by the row limit) end at different rows, with
    // nulls, and dictionaries small enough to fall back to other encodings
    Table table =
        typesTable(
            "timestamptz",
            Map.of(
                "write.parquet.page-version", pageVersion,
                "write.parquet.page-row-limit", "300",
                "write.parquet.page-size-bytes", "500",
                "write.parquet.dict-size-bytes", "256"),
            3000,
            true);
    String query =
        "SELECT s, date_trunc('hour', b) AS hour_b, count(*) AS n, sum(i) AS si, sum(l) AS sl,"
            + " sum(d) AS sd, min(f) AS minf, max(t) AS maxt, max(dt) AS maxdt, max(s) AS maxs,"
            + " min_by(d, id) AS first_d, count_if(flag) AS nflag FROM lake.market.t GROUP BY 1, 2";
    // When a few hours of the middle day are recomputed, with the null bucket
    long from = micros(LocalDateTime.of(2026, 4, 9, 10, 0));
    BucketRangeSet hours = BucketRangeSet.of(new BucketRange(from, from + 3 * 3_600_000_000L));

    ViewScan.Result result = assertMatchesOracle(table, query, hours, true, 2);

    // Then the rows are read directly from the kept pages only: those of the hours and the nulls
    assertThat(result.stats().rowGroupsRead()).as("row groups read directly").isEqualTo(4);
    assertThat(result.stats().rowsRead()).isBetween(4 * 300L, 4 * 1000L);
  }

  @Test
  void shouldGroupByAStringWhoseDictionaryFallsBackToPlainWithinAColumnChunk()
      throws InvalidViewException {
    // Given a string group key of three values in the first half of each file, and of 400 after
    // it: too many for a dictionary of 512 bytes, so the writer falls back to plain mid-chunk
    Table trades = lake.createTrades("market", "symbols");
    trades
        .updateProperties()
        .set("write.parquet.page-row-limit", "100")
        .set("write.parquet.dict-size-bytes", "512")
        .commit();
    for (int file = 0; file < 2; file++) {
      List<Record> records = trades(file * 4000L, 4000);
      for (int r = records.size() / 2; r < records.size(); r++) {
        records.get(r).setField("symbol", "X" + r % 400);
      }
      lake.append(trades, records);
    }
    String query =
        "SELECT symbol, date_trunc('hour', ts) AS hour_ts, count(*) AS n, sum(quantity) AS volume,"
            + " max(side) AS side FROM lake.market.symbols GROUP BY 1, 2";

    // When it is recomputed by one worker, which meets both files' dictionaries (their symbols in
    // different orders), then it equals the oracle: the keys by dictionary id and by value
    ViewScan.Result result = assertMatchesOracle(trades, query, BucketRangeSet.of(all()), true, 1);

    assertThat(result.stats().rowGroupsRead()).as("row groups read directly").isEqualTo(2);
  }

  @Test
  void shouldScanOnDaemonThreadsNamedForScansOfAPoolItsOwnerShutsDown()
      throws InterruptedException {
    // Given the pool a service builds for its scans
    ExecutorService pool = ViewScan.newExecutor();

    // When a scan worker runs on it
    Thread worker = CompletableFuture.supplyAsync(Thread::currentThread, pool).join();
    pool.shutdownNow();

    // Then it is a daemon thread named for scans, and it ends with the pool
    assertThat(worker.getName()).matches("floe-scan-\\d+");
    assertThat(worker.isDaemon()).isTrue();
    assertThat(pool.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void shouldEqualTheOracleOnTheGenericPathWithWhereAndExpressions() throws InvalidViewException {
    Table table = typesTable("timestamptz");
    String query =
        "SELECT flag, date_trunc('hour', b) AS h, sum(dec) AS total, max(dec) AS top,"
            + " count(bin) AS nb, sum(d * l) AS weighted, max(upper(s)) AS us, count(*) AS n"
            + " FROM lake.market.t WHERE i > -20 AND s <> 's3' GROUP BY 1, 2";

    ViewScan.Result result = assertMatchesOracle(table, query, BucketRangeSet.of(all()), true, 2);

    // Decimal and binary columns go through Iceberg's generic reader.
    assertThat(result.stats().rowGroupsRead()).isZero();
    assertThat(result.stats().rowsRead()).isEqualTo(2000);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "i > 0",
        "i <> 7 AND l <= 600",
        "3 >= i",
        "i BETWEEN -10 AND 10",
        "i IN (1, 2, 3, -4)",
        "i NOT IN (1, 2)",
        "l = 500 OR l < 100",
        "d > 10",
        "d BETWEEN 2.5 AND 20",
        "s = 's1'",
        "s <> 's3'",
        "s > 's2'",
        "s IN ('s0', 's4')",
        "s NOT IN ('s1')",
        "flag",
        "NOT flag",
        "flag IS NOT TRUE",
        "i IS NULL",
        "s IS NOT NULL AND d IS NULL",
        "dt >= DATE '2026-01-14'",
        "dt BETWEEN DATE '2026-01-05' AND DATE '2026-01-20'",
        "dec > 500.5",
        "b >= TIMESTAMP '2026-04-09 12:00:00'",
        "b < TIMESTAMP '2026-04-09 06:30:00.000500'",
        "NOT (i > 0 AND s = 's1')",
        "(i > 10 OR flag) AND NOT (s IN ('s2', 's3') OR d < 5)",
      })
  void shouldEqualTheOracleWithAColumnarWhereOfEachKind(String where) throws InvalidViewException {
    // Given a table with nulls in every column, and a view whose WHERE the columnar filter covers
    String query =
        "SELECT s, date_trunc('hour', b) AS h, count(*) AS n, sum(l) AS sl, max(d) AS maxd,"
            + " min(i) AS mini FROM lake.market.t WHERE "
            + where
            + " GROUP BY 1, 2";

    // When its buckets are recomputed, the WHERE evaluated over the batch vectors
    // Then the rows are the oracle's
    assertWhereMatchesOracle("timestamptz", query, true);
  }

  @ParameterizedTest
  @ValueSource(strings = {"s LIKE 's%' AND i > 0", "i + l > 100", "upper(s) = 'S1' OR flag"})
  void shouldEqualTheOracleWithAWhereLeftToTheRowPath(String where) throws InvalidViewException {
    // Given a view whose WHERE the columnar filter does not cover
    String query =
        "SELECT s, date_trunc('hour', b) AS h, count(*) AS n, sum(l) AS sl"
            + " FROM lake.market.t WHERE "
            + where
            + " GROUP BY 1, 2";

    // When its buckets are recomputed, a boxed row at a time
    // Then the rows are the oracle's all the same
    assertWhereMatchesOracle("timestamptz", query, false);
  }

  @Test
  void shouldEqualTheOracleWithAColumnarWhereAtNanosecondPrecision() throws InvalidViewException {
    // Given nanosecond timestamps, and a WHERE that tells nanoseconds apart
    String query =
        "SELECT s, date_trunc('hour', b) AS h, count(*) AS n"
            + " FROM lake.market.t WHERE b > TIMESTAMP '2026-04-09 12:00:00.000000003'"
            + " OR b = TIMESTAMP '2026-04-08 06:00:00.000000002' GROUP BY 1, 2";

    // When its buckets are recomputed
    // Then the rows are the oracle's
    assertWhereMatchesOracle("timestamp_ns", query, true);
  }

  /**
   * Recomputes every bucket of {@code query} over the types table with its bucket column of type
   * {@code bucketType}, asserting first whether the columnar filter covers its WHERE, then that the
   * rows are the oracle's.
   */
  private void assertWhereMatchesOracle(String bucketType, String query, boolean columnar)
      throws InvalidViewException {
    Table table = typesTable(bucketType);
    View view = View.of(table, bound(table, query));
    assertThat(view.query().aggregateInput().isColumnar()).as("columnar").isEqualTo(columnar);
    assertMatchesOracle(table, query, BucketRangeSet.of(all()), true, 2);
  }

  @Test
  void shouldRecomputeOnlyTheChunksBucketsAndTheNullBucketWhenAsked() throws InvalidViewException {
    Table table = typesTable("timestamp");
    String query = "SELECT date_trunc('hour', b) AS h, count(*) AS n FROM lake.market.t GROUP BY 1";
    long from = micros(LocalDateTime.of(2026, 4, 8, 5, 0));
    long to = micros(LocalDateTime.of(2026, 4, 9, 7, 0));

    assertMatchesOracle(table, query, BucketRangeSet.of(new BucketRange(from, to)), false, 2);
    assertMatchesOracle(table, query, BucketRangeSet.of(new BucketRange(from, to)), true, 1);
  }

  @Test
  void shouldApplyPositionDeletesByFilePosition() throws InvalidViewException {
    Table trades = lake.createTrades("market", "trades");
    lake.append(trades, trades(0, 3000));
    lake.append(trades, trades(3000, 3000));
    lake.deleteByPosition(trades, r -> (Long) r.getField("id") % 7 == 0);

    ViewScan.Result result =
        assertMatchesOracle(trades, SYMBOLS_QUERY, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowGroupsRead()).isEqualTo(2);
    assertThat(result.stats().rowsRead()).isEqualTo(6000 - 858);
  }

  @Test
  void shouldApplyEqualityDeletesThroughTheGenericReader() throws InvalidViewException {
    Table trades = lake.createTrades("market", "trades");
    lake.append(trades, trades(0, 3000));
    lake.deleteByPosition(trades, r -> (Long) r.getField("id") % 7 == 0);
    lake.deleteByEquality(trades, List.of(1L, 2L, 3L, 10L, 2999L));

    ViewScan.Result result =
        assertMatchesOracle(trades, SYMBOLS_QUERY, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowsRead()).isEqualTo(3000 - 429 - 5);
  }

  @Test
  void shouldApplyDeletionVectors() throws Exception {
    Table trades =
        lake.catalog()
            .createTable(
                TableIdentifier.of("market", "trades_v3"),
                IcebergFixture.TRADES,
                PartitionSpec.builderFor(IcebergFixture.TRADES).day("ts").build(),
                Map.of("format-version", "3"));
    lake.append(trades, trades(0, 4000));
    OutputFileFactory files =
        OutputFileFactory.builderFor(trades, 1, 1).format(FileFormat.PUFFIN).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> null);
    try (CloseableIterable<FileScanTask> tasks = trades.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        for (long pos = 0; pos < task.file().recordCount(); pos += 3) {
          writer.delete(task.file().location(), pos, task.spec(), task.file().partition());
        }
      }
    }
    writer.close();
    RowDelta delta = trades.newRowDelta();
    writer.result().deleteFiles().forEach(delta::addDeletes);
    delta.commit();

    ViewScan.Result result =
        assertMatchesOracle(trades, SYMBOLS_QUERY, BucketRangeSet.of(all()), true, 2);

    assertThat(result.stats().rowsRead()).isEqualTo(4000 - 1334);
    assertThat(result.stats().rowGroupsRead()).isEqualTo(1);
  }

  @Test
  void shouldReadOnlyTheRowGroupsOverlappingTheChunkInATimeSortedFile()
      throws InvalidViewException {
    Table trades = lake.createTrades("market", "sorted");
    trades.updateProperties().set("write.parquet.row-group-size-bytes", "4096").commit();
    lake.append(trades, trades(0, 20_000));
    // One minute in the middle of the day the file covers.
    long from = micros(LocalDateTime.of(2026, 4, 8, 12, 0));
    BucketRangeSet minute = BucketRangeSet.of(new BucketRange(from, from + 60_000_000L));

    ViewScan.Result result = assertMatchesOracle(trades, SYMBOLS_QUERY, minute, false, 1);

    assertThat(result.stats().rowGroupsSkipped()).isGreaterThan(10);
    assertThat(result.stats().rowsRead()).isLessThan(20_000 / 10);
  }

  @Test
  void shouldReadOnlyThePagesOverlappingTheChunkInATimeSortedRowGroup()
      throws InvalidViewException {
    Table trades = lake.createTrades("market", "paged");
    trades.updateProperties().set("write.parquet.page-row-limit", "500").commit();
    lake.append(trades, trades(0, 20_000));
    long from = micros(LocalDateTime.of(2026, 4, 8, 12, 0));
    BucketRangeSet minutes = BucketRangeSet.of(new BucketRange(from, from + 3 * 60_000_000L));

    ViewScan.Result result = assertMatchesOracle(trades, SYMBOLS_QUERY, minutes, false, 1);

    // 42 rows in those minutes, in one or two pages of 500 of the one row group.
    assertThat(result.stats().rowGroupsRead()).isEqualTo(1);
    assertThat(result.stats().rowsRead()).isBetween(42L, 1000L);
  }

  @Test
  void shouldApplyPositionDeletesToTheRowsOfPrunedPages() throws InvalidViewException {
    Table trades = lake.createTrades("market", "paged");
    trades.updateProperties().set("write.parquet.page-row-limit", "500").commit();
    lake.append(trades, trades(0, 20_000));
    lake.deleteByPosition(trades, r -> (Long) r.getField("id") % 3 == 0);
    long from = micros(LocalDateTime.of(2026, 4, 8, 12, 0));
    BucketRangeSet minutes = BucketRangeSet.of(new BucketRange(from, from + 10 * 60_000_000L));

    ViewScan.Result result = assertMatchesOracle(trades, SYMBOLS_QUERY, minutes, false, 1);

    assertThat(result.stats().rowsRead()).isLessThan(2000);
  }

  /** Trades {@code [first, first + n)} evenly over 2026-04-08, in time order. */
  private static List<Record> trades(long first, int n) {
    List<Record> records = new ArrayList<>();
    String[] symbols = {"A", "B", "C"};
    for (int i = 0; i < n; i++) {
      long id = first + i;
      long micros = micros(LocalDateTime.of(2026, 4, 8, 0, 0)) + 86_400_000_000L * i / n + id;
      Record r = GenericRecord.create(IcebergFixture.TRADES);
      r.setField("id", id);
      r.setField("symbol", symbols[(int) (id % 3)]);
      r.setField(
          "ts",
          OffsetDateTime.of(LocalDateTime.of(2026, 4, 8, 0, 0), ZoneOffset.UTC)
              .plusNanos((micros - micros(LocalDateTime.of(2026, 4, 8, 0, 0))) * 1000));
      r.setField("price", (id % 97) / 4.0);
      r.setField("quantity", id % 11 == 0 ? null : id % 50);
      r.setField("side", id % 5 == 0 ? null : id % 2 == 0 ? "B" : "S");
      records.add(r);
    }
    return records;
  }

  private static Path localPath(String location) {
    return location.startsWith("file:")
        ? Path.of(java.net.URI.create(location))
        : Path.of(location);
  }

  private static long micros(LocalDateTime at) {
    return at.toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
  }

  private static BucketRange all() {
    return ViewScanOracle.all();
  }

  /**
   * Recomputes the buckets of {@code ranges} (and the null bucket when asked) from the table's
   * files and checks the rows against the oracle's rows of those buckets.
   */
  private ViewScan.Result assertMatchesOracle(
      Table table, String sql, BucketRangeSet ranges, boolean nullBucket, int parallelism)
      throws InvalidViewException {
    View view = View.of(table, bound(table, sql));
    ViewScan.Result result =
        ViewScanOracle.scan(table, view, ranges, nullBucket, storage(), threads, parallelism);

    assertThat(result.rows()).isNotEmpty();
    assertThat(ViewScanOracle.differenceFromOracle(table, view, result.rows(), ranges, nullBucket))
        .as("difference from the oracle")
        .isEmpty();
    return result;
  }

  private static String bound(Table table, String sql) {
    return sql.replace("lake.market.t ", "lake.market." + table.name() + " ");
  }

  /** The same, checked against Floe's row-at-a-time evaluator fed every live row. */
  private ViewScan.Result assertSameRowsAsTheRowEvaluator(
      Table table, String sql, BucketRangeSet ranges, boolean nullBucket, int parallelism)
      throws InvalidViewException {
    View view = View.of(table, bound(table, sql));
    Schema schema = table.schema();
    int bucket = schema.columns().indexOf(schema.findField(view.plan().bucketColumn()));
    RowAggregation expected = RowAggregation.of(view.query(), schema, bucket);
    for (Record record : Oracle.rows(table, table.currentSnapshot().snapshotId())) {
      Object[] row = new Object[schema.columns().size()];
      for (int c = 0; c < row.length; c++) {
        row[c] = IcebergValues.toNative(schema.columns().get(c).type(), record.get(c));
      }
      boolean in =
          row[bucket] == null ? nullBucket : ranges.contains(((Number) row[bucket]).longValue());
      if (in) {
        expected.add(row);
      }
    }
    ViewScan.Result result =
        ViewScanOracle.scan(table, view, ranges, nullBucket, storage(), threads, parallelism);

    List<Object[]> want = expected.results();
    assertThat(want).isNotEmpty();
    assertThat(result.rows()).hasSameSizeAs(want);
    for (int r = 0; r < want.size(); r++) {
      Object[] a = result.rows().get(r);
      Object[] e = want.get(r);
      for (int c = 0; c < e.length; c++) {
        if (e[c] instanceof Double x && a[c] instanceof Double y) {
          assertThat(y).as("row %d column %d", r, c).isCloseTo(x, within(x));
        } else {
          assertThat(a[c]).as("row %d column %d", r, c).isEqualTo(e[c]);
        }
      }
    }
    return result;
  }

  private static org.assertj.core.data.Offset<Double> within(double x) {
    return org.assertj.core.data.Offset.offset(1e-9 * Math.max(1, Math.abs(x)));
  }
}
