package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The target's layout, write modes, compaction and engine metadata (issue 14): the oracle after
 * every refresh and every compaction, copy-on-write and merge-on-read.
 */
class TargetWritesTest {

  private static final String OHLCV_1M = TradeViews.OHLCV_1M;
  private static final String OHLCV_1H =
      """
      SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts,
             min_by(open, minute_ts) AS open, max(high) AS high, min(low) AS low,
             max_by(close, minute_ts) AS close, sum(volume) AS volume,
             sum(trade_count) AS trade_count
      FROM lake.analytics.ohlcv_1m
      GROUP BY 1, 2
      """;

  /** Decomposable: appends take the delta path. */
  private static final String VOLUME =
      """
      SELECT symbol, side, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume,
             count(*) AS trades, min(price) AS low, max(price) AS high
      FROM lake.market.trades
      GROUP BY 1, 2, 3
      """;

  private static final String DAILY =
      """
      SELECT symbol, date_trunc('day', ts) AS day_ts, count(*) AS trades
      FROM lake.market.trades GROUP BY 1, 2
      """;
  private static final String WEEKLY =
      """
      SELECT symbol, date_trunc('week', ts) AS week_ts, count(*) AS trades
      FROM lake.market.trades GROUP BY 1, 2
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final Map<String, Long> watermarks = new HashMap<>();
  private final Random random = new Random(7);
  private final List<String> checked = new ArrayList<>();

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private Table tableOf(String name) {
    return lake.catalog().loadTable(TableName.parse(name).identifier());
  }

  /**
   * A refresher that checks the oracle at each commit that makes the whole target reflect the
   * source (a refresh's last chunk) and after each compaction, before anything else happens.
   */
  private ViewRefresher checkingRefresher(Map<String, ViewDefinition> views) {
    return new ViewRefresher(
        name -> lake.catalog(),
        new RefreshHooks() {
          @Override
          public void committed(String view, ChunkId chunk) {
            if (chunk.isLast()) {
              check(views.get(view), chunk.refresh().sourceSnapshotId(), "refresh");
            }
          }

          @Override
          public void compacted(String view, RefreshId refresh) {
            check(views.get(view), refresh.sourceSnapshotId(), "compaction");
          }
        });
  }

  private void check(ViewDefinition view, long sourceSnapshot, String what) {
    Table source = tableOf(compiled(view).source().toString());
    OracleAssertions.assertMatches(target(view), source, sourceSnapshot, view.query());
    checked.add(what + " " + view.name());
  }

  private static CompiledView compiled(ViewDefinition view) {
    return ViewRefresherTest.compiled(view);
  }

  /** Detects and refreshes the view for every snapshot of its source since its watermark. */
  private RefreshOutcome maintain(ViewRefresher refresher, ViewDefinition view)
      throws InvalidViewException {
    Table source = tableOf(compiled(view).source().toString());
    Snapshot current = source.currentSnapshot();
    Long watermark = watermarks.get(view.name());
    DirtyBuckets dirty = ViewRefresherTest.detected(source, watermark, current.snapshotId(), view);
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(view, current.snapshotId(), watermark, dirty),
            ViewRefresher.ProgressListener.NONE);
    watermarks.put(view.name(), current.snapshotId());
    OracleAssertions.assertMatches(target(view), source, current.snapshotId(), view.query());
    return outcome;
  }

  private List<Record> randomTrades(int n, String day, int hourFrom, int hourTo) {
    return lake.randomTrades(random, n, day, hourFrom, hourTo);
  }

  private static void tune(Table target, WriteMode mode) {
    var update =
        target
            .updateProperties()
            .set(TargetCompaction.MIN_INPUT_FILES, "3")
            .set(TargetCompaction.MAX_DELETE_FILES, "2");
    if (mode == WriteMode.MERGE_ON_READ) {
      update.set("write.merge.mode", "merge-on-read");
    }
    update.commit();
  }

  @ParameterizedTest
  @EnumSource(WriteMode.class)
  void shouldEqualTheOracleAfterEveryRefreshAndEveryCompaction(WriteMode mode)
      throws InvalidViewException {
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewDefinition hour = view("ohlcv_1h", OHLCV_1H);
    ViewDefinition volume = view("volume", VOLUME);
    Map<String, ViewDefinition> views =
        Map.of(minute.name(), minute, hour.name(), hour, volume.name(), volume);
    ViewRefresher refresher = checkingRefresher(views);
    List<ViewDefinition> all = List.of(minute, volume, hour);

    // Given targets made by a first full refresh, then switched to the mode under test
    lake.append(trades, randomTrades(300, "2026-04-06", 8, 18));
    lake.append(trades, randomTrades(300, "2026-04-07", 8, 18));
    for (ViewDefinition view : all) {
      maintain(refresher, view);
      tune(target(view), mode);
    }

    // When the source sees every kind of commit, refreshed one at a time
    List<RefreshOutcome> outcomes = new ArrayList<>();
    for (int round = 0; round < 6; round++) {
      lake.append(trades, randomTrades(5, "2026-04-07", 17, 18));
      outcomes.addAll(step(refresher, all));
    }
    lake.appendFilePerRow(trades, randomTrades(4, "2026-04-06", 9, 10));
    outcomes.addAll(step(refresher, all));
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")));
    outcomes.addAll(step(refresher, all));
    lake.deleteByEquality(trades, List.of(1L, 2L, 3L, 150L, 380L));
    outcomes.addAll(step(refresher, all));
    lake.overwrite(
        trades,
        r -> "ORCL".equals(r.getField("symbol")) && (Long) r.getField("quantity") < 30,
        randomTrades(10, "2026-04-08", 0, 3));
    outcomes.addAll(step(refresher, all));
    lake.compact(trades);
    outcomes.addAll(step(refresher, all));
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", null, 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T01:00:00Z", 10.0, 5L, null)));
    outcomes.addAll(step(refresher, all));
    for (int round = 0; round < 4; round++) {
      lake.append(trades, randomTrades(3, "2026-04-08", 1 + round, 2 + round));
      outcomes.addAll(step(refresher, all));
    }

    // Then the oracle held after every refresh and compaction, and compactions ran
    assertThat(outcomes).anyMatch(o -> o.compaction() != null);
    assertThat(checked).anyMatch(c -> c.startsWith("compaction"));
    if (mode == WriteMode.MERGE_ON_READ) {
      assertThat(outcomes)
          .anyMatch(o -> o.target().snapshotId() != null && hasDeletes(target(minute), o));
    }
  }

  private List<RefreshOutcome> step(ViewRefresher refresher, List<ViewDefinition> views)
      throws InvalidViewException {
    List<RefreshOutcome> outcomes = new ArrayList<>();
    for (ViewDefinition view : views) {
      outcomes.add(maintain(refresher, view));
    }
    return outcomes;
  }

  private static boolean hasDeletes(Table target, RefreshOutcome outcome) {
    Snapshot snapshot = target.snapshot(outcome.target().snapshotId());
    return snapshot != null
        && Integer.parseInt(snapshot.summary().getOrDefault("added-delete-files", "0")) > 0;
  }

  @Test
  void shouldPartitionTargetsByACoarserUnitOfTheBucketUnlessTheViewSaysOtherwise()
      throws InvalidViewException {
    lake.append(trades, randomTrades(20, "2026-04-06", 8, 18));
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewDefinition daily = view("daily", DAILY);
    ViewDefinition weekly = view("weekly", WEEKLY);
    ViewDefinition own =
        new ViewDefinition(
            "own",
            OHLCV_1M,
            TableName.parse("lake.analytics.own"),
            List.of(TargetPartitionField.parse("bucket(4, symbol)")),
            null,
            null);

    for (ViewDefinition view : List.of(minute, daily, weekly, own)) {
      maintain(refresher, view);
    }

    assertThat(target(minute).spec().fields())
        .singleElement()
        .hasToString("1000: minute_ts_day: day(2)");
    assertThat(target(daily).spec().fields().get(0).transform()).hasToString("month");
    assertThat(target(weekly).spec().isUnpartitioned()).isTrue();
    assertThat(target(own).spec().fields())
        .singleElement()
        .satisfies(f -> assertThat(f.transform().toString()).isEqualTo("bucket[4]"));
  }

  @ParameterizedTest
  @EnumSource(WriteMode.class)
  void shouldWriteAColumnOfEveryOutputTypeAsTheOracleReadsIt(WriteMode mode)
      throws InvalidViewException {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(3, "s", Types.StringType.get()),
            Types.NestedField.optional(4, "i", Types.IntegerType.get()),
            Types.NestedField.optional(5, "f", Types.FloatType.get()),
            Types.NestedField.optional(6, "d", Types.DoubleType.get()),
            Types.NestedField.optional(7, "dec", Types.DecimalType.of(10, 2)),
            Types.NestedField.optional(8, "dt", Types.DateType.get()),
            Types.NestedField.optional(10, "flag", Types.BooleanType.get()),
            Types.NestedField.optional(11, "local", Types.TimestampType.withoutZone()));
    Table source =
        lake.catalog()
            .createTable(
                org.apache.iceberg.catalog.TableIdentifier.of("market", "types"),
                schema,
                org.apache.iceberg.PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"));
    String query =
        """
        SELECT s, date_trunc('day', ts) AS day_ts, count(*) AS n, max(i) AS max_i,
               min(f) AS min_f, sum(d) AS sum_d, sum(dec) AS sum_dec, max(dec) AS max_dec,
               max(dt) AS max_dt, bool_and(flag) AS all_flag,
               max(ts) AS last_ts, min(local) AS first_local, min(s) AS min_s
        FROM lake.market.types GROUP BY 1, 2
        """;
    ViewDefinition view = view("types_" + mode.name().toLowerCase(), query);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    lake.append(source, typedRows(schema, 0, 400, 20));
    maintain(refresher, view);
    tune(target(view), mode);

    // Rows for two of the twenty days: the files holding the other days keep their rows.
    lake.append(source, typedRows(schema, 400, 60, 2));
    RefreshOutcome outcome = maintain(refresher, view);

    assertThat(target(view).snapshot(outcome.target().snapshotId()).summary())
        .containsKey(FloeProperties.REFRESH_MODE)
        .doesNotContainEntry(FloeProperties.REFRESH_MODE, "full");
  }

  /** {@code n} rows of every type, over {@code days} days of April 2026, a tenth null. */
  private List<Record> typedRows(Schema schema, long first, int n, int days) {
    List<Record> rows = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      long id = first + r;
      org.apache.iceberg.data.GenericRecord row =
          org.apache.iceberg.data.GenericRecord.create(schema);
      java.time.OffsetDateTime at =
          java.time.OffsetDateTime.parse("2026-04-01T00:00:00Z")
              .plusDays(random.nextInt(days))
              .plusSeconds(random.nextInt(86_400));
      row.setField("id", id);
      row.setField("ts", at);
      row.setField("s", orNull("s" + random.nextInt(4)));
      row.setField("i", orNull(random.nextInt(1000) - 500));
      row.setField("f", orNull(random.nextInt(400) / 8.0f));
      row.setField("d", orNull(random.nextInt(4000) / 16.0));
      row.setField("dec", orNull(java.math.BigDecimal.valueOf(random.nextInt(100_000), 2)));
      row.setField("dt", orNull(java.time.LocalDate.of(2026, 1, 1).plusDays(random.nextInt(300))));
      row.setField("flag", orNull(random.nextInt(5) > 0));
      row.setField("local", orNull(at.toLocalDateTime().plusMinutes(random.nextInt(60))));
      rows.add(row);
    }
    return rows;
  }

  private Object orNull(Object value) {
    return random.nextInt(10) == 0 ? null : value;
  }

  @Test
  void shouldWriteMeasuresWithoutADictionaryUnlessTheTableAsksForOne() throws Exception {
    // Prices of few values: a dictionary Parquet would keep for the measures.
    List<Record> few = randomTrades(500, "2026-04-06", 8, 18);
    few.forEach(r -> r.setField("price", (double) (((Long) r.getField("id")) % 3)));
    lake.append(trades, few);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    maintain(refresher, minute);
    Map<String, Set<Encoding>> before = encodings(target(minute));

    // The table's own settings win over Floe's defaults.
    target(minute)
        .updateProperties()
        .set("write.parquet.dict-encoding-enabled.column.high", "true")
        .commit();
    List<Record> more = randomTrades(500, "2026-04-06", 8, 18);
    more.forEach(r -> r.setField("price", (double) (((Long) r.getField("id")) % 3)));
    lake.append(trades, more);
    maintain(refresher, minute);
    Map<String, Set<Encoding>> after = encodings(target(minute));

    assertThat(before.get("high")).doesNotContain(Encoding.PLAIN_DICTIONARY);
    assertThat(before.get("open")).doesNotContain(Encoding.PLAIN_DICTIONARY);
    assertThat(before.get("symbol")).contains(Encoding.PLAIN_DICTIONARY);
    assertThat(after.get("high")).contains(Encoding.PLAIN_DICTIONARY);
    assertThat(after.get("low")).doesNotContain(Encoding.PLAIN_DICTIONARY);
  }

  /** The encodings of each column over the data files the target's last commit added. */
  private static Map<String, Set<Encoding>> encodings(Table target) throws IOException {
    Map<String, Set<Encoding>> encodings = new HashMap<>();
    for (org.apache.iceberg.DataFile file : target.currentSnapshot().addedDataFiles(target.io())) {
      try (ParquetFileReader reader =
          ParquetFileReader.open(
              new LocalInputFile(Path.of(java.net.URI.create(file.location()))))) {
        for (BlockMetaData block : reader.getFooter().getBlocks()) {
          for (ColumnChunkMetaData chunk : block.getColumns()) {
            encodings
                .computeIfAbsent(chunk.getPath().toDotString(), k -> new HashSet<>())
                .addAll(chunk.getEncodings());
          }
        }
      }
    }
    return encodings;
  }

  @Test
  void shouldSplitALargeRecomputeAcrossWritersAtBucketBoundaries() throws Exception {
    assumeTrue(
        Runtime.getRuntime().availableProcessors() > 1, "one core: a single writer, no split");
    // Given six days of trades: more minutes of every symbol than one writer takes
    Instant day = Instant.parse("2026-04-06T00:00:00Z");
    lake.append(
        trades,
        new io.floe.testing.workload.Trades(11)
            .between(day, day.plus(java.time.Duration.ofDays(6)), 300_000));
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);

    // When the first refresh recomputes it
    RefreshOutcome outcome = maintain(new ViewRefresher(name -> lake.catalog()), minute);

    // Then its rows were written by several writers, each bucket in one file only (the oracle
    // agreed in maintain)
    assertThat(outcome.work().rowsWritten())
        .isGreaterThan(2L * BucketReplacement.MIN_ROWS_PER_WRITER);
    Table target = target(minute);
    List<long[]> bounds = new ArrayList<>();
    int bucketId = target.schema().findField("minute_ts").fieldId();
    try (var tasks = target.newScan().includeColumnStats().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        bounds.add(
            new long[] {
              org.apache.iceberg.types.Conversions.<Long>fromByteBuffer(
                  target.schema().findType(bucketId), task.file().lowerBounds().get(bucketId)),
              org.apache.iceberg.types.Conversions.<Long>fromByteBuffer(
                  target.schema().findType(bucketId), task.file().upperBounds().get(bucketId))
            });
      }
    }
    assertThat(bounds).hasSizeGreaterThan(1);
    bounds.sort(java.util.Comparator.comparingLong(b -> b[0]));
    for (int i = 1; i < bounds.size(); i++) {
      assertThat(bounds.get(i)[0]).isGreaterThan(bounds.get(i - 1)[1]);
    }
  }

  @Test
  void shouldKeepThePartitioningOfAnExistingTarget() throws InvalidViewException {
    // Given an unpartitioned target, as earlier releases made them
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    lake.append(trades, randomTrades(20, "2026-04-06", 8, 18));
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    maintain(refresher, minute);
    Table target = target(minute);
    target.updateSpec().removeField("minute_ts_day").commit();
    lake.append(trades, randomTrades(20, "2026-04-06", 8, 18));

    // When it refreshes again
    maintain(refresher, minute);

    // Then it keeps its spec
    assertThat(target(minute).spec().isUnpartitioned()).isTrue();
  }

  @Test
  void shouldRewriteOnlyTheRowsOfTheDirtyBucketWhenTheCurrentMinuteRefreshes()
      throws InvalidViewException {
    // Given a day of history in one target
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    lake.append(trades, randomTrades(2000, "2026-04-06", 0, 23));
    maintain(refresher, minute);

    for (WriteMode mode : WriteMode.values()) {
      if (mode == WriteMode.MERGE_ON_READ) {
        target(minute).updateProperties().set("write.merge.mode", "merge-on-read").commit();
      }
      for (int i = 0; i < 5; i++) {
        // When the current minute changes again and again
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-06T23:30:0" + i + "Z", 10.0 + i, 1L, "B"),
                lake.trade("MSFT", "2026-04-06T23:30:1" + i + "Z", 20.0 + i, 2L, "S")));
        RefreshOutcome outcome = maintain(refresher, minute);

        // Then each refresh writes the rows of that minute and nothing else
        Snapshot committed = target(minute).snapshot(outcome.target().snapshotId());
        assertThat(Long.parseLong(committed.summary().get("added-records")))
            .as("%s refresh %d", mode, i)
            .isEqualTo(outcome.work().rowsWritten())
            .isEqualTo(2);
        assertThat(committed.summary().getOrDefault("deleted-records", "0"))
            .isIn("0", "2", "4", "6", "8");
      }
    }
  }

  @Test
  void shouldRewriteOnlyTheNewestMinuteWhenItChangesAgainAfterAFirstRun()
      throws InvalidViewException {
    // Given a first run over a day of history, whose newest minute is the current one
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    List<Record> history = randomTrades(2000, "2026-04-06", 0, 23);
    lake.append(trades, history);
    maintain(refresher, minute);
    java.time.OffsetDateTime newest =
        history.stream()
            .map(r -> (java.time.OffsetDateTime) r.getField("ts"))
            .max(java.util.Comparator.naturalOrder())
            .orElseThrow()
            .truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
    long rowsOfNewest =
        history.stream()
            .filter(
                r ->
                    ((java.time.OffsetDateTime) r.getField("ts"))
                        .truncatedTo(java.time.temporal.ChronoUnit.MINUTES)
                        .equals(newest))
            .map(r -> r.getField("symbol"))
            .distinct()
            .count();

    // When a trade lands in that minute again
    lake.append(
        trades, List.of(lake.trade("AAPL", newest.plusSeconds(59).toString(), 10.0, 1L, "B")));
    RefreshOutcome outcome = maintain(refresher, minute);

    // Then copy-on-write rewrites that minute's rows, not the day's file they were written with
    Snapshot committed = target(minute).snapshot(outcome.target().snapshotId());
    assertThat(Long.parseLong(committed.summary().get("deleted-records"))).isEqualTo(rowsOfNewest);
    assertThat(Long.parseLong(committed.summary().get("added-records")))
        .isEqualTo(outcome.work().rowsWritten());
  }

  @Test
  void shouldKeepTheMinuteBeforeTheCurrentOneOutOfCompactionForTradesJustPastTheBoundary()
      throws InvalidViewException {
    // Given a copy-on-write 1-minute view refreshed minute by minute, compacting any two files
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    for (int m = 30; m <= 32; m++) {
      lake.append(
          trades,
          List.of(
              lake.trade("AAPL", "2026-04-06T23:" + m + ":01Z", 10.0, 1L, "B"),
              lake.trade("MSFT", "2026-04-06T23:" + m + ":02Z", 20.0, 2L, "S")));
      maintain(refresher, minute);
      if (m == 30) {
        target(minute).updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();
      }
    }

    // When a trade stamped in the minute before the current one arrives just after the boundary
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-06T23:31:59.900Z", 11.0, 1L, "B")));
    RefreshOutcome outcome = maintain(refresher, minute);

    // Then the refresh writes that minute's rows and nothing else: no file holding other minutes
    // was rewritten
    Snapshot committed = target(minute).snapshot(outcome.target().snapshotId());
    assertThat(Long.parseLong(committed.summary().get("added-records")))
        .isEqualTo(outcome.work().rowsWritten())
        .isEqualTo(2);
    assertThat(committed.summary().get("deleted-records")).isEqualTo("2");
  }

  @Test
  void shouldRecordTheRefreshStateAndTrinosFreshnessKeysAndCarryThemThroughCompaction()
      throws Exception {
    // Given a view refreshed once
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    long first = lake.append(trades, randomTrades(50, "2026-04-06", 8, 9));
    long before = System.currentTimeMillis();
    maintain(refresher, minute);

    // Then its commit carries the proposal's refresh state and Trino's keys
    Map<String, String> summary = target(minute).currentSnapshot().summary();
    JsonNode state = new ObjectMapper().readTree(summary.get(EngineMetadata.REFRESH_STATE));
    assertThat(state.get("view-version-id").asLong()).isEqualTo(0);
    assertThat(state.get("refresh-start-timestamp-ms").asLong()).isGreaterThanOrEqualTo(before);
    JsonNode sourceState = state.get("source-states").get(0);
    assertThat(sourceState.get("type").asText()).isEqualTo("table");
    assertThat(sourceState.get("namespace").get(0).asText()).isEqualTo("market");
    assertThat(sourceState.get("name").asText()).isEqualTo("trades");
    assertThat(sourceState.has("catalog")).isFalse();
    assertThat(sourceState.get("uuid").asText()).isEqualTo(trades.uuid().toString());
    assertThat(sourceState.get("snapshot-id").asLong()).isEqualTo(first);
    assertThat(summary).containsEntry(EngineMetadata.DEPENDS_ON_TABLES, "market.trades=" + first);
    assertThat(Instant.parse(summary.get(EngineMetadata.TRINO_QUERY_START_TIME)).toEpochMilli())
        .isEqualTo(state.get("refresh-start-timestamp-ms").asLong());

    // When small files pile up and a compaction runs
    target(minute).updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();
    RefreshOutcome outcome = null;
    for (int i = 0; i < 4 && (outcome == null || outcome.compaction() == null); i++) {
      lake.append(trades, randomTrades(5, "2026-04-06", 10 + i, 11 + i));
      outcome = maintain(refresher, minute);
    }

    // Then the compaction is a replace that changes no bookmark and carries the keys forward
    assertThat(outcome.compaction()).isNotNull();
    Table target = target(minute);
    Snapshot compaction = target.currentSnapshot();
    Snapshot refreshed = target.snapshot(outcome.target().snapshotId());
    assertThat(compaction.snapshotId()).isEqualTo(outcome.compaction().targetSnapshotId());
    assertThat(compaction.operation()).isEqualTo(DataOperations.REPLACE);
    assertThat(compaction.parentId()).isEqualTo(refreshed.snapshotId());
    for (String key :
        List.of(
            EngineMetadata.REFRESH_STATE,
            EngineMetadata.DEPENDS_ON_TABLES,
            EngineMetadata.TRINO_QUERY_START_TIME,
            FloeProperties.SOURCE_SNAPSHOT_ID,
            FloeProperties.VIEW_VERSION)) {
      assertThat(compaction.summary()).containsEntry(key, refreshed.summary().get(key));
    }
    assertThat(compaction.summary())
        .doesNotContainKey(FloeProperties.REFRESH_ID)
        .containsEntry(TargetCompaction.COMPACTION_AFTER, outcome.refreshId().toString());
    assertThat(target.properties())
        .containsEntry(
            FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(outcome.source().snapshotId()));
    // A chained view finds nothing to refresh in it.
    ViewDefinition hour = view("ohlcv_1h", OHLCV_1H);
    assertThat(
            DirtyBucketDetector.detect(
                    target,
                    compaction.snapshotId(),
                    List.of(BucketedView.of(CompiledView.compile(hour, 0))),
                    ManifestWork.LOCAL_READS)
                .get(hour.name())
                .isEmpty())
        .isTrue();
  }

  @ParameterizedTest
  @EnumSource(WriteMode.class)
  void shouldLoseNothingWhenTheProcessStopsBetweenACompactionAndTheNextRefresh(WriteMode mode)
      throws InvalidViewException {
    // Given a target whose next refresh compacts it, and a process that stops right after
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    lake.append(trades, randomTrades(100, "2026-04-06", 8, 12));
    maintain(new ViewRefresher(name -> lake.catalog()), minute);
    tune(target(minute), mode);
    target(minute).updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();
    ViewRefresher crashing =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void compacted(String view, RefreshId refresh) {
                throw new IllegalStateException("the process stops");
              }
            });
    RuntimeException stopped = null;
    for (int i = 0; i < 4 && stopped == null; i++) {
      long snapshot = lake.append(trades, randomTrades(5, "2026-04-06", 12 + i, 13 + i));
      Long watermark = watermarks.get(minute.name());
      DirtyBuckets dirty =
          DirtyBucketDetector.detect(
                  trades,
                  snapshot,
                  List.of(BucketedView.of(CompiledView.compile(minute, 0))),
                  ManifestWork.LOCAL_READS)
              .get(minute.name());
      RefreshRequest request = ViewRefresherTest.request(minute, snapshot, watermark, dirty);
      try {
        crashing.refresh(request, ViewRefresher.ProgressListener.NONE);
        watermarks.put(minute.name(), snapshot);
      } catch (IllegalStateException e) {
        stopped = e;
        assertThat(e).hasMessage("the process stops");
        // When the restarted process runs the same refresh again, then the next one
        RefreshOutcome again =
            new ViewRefresher(name -> lake.catalog())
                .refresh(request, ViewRefresher.ProgressListener.NONE);
        assertThat(again.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
        watermarks.put(minute.name(), snapshot);
      }
    }
    assertThat(stopped).isNotNull();
    assertThat(target(minute).currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
    OracleAssertions.assertMatches(
        target(minute), trades, trades.currentSnapshot().snapshotId(), OHLCV_1M);
    lake.append(trades, randomTrades(5, "2026-04-06", 8, 16));
    RefreshOutcome next = maintain(new ViewRefresher(name -> lake.catalog()), minute);

    // Then the view is exact and was refreshed incrementally
    assertThat(next.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(next.full()).isFalse();
  }
}
