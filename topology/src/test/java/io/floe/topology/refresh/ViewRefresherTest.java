package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Refreshes against a real JDBC catalog with real Parquet files, checked against the oracle. */
class ViewRefresherTest {

  private static final String OHLCV = TradeViews.OHLCV_1M;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  private static ViewDefinition chunked(String name, String query, int chunkBuckets) {
    return new ViewDefinition(
        name,
        query,
        TableName.parse("lake.analytics." + name),
        List.of(),
        null,
        new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(chunkBuckets)));
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private RefreshOutcome refresh(
      ViewDefinition view, long snapshot, Long watermark, DirtyBuckets dirty) {
    return refresher.refresh(
        request(view, snapshot, watermark, dirty), ViewRefresher.ProgressListener.NONE);
  }

  /** A refresh of detected changes, of the view compiled at revision 0. */
  static RefreshRequest request(
      ViewDefinition view, long snapshot, Long watermark, DirtyBuckets dirty) {
    return RefreshRequest.of(compiled(view), snapshot, watermark, dirty);
  }

  /**
   * The view's dirty buckets over the source's snapshots after {@code watermark} up to {@code
   * current}, as detection finds them; none without a watermark (a first refresh is full).
   */
  static DirtyBuckets detected(Table source, Long watermark, long current, ViewDefinition view) {
    DirtyBuckets dirty = DirtyBuckets.none();
    if (watermark != null) {
      for (long id :
          org.apache.iceberg.util.SnapshotUtil.snapshotIdsBetween(source, watermark, current)) {
        dirty =
            dirty.union(
                DirtyBucketDetector.detect(
                        source,
                        id,
                        List.of(BucketedView.of(compiled(view))),
                        ManifestWork.LOCAL_READS)
                    .get(view.name()));
      }
    }
    return dirty;
  }

  /**
   * {@code refresher}'s refresh of the view at {@code snapshot} of its source, of the changes
   * detected since {@code watermark} ({@link #detected}); a first refresh without one.
   */
  static RefreshOutcome refreshDetected(
      ViewRefresher refresher, Table source, ViewDefinition view, long snapshot, Long watermark) {
    DirtyBuckets dirty = detected(source, watermark, snapshot, view);
    return refresher.refresh(
        request(view, snapshot, watermark, dirty), ViewRefresher.ProgressListener.NONE);
  }

  static CompiledView compiled(ViewDefinition view) {
    try {
      return CompiledView.compile(view, 0);
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
  }

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  private static DirtyBuckets minutesTouched(String... instants) {
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ);
    BucketRangeSet ranges = BucketRangeSet.empty();
    for (String instant : instants) {
      ranges = ranges.add(minute.bucketOf(micros(instant)));
    }
    return DirtyBuckets.of(ranges, false);
  }

  private List<Record> someTrades() {
    return List.of(
        lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
        lake.trade("AAPL", "2026-04-08T10:00:30Z", 12.0, 1L, "S"),
        lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B"),
        lake.trade("AAPL", "2026-04-08T10:01:10Z", 13.0, 3L, "S"),
        lake.trade("AAPL", "2026-04-09T09:00:00Z", 14.0, 3L, "S"));
  }

