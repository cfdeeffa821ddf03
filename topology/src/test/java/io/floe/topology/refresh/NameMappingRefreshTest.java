package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.types.Types;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Source tables whose Parquet files carry no field ids, as Iceberg's {@code migrate} and {@code
 * add_files} leave them: Floe reads them as Iceberg's readers do, through the table's name mapping
 * ({@code schema.name-mapping.default}), or without one by position (Iceberg's fallback ids).
 */
class NameMappingRefreshTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "price", Types.DoubleType.get()),
          Types.NestedField.optional(4, "fee", Types.DoubleType.get()),
          Types.NestedField.optional(5, "amount", Types.DecimalType.of(12, 2)));

  /** Read by Floe's own Parquet reader. */
  private static final String PRICES =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(price) AS price,"
          + " max(fee) AS fee, count(*) AS n FROM lake.market.legacy GROUP BY 1, 2";

  /** A decimal column: read by Iceberg's generic reader. */
  private static final String AMOUNTS =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(amount) AS amount,"
          + " sum(price) AS price, count(*) AS n FROM lake.market.legacy GROUP BY 1, 2";

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table legacy;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    legacy = lake.createTable("market", "legacy", SCHEMA, PartitionSpec.unpartitioned());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReadFilesWithoutFieldIdsThroughTheTablesNameMapping() throws Exception {
    // Given a table with a name mapping, holding a file another tool wrote without field ids, its
    // columns in an order of its own and one the table does not have
    NameMapping mapping = MappingUtil.create(SCHEMA);
    legacy
        .updateProperties()
        .set(TableProperties.DEFAULT_NAME_MAPPING, NameMappingParser.toJson(mapping))
        .commit();
    MessageType foreign =
        org.apache.parquet.schema.Types.buildMessage()
            .optional(PrimitiveTypeName.BINARY)
            .as(LogicalTypeAnnotation.stringType())
            .named("note")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.decimalType(2, 12))
            .named("amount")
            .optional(PrimitiveTypeName.DOUBLE)
            .named("fee")
            .optional(PrimitiveTypeName.DOUBLE)
            .named("price")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS))
            .named("ts")
            .required(PrimitiveTypeName.BINARY)
            .as(LogicalTypeAnnotation.stringType())
            .named("symbol")
            .named("spark_schema");
    addFile(foreign, mapping, List.of(row("A", 1, 10.0, 0.5, 125), row("A", 2, 11.0, 0.25, 1)));
    // And a file Iceberg wrote, with ids, in the same minute.
    long snapshot = lake.append(legacy, List.of(record("A", 3, 12.0, 0.75, "2.00")));

    // When views read by either reader are refreshed
    refresh("prices", PRICES, snapshot);
    refresh("amounts", AMOUNTS, snapshot);

    // Then both read the file's columns by name, as the oracle (DuckDB over Iceberg's reader with
    // the mapping) does: 10 + 11 + 12, the largest fee 0.75, amounts 1.25 + 0.01 + 2.00
    OracleAssertions.assertMatches(target("prices"), legacy, snapshot, PRICES);
    OracleAssertions.assertMatches(target("amounts"), legacy, snapshot, AMOUNTS);
    Record prices = onlyRow(target("prices"));
    assertThat(prices.getField("price")).isEqualTo(33.0);
    assertThat(prices.getField("fee")).isEqualTo(0.75);
    assertThat(onlyRow(target("amounts")).getField("amount")).isEqualTo(new BigDecimal("3.26"));
  }

  @Test
  void shouldReadFilesWithoutFieldIdsByPositionWhenTheTableHasNoNameMapping() throws Exception {
    // Given a table without a name mapping holding a file without field ids in the table's order
    MessageType sameOrder =
        org.apache.parquet.schema.Types.buildMessage()
            .required(PrimitiveTypeName.BINARY)
            .as(LogicalTypeAnnotation.stringType())
            .named("symbol")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS))
            .named("ts")
            .optional(PrimitiveTypeName.DOUBLE)
            .named("price")
            .optional(PrimitiveTypeName.DOUBLE)
            .named("fee")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.decimalType(2, 12))
            .named("amount")
            .named("spark_schema");
    long snapshot =
        addFile(sameOrder, null, List.of(row("A", 1, 10.0, 0.5, 125), row("A", 2, 11.0, 0.25, 1)));

    // When a view is refreshed
    refresh("prices", PRICES, snapshot);

    // Then its columns are read as Iceberg's readers read them: the i-th column has id i
    OracleAssertions.assertMatches(target("prices"), legacy, snapshot, PRICES);
    assertThat(onlyRow(target("prices")).getField("price")).isEqualTo(21.0);
  }

  @Test
  void shouldReadFilesWithoutFieldIdsOnTheDirectParquetPath() throws Exception {
    // Given a file without field ids, its columns out of the table's order, and a name mapping
    NameMapping mapping = MappingUtil.create(SCHEMA);
    MessageType reordered =
        org.apache.parquet.schema.Types.buildMessage()
            .optional(PrimitiveTypeName.DOUBLE)
            .named("fee")
            .optional(PrimitiveTypeName.DOUBLE)
            .named("price")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS))
            .named("ts")
            .required(PrimitiveTypeName.BINARY)
            .as(LogicalTypeAnnotation.stringType())
            .named("symbol")
            .optional(PrimitiveTypeName.INT64)
            .as(LogicalTypeAnnotation.decimalType(2, 12))
            .named("amount")
            .named("spark_schema");
    long snapshot =
        addFile(reordered, mapping, List.of(row("A", 1, 10.0, 0.5, 1), row("B", 59, 20.0, 1, 1)));
    ViewPlan plan = ViewQueryBinder.bind(ViewQueryParser.parse(PRICES), SCHEMA, ZoneOffset.UTC);
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        legacy.newScan().useSnapshot(snapshot).planFiles()) {
      planned.forEach(tasks::add);
    }

    // When the view's rows are computed over it with the table's mapping
    ViewScan.Result result =
        ViewScan.evaluate(
            CompiledQuery.compile(plan),
            new ViewScan.Scan(
                legacy.io(),
                StorageKind.LOCAL,
                SCHEMA,
                tasks,
                plan.requiredColumns(),
                plan.bucketColumn(),
                BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
                true,
                Expressions.alwaysTrue(),
                mapping,
                List.of()),
            Runnable::run,
            1);

    // Then Floe's own reader read its one row group (the generic reader counts none), by name
    assertThat(result.stats().rowGroupsRead()).isEqualTo(1);
    assertThat(result.rows())
        .extracting(r -> List.of(r[0], r[2], r[3], r[4]))
        .containsExactly(List.of("A", 10.0, 0.5, 1L), List.of("B", 20.0, 1.0, 1L));
  }

  @Test
  void shouldRecomputeEveryBucketWhenTheTableGetsANameMappingAfterTheFirstRefresh()
      throws Exception {
    // Given a table without a name mapping holding a file without field ids whose fee and price
    // are in each other's place, refreshed: the file is read by position, fee as price
    long s1 =
        addFile(swapped(), null, List.of(row("A", 1, 10.0, 0.5, 1), row("A", 2, 11.0, 0.25, 1)));
    CompiledView view = compile("prices", PRICES);
    catchUp(view, s1, null);
    assertThat(onlyRow(target("prices")).getField("price")).isEqualTo(0.75);

    // When the table is given a name mapping, which creates no snapshot and makes the file read by
    // name, and a row is appended in another minute
    legacy
        .updateProperties()
        .set(
            TableProperties.DEFAULT_NAME_MAPPING,
            NameMappingParser.toJson(MappingUtil.create(SCHEMA)))
        .commit();
    long s2 = lake.append(legacy, List.of(record("A", 300, 12.0, 0.75, "2.00")));
    RefreshOutcome outcome = catchUp(view, s2, s1);

    // Then every minute is recomputed, saying why, and the view equals the oracle: 10 + 11 at
    // 10:00, no longer 0.5 + 0.25
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(outcome.reason()).contains("name mapping");
    OracleAssertions.assertMatches(target("prices"), legacy, s2, PRICES);
  }

  @Test
  void shouldGiveTheFullRefreshAfterAMappingOnlyChangeAnIdOfItsOwnAndFindItAppliedWhenReplayed()
      throws Exception {
    // Given a file without field ids whose fee and price are in each other's place, read through
    // the table's name mapping by a refresh
    legacy
        .updateProperties()
        .set(
            TableProperties.DEFAULT_NAME_MAPPING,
            NameMappingParser.toJson(MappingUtil.create(SCHEMA)))
        .commit();
    long snapshot =
        addFile(swapped(), null, List.of(row("A", 1, 10.0, 0.5, 1), row("A", 2, 11.0, 0.25, 1)));
    CompiledView view = compile("prices", PRICES);
    RefreshOutcome first = catchUp(view, snapshot, null);

    // When the mapping is removed, which creates no snapshot, and the view refreshes at the same
    // snapshot, then once more (a replay after a crash)
    legacy.updateProperties().remove(TableProperties.DEFAULT_NAME_MAPPING).commit();
    RefreshOutcome second = catchUp(view, snapshot, snapshot);
    RefreshOutcome replayed = catchUp(view, snapshot, snapshot);

    // Then the second refresh recomputed everything under an id of its own, and its replay finds
    // it applied under that id
    assertThat(second.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(second.refreshId().toString()).startsWith(first.refreshId() + "/reads-");
    assertThat(replayed.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(replayed.refreshId()).isEqualTo(second.refreshId());
    assertThat(replayed.target().snapshotId()).isEqualTo(second.target().snapshotId());
    OracleAssertions.assertMatches(target("prices"), legacy, snapshot, PRICES);
    assertThat(onlyRow(target("prices")).getField("price")).isEqualTo(0.75);
  }

  /** Columns of the table, fee and price in each other's place. */
  private static MessageType swapped() {
    return org.apache.parquet.schema.Types.buildMessage()
        .required(PrimitiveTypeName.BINARY)
        .as(LogicalTypeAnnotation.stringType())
        .named("symbol")
        .optional(PrimitiveTypeName.INT64)
        .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS))
        .named("ts")
        .optional(PrimitiveTypeName.DOUBLE)
        .named("fee")
        .optional(PrimitiveTypeName.DOUBLE)
        .named("price")
        .optional(PrimitiveTypeName.INT64)
        .as(LogicalTypeAnnotation.decimalType(2, 12))
        .named("amount")
        .named("spark_schema");
  }

  private static CompiledView compile(String name, String query) throws InvalidViewException {
    return CompiledView.compile(
        new ViewDefinition(
            name, query, TableName.parse("lake.analytics." + name), List.of(), null, null),
        1);
  }

  /** Refreshes {@code view} to {@code snapshot}, detecting the changes since {@code watermark}. */
  private RefreshOutcome catchUp(CompiledView view, long snapshot, Long watermark) {
    return new ViewRefresher(catalog -> lake.catalog())
        .refresh(
            new RefreshRequest(
                view,
                RefreshId.of(view.name(), view.version(), snapshot),
                null,
                watermark,
                new RefreshRequest.CatchUp(DirtyBuckets.none())),
            ViewRefresher.ProgressListener.NONE);
  }

  private void refresh(String name, String query, long snapshot) throws InvalidViewException {
    CompiledView view =
        CompiledView.compile(
            new ViewDefinition(
                name, query, TableName.parse("lake.analytics." + name), List.of(), null, null),
            1);
    new ViewRefresher(catalog -> lake.catalog())
        .refresh(
            RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);
  }

  private Table target(String name) {
    return lake.load("analytics", name);
  }

  private static Record onlyRow(Table table) {
    List<Record> rows = IcebergFixture.readAll(table, table.currentSnapshot().snapshotId());
    assertThat(rows).hasSize(1);
    return rows.get(0);
  }

  /** A row of the foreign file: symbol, second of 10:00, price, fee, amount in cents. */
  private static Object[] row(String symbol, int second, double price, double fee, long cents) {
    return new Object[] {symbol, second, price, fee, cents};
  }

  private static Record record(String symbol, int second, double price, double fee, String amount) {
    GenericRecord record = GenericRecord.create(SCHEMA);
    record.setField("symbol", symbol);
    record.setField("ts", OffsetDateTime.ofInstant(at(second), ZoneOffset.UTC));
    record.setField("price", price);
    record.setField("fee", fee);
    record.setField("amount", new BigDecimal(amount));
    return record;
  }

  private static Instant at(int second) {
    return Instant.parse("2026-04-08T10:00:00Z").plusSeconds(second);
  }

  /**
   * Writes rows with plain parquet-mr, as a tool that knows nothing of Iceberg would (no field
   * ids), and adds the file to the table with its metrics, as {@code add_files} does.
   */
  private long addFile(MessageType schema, NameMapping mapping, List<Object[]> rows)
      throws IOException {
    Path file = Files.createDirectories(dir.resolve("foreign")).resolve("part-" + rows.size());
    SimpleGroupFactory groups = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> writer =
        ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(schema).build()) {
      for (Object[] row : rows) {
        Group group = groups.newGroup();
        group.append("symbol", (String) row[0]);
        long micros = at((Integer) row[1]).toEpochMilli() * 1000;
        group.append("ts", micros);
        group.append("price", (Double) row[2]);
        group.append("fee", (Double) row[3]);
        group.append("amount", (Long) row[4]);
        if (schema.containsField("note")) {
          group.append("note", "from elsewhere");
        }
        writer.write(group);
      }
    }
    assertThat(org.apache.iceberg.parquet.ParquetSchemaUtil.hasIds(schema)).isFalse();
    DataFile data =
        DataFiles.builder(legacy.spec())
            .withPath(file.toUri().toString())
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(Files.size(file))
            .withMetrics(
                ParquetUtil.fileMetrics(
                    legacy.io().newInputFile(file.toUri().toString()),
                    MetricsConfig.forTable(legacy),
                    mapping))
            .build();
    legacy.newAppend().appendFile(data).commit();
    legacy.refresh();
    return legacy.currentSnapshot().snapshotId();
  }
}