  @Test
  void shouldFullyRefreshOnFirstRunAndRecordTheBookmark() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);

    RefreshOutcome outcome = refresh(view, s1, null, DirtyBuckets.none());

    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.full()).isTrue();
    assertThat(outcome.reason()).isEqualTo("first refresh of the view");
    assertThat(outcome.work().rowsWritten()).isEqualTo(4);
    Table target = target(view);
    OracleAssertions.assertMatches(target, trades, s1, OHLCV);
    assertThat(target.properties())
        .containsEntry(FloeProperties.VIEW, "ohlcv_1m")
        .containsEntry(FloeProperties.VIEW_VERSION, view.version())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(s1))
        .doesNotContainKey(FloeProperties.PROGRESS);
    Snapshot committed = target.currentSnapshot();
    assertThat(committed.snapshotId()).isEqualTo(outcome.target().snapshotId());
    assertThat(committed.summary())
        .containsEntry(FloeProperties.VIEW, "ohlcv_1m")
        .containsEntry(FloeProperties.VIEW_VERSION, view.version())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(s1))
        .containsEntry(
            FloeProperties.REFRESH_ID, RefreshId.of("ohlcv_1m", view.version(), s1).toString());
    assertThat(target.sortOrder().fields()).hasSize(2);
  }

  @Test
  void shouldRecomputeOnlyTheDirtyBucketsAndKeepTheRest() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());

    long s2 =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B"),
                lake.trade("IBM", "2026-04-08T11:30:00Z", 50.0, 1L, "S")));
    RefreshOutcome outcome =
        refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:45Z", "2026-04-08T11:30:00Z"));

    assertThat(outcome.full()).isFalse();
    assertThat(outcome.work().rowsWritten()).isEqualTo(3);
    assertThat(outcome.work().rowsRemoved()).isEqualTo(2);
    // Only the files of the two dirty minutes (and their neighbours in the same file) are read.
    assertThat(outcome.work().rowsRead()).isLessThan(7);
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  private static final String VOLUME =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume,
             count(*) AS trade_count, min(price) AS low, max(price) AS high,
             count_if(side = 'B') AS buys, bool_and(quantity > 2) AS all_large
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  @Test
  void shouldFoldAppendedRowsIntoADecomposableViewWithoutRereadingTheirBuckets() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("volume", VOLUME);
    refresh(view, s1, null, DirtyBuckets.none());

    // Into an existing group, a new group of an existing bucket, and a new bucket.
    long s2 =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B"),
                lake.trade("IBM", "2026-04-08T10:00:50Z", 50.0, 4L, "S"),
                lake.trade("IBM", "2026-04-08T11:30:00Z", 51.0, 1L, "S")));
    RefreshOutcome outcome =
        refresh(
            view,
            s2,
            s1,
            minutesTouched("2026-04-08T10:00:45Z", "2026-04-08T10:00:50Z", "2026-04-08T11:30:00Z"));

    assertThat(outcome.full()).isFalse();
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(3);
    assertThat(outcome.work().rowsRemoved()).isEqualTo(1);
    assertThat(outcome.work().rowsWritten()).isEqualTo(3);
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(FloeProperties.REFRESH_MODE, "delta");
    OracleAssertions.assertMatches(target(view), trades, s2, VOLUME);

    // A delete cannot be folded in: its buckets are recomputed.
    long s3 = lake.deleteByPosition(trades, r -> "MSFT".equals(r.getField("symbol")));
    refresh(view, s3, s2, minutesTouched("2026-04-08T10:00:40Z"));
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(FloeProperties.REFRESH_MODE, "incremental");
    OracleAssertions.assertMatches(target(view), trades, s3, VOLUME);

    // Appends around a compaction, caught up at once: only the appended rows are read.
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:02Z", 8.0, 9L, "B")));
    lake.compact(trades);
    long s6 =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:01:30Z", 97.0, 1L, "S")));
    outcome = refresh(view, s6, s3, minutesTouched("2026-04-08T10:00:02Z", "2026-04-08T10:01:30Z"));
    assertThat(outcome.work().rowsRead()).isEqualTo(2);
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(FloeProperties.REFRESH_MODE, "delta");
    OracleAssertions.assertMatches(target(view), trades, s6, VOLUME);
  }

  @Test
  void shouldExpireOldTargetSnapshotsAfterRefreshesAsTheTargetsPropertiesSay() throws Exception {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("volume", VOLUME);
    refresh(view, s1, null, DirtyBuckets.none());
    assertThat(target(view).properties())
        .containsEntry("history.expire.max-snapshot-age-ms", "900000")
        .containsEntry("history.expire.min-snapshots-to-keep", "50")
        .containsEntry("write.metadata.delete-after-commit.enabled", "true");
    // An operator shortens the retention on the table.
    target(view)
        .updateProperties()
        .set("history.expire.max-snapshot-age-ms", "1")
        .set("history.expire.min-snapshots-to-keep", "2")
        .commit();

    long previous = s1;
    for (int i = 0; i < 5; i++) {
      Thread.sleep(5);
      String ts = "2026-04-08T10:0" + i + ":15Z";
      long next = lake.append(trades, List.of(lake.trade("IBM", ts, 50.0 + i, 1L, "S")));
      refresh(view, next, previous, minutesTouched(ts));
      previous = next;
    }

    Table target = target(view);
    assertThat(count(target.snapshots())).isLessThanOrEqualTo(3);
    OracleAssertions.assertMatches(target, trades, previous, VOLUME);
  }

  @Test
  void shouldRecomputeTheBucketsOfAViewThatIsNotDecomposable() {
    String medians =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts,"
            + " approx_percentile(price, 0.5) AS median, count(*) AS trades"
            + " FROM lake.market.trades GROUP BY 1, 2";
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("medians", medians);
    refresh(view, s1, null, DirtyBuckets.none());

    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B")));
    RefreshOutcome outcome = refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:45Z"));

    // A percentile needs every row of the bucket and keeps no partial state: they are read again.
    assertThat(outcome.delta()).isFalse();
    assertThat(outcome.work().rowsRead()).isGreaterThan(1);
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(FloeProperties.REFRESH_MODE, "incremental");
    OracleAssertions.assertMatches(target(view), trades, s2, medians);
  }

  @Test
  void shouldRemoveAGroupThatVanishedFromItsBucket() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());

    long s2 = lake.deleteByPosition(trades, r -> "MSFT".equals(r.getField("symbol")));
    refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:40Z"));

    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
    assertThat(Oracle.actual(target(view))).noneMatch(row -> row.contains("MSFT"));
  }

  @Test
  void shouldNotApplyTheSameRefreshTwice() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 1.0, 1L, "B")));
    RefreshOutcome first = refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:50Z"));
    long targetSnapshot = target(view).currentSnapshot().snapshotId();

    RefreshOutcome replay = refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:50Z"));

    assertThat(replay.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(replay.target().snapshotId()).isEqualTo(first.target().snapshotId());
    assertThat(target(view).currentSnapshot().snapshotId()).isEqualTo(targetSnapshot);
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  @Test
  void shouldNeverMoveTheViewBackwards() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 1.0, 1L, "B")));
    refresh(view, s2, s1, minutesTouched("2026-04-08T10:00:50Z"));

    RefreshOutcome stale = refresh(view, s1, null, DirtyBuckets.all("replayed"));

    assertThat(stale.status()).isEqualTo(RefreshOutcome.Status.TARGET_AHEAD);
    assertThat(target(view).properties())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(s2));
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  @Test
  void shouldCommitAFullRefreshInChunksThatMoveTheBookmarkOnlyAtTheEnd() {
    List<Record> rows = new ArrayList<>();
    for (int minute = 0; minute < 30; minute++) {
      rows.add(
          lake.trade(
              "AAPL", String.format("2026-04-08T10:%02d:05Z", minute), 10.0 + minute, 1L, "B"));
    }
    long s1 = lake.append(trades, rows);
    ViewDefinition view = chunked("ohlcv_1m", OHLCV, 7);
    List<String> progress = new ArrayList<>();

    RefreshOutcome outcome =
        refresher.refresh(
            request(view, s1, null, DirtyBuckets.none()),
            p -> {
              Table t = target(view);
              progress.add(p + " " + t.properties().get(FloeProperties.SOURCE_SNAPSHOT_ID));
            });

    assertThat(outcome.work().chunks()).isEqualTo(5);
    assertThat(progress)
        .containsExactly(
            "7/30 buckets (chunk 1/5) null",
            "14/30 buckets (chunk 2/5) null",
            "21/30 buckets (chunk 3/5) null",
            "28/30 buckets (chunk 4/5) null",
            "30/30 buckets (chunk 5/5) " + s1);
    assertThat(target(view).properties()).doesNotContainKey(FloeProperties.PROGRESS);
    OracleAssertions.assertMatches(target(view), trades, s1, OHLCV);
  }

  @Test
  void shouldResumeAChunkedRefreshAfterACrashWithoutRedoingCommittedChunks() {
    List<Record> rows = new ArrayList<>();
    for (int minute = 0; minute < 20; minute++) {
      rows.add(
          lake.trade(
              "AAPL", String.format("2026-04-08T10:%02d:05Z", minute), 10.0 + minute, 1L, "B"));
    }
    long s1 = lake.append(trades, rows);
    ViewDefinition view = chunked("ohlcv_1m", OHLCV, 5);
    RefreshRequest request = request(view, s1, null, DirtyBuckets.none());

    assertThatThrownBy(
            () ->
                refresher.refresh(
                    request,
                    p -> {
                      if (p.chunksDone() == 2) {
                        throw new IllegalStateException("crash after chunk 2");
                      }
                    }))
        .hasMessage("crash after chunk 2");
    assertThat(target(view).properties())
        .hasEntrySatisfying(
            FloeProperties.PROGRESS, p -> assertThat(p).startsWith(request.id() + "#1/4;plan="))
        .doesNotContainKey(FloeProperties.SOURCE_SNAPSHOT_ID);
    int snapshotsBefore = count(target(view).snapshots());

    List<String> progress = new ArrayList<>();
    RefreshOutcome resumed = refresher.refresh(request, p -> progress.add(p.toString()));

    assertThat(resumed.work().chunks()).isEqualTo(2);
    assertThat(progress).containsExactly("15/20 buckets (chunk 3/4)", "20/20 buckets (chunk 4/4)");
    assertThat(count(target(view).snapshots())).isEqualTo(snapshotsBefore + 2);
    OracleAssertions.assertMatches(target(view), trades, s1, OHLCV);
  }

  @Test
  void shouldFullyRefreshAndChangeTheSchemaWhenTheViewChanges() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition v1 = view("bars", OHLCV);
    refresh(v1, s1, null, DirtyBuckets.none());
    String changed =
        """
        SELECT symbol, date_trunc('hour', ts) AS minute_ts, count(*) AS trade_count,
               sum(price * quantity) / sum(quantity) AS vwap
        FROM lake.market.trades GROUP BY 1, 2
        """;
    ViewDefinition v2 = view("bars", changed);

    RefreshOutcome outcome = refresh(v2, s1, s1, DirtyBuckets.none());

    assertThat(outcome.full()).isTrue();
    assertThat(outcome.reason()).isEqualTo("view definition changed");
    assertThat(target(v2).schema().columns().stream().map(c -> c.name()).toList())
        .containsExactly("symbol", "minute_ts", "trade_count", "vwap");
    OracleAssertions.assertMatches(target(v2), trades, s1, changed);
  }

  @Test
  void shouldRefuseANonEmptyTargetThatFloeDidNotCreate() {
    long s1 = lake.append(trades, someTrades());
    Table foreign = lake.createTrades("analytics", "taken");
    lake.append(foreign, List.of(lake.trade("X", "2026-01-01T00:00:00Z", 1.0, 1L, "B")));
    ViewDefinition view =
        ViewDefinition.of("taken", OHLCV, TableName.parse("lake.analytics.taken"));

    assertThatThrownBy(() -> refresh(view, s1, null, DirtyBuckets.none()))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessageContaining(
            "Target lake.analytics.taken exists, holds rows and was not created by Floe");
    assertThat(
            lake.catalog()
                .loadTable(TableIdentifier.of("analytics", "taken"))
                .currentSnapshot()
                .snapshotId())
        .isEqualTo(foreign.currentSnapshot().snapshotId());
  }

  @Test
  void shouldRefuseATargetHoldingRowsWhoseSnapshotSummaryCountsNone() throws Exception {
    long s1 = lake.append(trades, someTrades());
    Table foreign = lake.createTrades("analytics", "taken");
    lake.append(foreign, List.of(lake.trade("X", "2026-01-01T00:00:00Z", 1.0, 1L, "B")));
    // Written by a writer that keeps no totals in its snapshot summaries.
    foreign = withoutSummaryTotals(foreign);
    assertThat(foreign.currentSnapshot().summary()).doesNotContainKey("total-records");
    ViewDefinition view =
        ViewDefinition.of("taken", OHLCV, TableName.parse("lake.analytics.taken"));

    assertThatThrownBy(() -> refresh(view, s1, null, DirtyBuckets.none()))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessage(
            "Target lake.analytics.taken exists, holds rows and was not created by Floe: refusing"
                + " to use it; drop it or choose another target for view 'taken'");
    assertUntouched(foreign);
  }

  @Test
  void shouldRefuseAnEmptyTableThatFloeDidNotCreateForTheView() throws Exception {
    long s1 = lake.append(trades, someTrades());
    Table foreign = lake.createTrades("analytics", "taken");
    // Its rows were all deleted: snapshots, but no live file.
    lake.append(foreign, List.of(lake.trade("X", "2026-01-01T00:00:00Z", 1.0, 1L, "B")));
    lake.deleteFiles(foreign, row -> true);
    assertThat(foreign.currentSnapshot()).isNotNull();
    ViewDefinition view =
        ViewDefinition.of("taken", OHLCV, TableName.parse("lake.analytics.taken"));

    assertThatThrownBy(() -> refresh(view, s1, null, DirtyBuckets.none()))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessage(
            "Target lake.analytics.taken exists and was not created by Floe: refusing to use it;"
                + " drop it or choose another target for view 'taken'");
    assertUntouched(foreign);
  }

  /** The table is as it was: same snapshot, schema and properties, not marked as a view's. */
  private void assertUntouched(Table before) {
    Table after = lake.catalog().loadTable(TableIdentifier.of("analytics", "taken"));
    assertThat(after.currentSnapshot().snapshotId())
        .isEqualTo(before.currentSnapshot().snapshotId());
    assertThat(after.schema().sameSchema(before.schema())).isTrue();
    assertThat(after.properties()).isEqualTo(before.properties());
    assertThat(after.properties()).doesNotContainKey(FloeProperties.VIEW);
  }

  /**
   * The table with its snapshots' summaries rewritten without Iceberg's totals, as a writer that
   * does not keep them leaves them.
   */
  private Table withoutSummaryTotals(Table table) throws Exception {
    TableOperations ops = ((HasTableOperations) table).operations();
    TableMetadata base = ops.refresh();
    ObjectNode json = (ObjectNode) JsonUtil.mapper().readTree(TableMetadataParser.toJson(base));
    for (JsonNode snapshot : json.withArray("snapshots")) {
      ObjectNode summary = (ObjectNode) snapshot.get("summary");
      List<String> totals = new ArrayList<>();
      summary.fieldNames().forEachRemaining(name -> totals.add(name));
      totals.removeIf(name -> !name.startsWith("total-"));
      summary.remove(totals);
    }
    ops.commit(base, TableMetadataParser.fromJson(JsonUtil.mapper().writeValueAsString(json)));
    table.refresh();
    return table;
  }

  @Test
  void shouldFailClearlyWhenTheSourceNoLongerFitsTheQuery() {
    long s1 = lake.append(trades, someTrades());
    trades.updateSchema().renameColumn("quantity", "qty").commit();
    long s2 = lake.append(trades, List.of());

    assertThatThrownBy(() -> refresh(view("ohlcv_1m", OHLCV), s2, null, DirtyBuckets.none()))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessageContaining("the query no longer fits source")
        .hasMessageContaining("unknown column: quantity");
    assertThat(s1).isNotEqualTo(s2);
  }

  @Test
  void shouldRecordWhatTheViewReadsWithoutAFullRefreshWhenATargetOfAnEarlierReleaseHasNoRecord() {
    // Given a target refreshed by a release that recorded no source columns
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    target(view).updateProperties().remove(FloeProperties.SOURCE_COLUMNS).commit();

    // When the source changes in one minute and the view refreshes
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 9.0, 2L, "B")));
    RefreshOutcome outcome = refresh(view, s2, s1, detected(trades, s1, s2, view));

    // Then only that minute is recomputed, and the identity is recorded from then on
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(target(view).properties())
        .containsEntry(
            FloeProperties.SOURCE_COLUMNS,
            "price=4:double quantity=5:long symbol=2:string ts=3:timestamptz");
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  @Test
  void shouldRecomputeEveryBucketWhenTwoColumnsTheViewReadsSwapNames() {
    // Given a view over two double columns, refreshed
    trades.updateSchema().addColumn("bid", Types.DoubleType.get()).commit();
    trades.updateSchema().addColumn("ask", Types.DoubleType.get()).commit();
    String spread =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, max(bid) AS best_bid,"
            + " min(ask) AS best_ask FROM lake.market.trades GROUP BY 1, 2";
    long s1 =
        lake.append(
            trades,
            List.of(
                quote("2026-04-08T10:00:01Z", 10.0, 11.0),
                quote("2026-04-08T10:01:01Z", 12.0, 13.0)));
    ViewDefinition view = view("spread", spread);
    refresh(view, s1, null, DirtyBuckets.none());

    // When bid and ask swap names (the query still resolves, to the other columns) and one
    // minute changes
    trades.updateSchema().renameColumn("bid", "tmp").commit();
    trades.updateSchema().renameColumn("ask", "bid").commit();
    trades.updateSchema().renameColumn("tmp", "ask").commit();
    long s2 = lake.append(trades, List.of(quote("2026-04-08T10:01:30Z", 14.0, 15.0)));
    RefreshOutcome outcome = refresh(view, s2, s1, detected(trades, s1, s2, view));

    // Then every minute is recomputed, and equals the oracle
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(outcome.reason()).contains("column ask is field").contains("column bid is field");
    OracleAssertions.assertMatches(target(view), trades, s2, spread);
  }

  /** A trade with {@code first} in field 7 and {@code second} in field 8, whatever their names. */
  private Record quote(String ts, double first, double second) {
    Record trade = lake.trade("AAPL", ts, 1.0, 1L, "B");
    Record record = org.apache.iceberg.data.GenericRecord.create(trades.schema());
    for (Types.NestedField field : IcebergFixture.TRADES.columns()) {
      record.setField(field.name(), trade.getField(field.name()));
    }
    record.setField(trades.schema().findColumnName(7), first);
    record.setField(trades.schema().findColumnName(8), second);
    return record;
  }

  @Test
  void shouldRecomputeTheWholeWeekWhenOneDayChanges() {
    String weekly =
        "SELECT symbol, date_trunc('week', ts) AS week, sum(quantity) AS volume,"
            + " count(DISTINCT quantity) AS sizes FROM lake.market.trades GROUP BY 1, 2";
    long s1 =
        lake.append(
            trades,
            List.of(
                lake.trade("A", "2026-04-06T10:00:00Z", 1.0, 1L, "B"),
                lake.trade("A", "2026-04-07T10:00:00Z", 1.0, 2L, "B"),
                lake.trade("A", "2026-04-14T10:00:00Z", 1.0, 4L, "B")));
    ViewDefinition view = view("weekly", weekly);
    refresh(view, s1, null, DirtyBuckets.none());

    long s2 = lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 8L, "B")));
    Bucketing week = Bucketing.utc(Granularity.WEEK, BucketColumnType.TIMESTAMPTZ);
    long touched = micros("2026-04-08T10:00:00Z");
    RefreshOutcome outcome =
        refresh(
            view, s2, s1, DirtyBuckets.of(BucketRangeSet.of(week.expand(touched, touched)), false));

    // The day-partitioned source is read for the whole week, not just the new day (a distinct count
    // is not decomposable and keeps no partial state, so the appended row cannot be folded in).
    assertThat(outcome.work().rowsRead()).isEqualTo(3);
    OracleAssertions.assertMatches(target(view), trades, s2, weekly);
  }

  @Test
  void shouldCatchUpFromTheTargetBookmarkWhenFloeLostItsState() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 1.0, 1L, "B")));

    // A fresh Floe knows nothing of the view: everything may be dirty, but the bookmark says s1.
    RefreshOutcome outcome = refresh(view, s2, null, DirtyBuckets.all("view state was lost"));

    assertThat(outcome.full()).isFalse();
    // Only the 10:00 minute is recomputed: its AAPL and MSFT bars.
    assertThat(outcome.work().rowsWritten()).isEqualTo(2);
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  @Test
  void shouldRecomputeARequestedRangeTheTargetAlreadyReflectsOnceAndOnlyThatRange() {
    // Given a target in step with s1, then rows written into it behind Floe's back: one in a
    // bucket with source rows, one in a bucket without, one outside the range asked for
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    Record row =
        IcebergFixture.readAll(target(view), target(view).currentSnapshot().snapshotId()).get(0);
    List<Record> outsiders = new ArrayList<>();
    for (String minute :
        List.of("2026-04-08T10:00:00Z", "2026-04-08T10:30:00Z", "2026-04-09T09:00:00Z")) {
      Record outsider = row.copy();
      outsider.setField("symbol", "ZZZZ");
      outsider.setField("minute_ts", java.time.OffsetDateTime.parse(minute));
      outsiders.add(outsider);
    }
    lake.append(target(view), outsiders);
    RefreshRequest ranged =
        new RefreshRequest(
            compiled(view),
            RefreshId.ranged("ohlcv_1m", view.version(), s1, 1),
            null,
            s1,
            new RefreshRequest.Ranged(
                DirtyBuckets.none(),
                List.of(
                    TimeRange.parse(
                        "2026-04-08T10:00:00Z",
                        "2026-04-08T11:00:00Z",
                        java.time.ZoneOffset.UTC))));

    // When the hour is asked for at s1, which the target reflects
    RefreshOutcome outcome = refresher.refresh(ranged, ViewRefresher.ProgressListener.NONE);

    // Then that hour is recomputed, not by the delta path, and the outside rows in it are gone
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges().ranges())
        .containsExactly(
            new io.floe.topology.bucket.BucketRange(
                micros("2026-04-08T10:00:00Z"), micros("2026-04-08T11:00:00Z")));
    assertThat(Oracle.actual(target(view)).stream().filter(r -> r.contains("ZZZZ")))
        .hasSize(1)
        .allMatch(r -> r.get(1).equals("ts:" + micros("2026-04-09T09:00:00Z")));
    long repaired = target(view).currentSnapshot().snapshotId();

    // When it runs again (a replay)
    RefreshOutcome replay = refresher.refresh(ranged, ViewRefresher.ProgressListener.NONE);

    // Then it was applied already
    assertThat(replay.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(target(view).currentSnapshot().snapshotId()).isEqualTo(repaired);
  }

  @Test
  void shouldRecomputeARequestedRangeRatherThanFoldAppendsIntoTheRowsItRepairs() {
    // Given a row written into the target behind Floe's back, then an append to the source
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("volume", VOLUME);
    refresh(view, s1, null, DirtyBuckets.none());
    Record outsider =
        IcebergFixture.readAll(target(view), target(view).currentSnapshot().snapshotId())
            .get(0)
            .copy();
    outsider.setField("symbol", "ZZZZ");
    lake.append(target(view), List.of(outsider));
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 1.0, 1L, "B")));

    // When the day is asked for at s2
    RefreshOutcome outcome =
        refresher.refresh(
            new RefreshRequest(
                compiled(view),
                RefreshId.ranged("volume", view.version(), s2, 1),
                null,
                s1,
                new RefreshRequest.Ranged(
                    DirtyBuckets.none(),
                    List.of(
                        TimeRange.parse("2026-04-08", "2026-04-10", java.time.ZoneOffset.UTC)))),
            ViewRefresher.ProgressListener.NONE);

    // Then it recomputes instead of adding the append to what is there
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    OracleAssertions.assertMatches(target(view), trades, s2, VOLUME);
  }

  @Test
  void shouldRecomputeEverythingWhenAFullRefreshIsForced() {
    long s1 = lake.append(trades, someTrades());
    ViewDefinition view = view("ohlcv_1m", OHLCV);
    refresh(view, s1, null, DirtyBuckets.none());
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 1.0, 1L, "B")));

    RefreshOutcome outcome =
        refresher.refresh(
            new RefreshRequest(
                compiled(view),
                RefreshId.forced("ohlcv_1m", view.version(), s2, 1),
                null,
                s1,
                new RefreshRequest.Forced("requested")),
            ViewRefresher.ProgressListener.NONE);

    assertThat(outcome.full()).isTrue();
    assertThat(outcome.work().rowsWritten()).isEqualTo(4);
    OracleAssertions.assertMatches(target(view), trades, s2, OHLCV);
  }

  private static int count(Iterable<?> items) {
    int n = 0;
    for (Object ignored : items) {
      n++;
    }
    return n;
  }
}
