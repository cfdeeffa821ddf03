package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.GatedFileIO;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.RemoteStore;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The refresh protocol at its edges, against a real catalog and the oracle. */
class RefreshEdgesTest {

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

  private static CompiledView compiled(ViewDefinition view, long revision) {
    try {
      return CompiledView.compile(view, revision);
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
  }

  private static ViewDefinition view(String query, RefreshSettings settings) {
    return new ViewDefinition(
        "bars", query, TableName.parse("lake.analytics.bars"), List.of(), null, settings);
  }

  private Table target() {
    return lake.load("analytics", "bars");
  }

  /** The OHLCV view {@code bars}, its target refreshed to source snapshot {@code snapshot}. */
  private CompiledView refreshedAt(long snapshot) {
    CompiledView view = compiled(view(OHLCV, null), 1);
    refresher.refresh(
        RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    return view;
  }

  private long minutes(int count, String hour) {
    List<Record> rows = new ArrayList<>();
    for (int minute = 0; minute < count; minute++) {
      rows.add(
          lake.trade("AAPL", String.format("%s:%02d:05Z", hour, minute), 10.0 + minute, 1L, "B"));
    }
    return lake.append(trades, rows);
  }

  @Test
  void shouldNeverCommitAnOlderDefinitionOverANewerOneNorChangeItsSchema() {
    long s1 = minutes(3, "2026-04-08T10");
    String counted =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
            + " FROM lake.market.trades GROUP BY 1, 2";
    CompiledView newer = compiled(view(counted, null), 7);
    CompiledView older = compiled(view(OHLCV, null), 3);
    refresher = inForce(newer);
    refresher.refresh(
        RefreshRequest.of(newer, s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);

    // A refresh of the older definition, still queued on an instance that lost the view.
    RefreshOutcome late =
        refresher.refresh(
            RefreshRequest.of(older, s1, null, DirtyBuckets.all("view definition changed")),
            ViewRefresher.ProgressListener.NONE);

    assertThat(late.status()).isEqualTo(RefreshOutcome.Status.TARGET_AHEAD);
    assertThat(target().schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("symbol", "minute_ts", "n");
    assertThat(target().properties()).containsEntry(FloeProperties.VIEW_REVISION, "7");
    OracleAssertions.assertMatches(target(), trades, s1, counted);
  }

  @Test
  void shouldRefuseAnOlderDefinitionOnceANewerOnesSchemaChangeLandedBeforeItsFirstDataCommit()
      throws Exception {
    long s1 = minutes(3, "2026-04-08T10");
    String counted =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
            + " FROM lake.market.trades GROUP BY 1, 2";
    String withVolume =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n,"
            + " sum(quantity) AS volume FROM lake.market.trades GROUP BY 1, 2";
    CompiledView older = compiled(view(counted, null), 3);
    CompiledView newer = compiled(view(withVolume, null), 7);
    refresher.refresh(
        RefreshRequest.of(older, s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    // The instance running the newer definition changes the target's schema, then stops before
    // its first data commit.
    TargetTables.prepare(lake.catalog(), newer, newer.bind(trades.schema()).plan());
    long s2 = minutes(2, "2026-04-08T11");

    // The older definition, still in force on an instance that has not seen the newer one: it
    // fails, naming the newer revision, and changes nothing.
    refresher = inForce(older);
    assertThatThrownBy(
            () ->
                refresher.refresh(
                    RefreshRequest.of(older, s2, s1, DirtyBuckets.all("changes")),
                    ViewRefresher.ProgressListener.NONE))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessageContaining("holds revision 7 of its definition");
    // Once that instance sees the newer definition, its queued refresh is skipped.
    refresher = inForce(newer);
    RefreshOutcome late =
        refresher.refresh(
            RefreshRequest.of(older, s2, s1, DirtyBuckets.all("changes")),
            ViewRefresher.ProgressListener.NONE);

    assertThat(late.status()).isEqualTo(RefreshOutcome.Status.TARGET_AHEAD);
    assertThat(target().schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("symbol", "minute_ts", "n", "volume");
    assertThat(target().properties())
        .containsEntry(FloeProperties.VIEW_REVISION, "7")
        .containsEntry(FloeProperties.VIEW_VERSION, newer.version())
        .doesNotContainKey(FloeProperties.SOURCE_SNAPSHOT_ID);
    // The newer definition's first refresh recomputes everything.
    RefreshOutcome first =
        refresher.refresh(
            RefreshRequest.of(newer, s2, s1, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);
    assertThat(first.full()).isTrue();
    assertThat(first.reason()).isEqualTo("view definition changed");
    OracleAssertions.assertMatches(target(), trades, s2, withVolume);
  }

  @Test
  void shouldRefreshWithADefinitionOfTheSameVersionAtASmallerRevisionAndKeepTheTargetsRevision() {
    // Given a target written at revision 7, and the same definition in force at revision 0, as a
    // views topic recreated with fresh offsets gives it
    long s1 = minutes(3, "2026-04-08T10");
    refresher.refresh(
        RefreshRequest.of(compiled(view(OHLCV, null), 7), s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    CompiledView republished = compiled(view(OHLCV, null), 0);
    refresher = inForce(republished);
    long s2 = minutes(2, "2026-04-08T11");

    // When it refreshes
    RefreshOutcome outcome =
        refresher.refresh(
            RefreshRequest.of(
                republished,
                s2,
                s1,
                DirtyBucketDetector.detect(
                        trades, s2, List.of(BucketedView.of(republished)), ManifestWork.LOCAL_READS)
                    .get("bars")),
            ViewRefresher.ProgressListener.NONE);

    // Then it commits, and the target's revision does not go back
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(target().properties()).containsEntry(FloeProperties.VIEW_REVISION, "7");
    assertThat(target().currentSnapshot().summary())
        .containsEntry(FloeProperties.VIEW_REVISION, "7");
    OracleAssertions.assertMatches(target(), trades, s2, OHLCV);
  }

  @Test
  void shouldFailTheDefinitionInForceWhenANewerOtherDefinitionWroteTheTarget() {
    // Given a target written at revision 7, and another definition in force at revision 3
    long s1 = minutes(3, "2026-04-08T10");
    String counted =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
            + " FROM lake.market.trades GROUP BY 1, 2";
    CompiledView newer = compiled(view(counted, null), 7);
    refresher.refresh(
        RefreshRequest.of(newer, s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    // The same rows by another text, so another version: the planner, not the schema, refuses it.
    CompiledView inForce = compiled(view(counted.replace("count(*)", "COUNT(*)"), null), 3);
    refresher = inForce(inForce);

    // When it refreshes, Then it fails saying which revisions and versions meet
    assertThatThrownBy(
            () ->
                refresher.refresh(
                    RefreshRequest.of(
                        inForce, s1, null, DirtyBuckets.all("view definition changed")),
                    ViewRefresher.ProgressListener.NONE))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessageStartingWith(
            "Cannot refresh view bars: the target of view bars holds revision 7 of its definition"
                + " (version "
                + newer.version()
                + "), newer than revision 3 (version "
                + inForce.version()
                + "), which is in force");
    assertThat(target().properties()).containsEntry(FloeProperties.VIEW_VERSION, newer.version());
    OracleAssertions.assertMatches(target(), trades, s1, counted);
  }

  /** A refresher for which {@code view}'s version is the one in force. */
  private ViewRefresher inForce(CompiledView view) {
    return new ViewRefresher(
        name -> lake.catalog(),
        RefreshHooks.NONE,
        v -> v.name().equals(view.name()) && v.version().equals(view.version()));
  }

  @Test
  void shouldResumeAChunkedForcedFullRefreshAfterACrash() {
    long s1 = minutes(20, "2026-04-08T10");
    CompiledView view =
        compiled(
            view(OHLCV, new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(5))), 1);
    refresher.refresh(
        RefreshRequest.of(view, s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    RefreshRequest forced =
        new RefreshRequest(
            view,
            RefreshId.forced(view.name(), view.version(), s1, 1),
            null,
            s1,
            new RefreshRequest.Forced("full refresh requested"));
    assertThatThrownBy(
            () ->
                refresher.refresh(
                    forced,
                    p -> {
                      if (p.chunksDone() == 2) {
                        throw new IllegalStateException("crash after chunk 2");
                      }
                    }))
        .hasMessage("crash after chunk 2");

    List<String> progress = new ArrayList<>();
    RefreshOutcome resumed = refresher.refresh(forced, p -> progress.add(p.toString()));

    assertThat(resumed.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(resumed.work().chunks()).isEqualTo(2);
    assertThat(progress).containsExactly("15/20 buckets (chunk 3/4)", "20/20 buckets (chunk 4/4)");
    assertThat(target().properties())
        .containsEntry(FloeProperties.REFRESH_ID, forced.id().toString())
        .doesNotContainKey(FloeProperties.PROGRESS);
    OracleAssertions.assertMatches(target(), trades, s1, OHLCV);
  }

  @Test
  void shouldRefreshATargetWhoseRecordedRefreshIdIsGarbledAndSaySoOnce() {
    // Given a target whose floe.refresh-id was overwritten with something that is no refresh id
    long s1 = minutes(3, "2026-04-08T10");
    CompiledView view = refreshedAt(s1);
    target().updateProperties().set(FloeProperties.REFRESH_ID, "bars@@garbled").commit();
    long s2 = minutes(2, "2026-04-08T11");

    // When the next change is refreshed
    RefreshOutcome outcome;
    List<String> warnings;
    try (WarningsOf bookmarks = new WarningsOf(Bookmark.class)) {
      outcome =
          refresher.refresh(
              RefreshRequest.of(view, s2, s1, DirtyBuckets.all("appended")),
              ViewRefresher.ProgressListener.NONE);
      warnings = bookmarks.lines();
    }

    // Then the garbled value named no refresh: the refresh commits and records its own id
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(target().properties())
        .containsEntry(FloeProperties.REFRESH_ID, outcome.refreshId().toString());
    OracleAssertions.assertMatches(target(), trades, s2, OHLCV);
    assertThat(warnings)
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .contains(target().name(), "'bars@@garbled'", "not a refresh id");
  }

  @Test
  void shouldReadTheManifestsOfACatchUpOverSeveralSnapshotsAheadOnARemoteStore() throws Exception {
    // Given a target at s1, and since then an append and an overwrite of the source, whose
    // manifests (its own and its parent's it rewrote) a walk reads one after the other
    long s1 = minutes(3, "2026-04-08T10");
    CompiledView view = refreshedAt(s1);
    minutes(2, "2026-04-08T11");
    long s3 =
        lake.overwrite(
            trades, r -> true, List.of(lake.trade("AAPL", "2026-04-08T12:00:05Z", 9.0, 1L, "B")));
    RefreshRequest request = RefreshRequest.of(view, s3, s1, DirtyBuckets.all("caught up"));
    RefreshPlanner.Recompute expected =
        (RefreshPlanner.Recompute)
            plan(request, lake.load("market", "trades"), ManifestWork.LOCAL_READS);

    // When a refresh plans its catch-up over them on a remote store that holds each manifest's
    // request
    ExecutorService remoteReads = ManifestWork.newRemoteReadsPool();
    RemoteStore.Held<RefreshPlanner.Plan> planning;
    try (IcebergFixture floe = IcebergFixture.create(RemoteStore.gated(lake.catalogProperties()))) {
      Table source = RemoteStore.remote(floe.load("market", "trades"));
      ManifestWork manifests = ManifestWork.overlappingRemoteReadsOn(remoteReads, remoteReads);
      planning = RemoteStore.holdingManifests(() -> plan(request, source, manifests));
    } finally {
      remoteReads.shutdownNow();
    }

    // Then their manifests were in flight at once (one after the other when the planner was given
    // LOCAL_READS), each read once, and the plan is the one on local files
    assertThat(planning.inFlight()).isGreaterThanOrEqualTo(2);
    assertThat(GatedFileIO.opensByFile())
        .allSatisfy((manifest, opens) -> assertThat(opens).as(manifest).isOne());
    assertThat(planning.result()).isEqualTo(expected);
    assertThat(expected.dirty().isEmpty()).isFalse();
  }

  /** The plan of {@code request} from the target as it is, as the refresher makes it. */
  private RefreshPlanner.Plan plan(RefreshRequest request, Table source, ManifestWork manifests) {
    Snapshot pinned = source.snapshot(request.sourceSnapshotId());
    CompiledView.Bound bound;
    try {
      bound = request.view().bind(SourceReader.readSchema(source, pinned));
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
    return RefreshPlanner.plan(
        request,
        source,
        pinned,
        Bookmark.of(target()),
        bound.plan().sourceColumns().withNameMapping(ViewScan.nameMapping(source)),
        DimensionChange.NONE,
        BucketedView.of(request.view()),
        bound.plan().bucketing(),
        false,
        manifests);
  }

  @Test
  void shouldWarnOfAGarbledRefreshIdOncePerTargetAndValue() {
    // Given a table whose floe.refresh-id is no refresh id
    trades.updateProperties().set(FloeProperties.REFRESH_ID, "trades@@first").commit();

    // When its bookmark is read three times, then three times more once another such value is
    // written (a refresh, a freshness check, compaction and maintenance each read it)
    List<String> warnings;
    try (WarningsOf bookmarks = new WarningsOf(Bookmark.class)) {
      for (int read = 0; read < 3; read++) {
        assertThat(Bookmark.of(trades).refreshId()).isNull();
      }
      trades.updateProperties().set(FloeProperties.REFRESH_ID, "trades@@second").commit();
      for (int read = 0; read < 3; read++) {
        assertThat(Bookmark.of(trades).refreshId()).isNull();
      }
      warnings = bookmarks.lines();
    }

    // Then each value was said once (on main, at every read)
    assertThat(warnings)
        .satisfiesExactly(
            first -> assertThat(first).contains(trades.name(), "'trades@@first'"),
            second -> assertThat(second).contains(trades.name(), "'trades@@second'"));
  }

  @Test
  void shouldFindAForcedRefreshAppliedWhenTheTargetRecordsItsIdInTheFormOfAnEarlierRelease() {
    // Given a forced full refresh committed, its id recorded as an earlier release wrote it
    // ("/full@<request time>" where this release writes "/full-<n>")
    long s1 = minutes(3, "2026-04-08T10");
    CompiledView view = refreshedAt(s1);
    RefreshRequest forced =
        new RefreshRequest(
            view,
            RefreshId.forced(view.name(), view.version(), s1, 1_700_000_000_000L),
            null,
            s1,
            new RefreshRequest.Forced("full refresh requested"));
    refresher.refresh(forced, ViewRefresher.ProgressListener.NONE);
    String legacy = view.name() + "@" + view.version() + ":" + s1 + "/full@1700000000000";
    target().updateProperties().set(FloeProperties.REFRESH_ID, legacy).commit();
    long before = target().currentSnapshot().snapshotId();

    // When the same forced refresh runs again (a replay after a crash)
    RefreshOutcome replayed = refresher.refresh(forced, ViewRefresher.ProgressListener.NONE);

    // Then the recorded id names it: nothing is recomputed
    assertThat(replayed.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(target().currentSnapshot().snapshotId()).isEqualTo(before);
    assertThat(Bookmark.of(target()).refreshId()).isEqualTo(forced.id());
    OracleAssertions.assertMatches(target(), trades, s1, OHLCV);
  }

  /** The WARN lines one class logs while it is open. */
  private static final class WarningsOf implements AutoCloseable {
    private final ch.qos.logback.classic.Logger logger;
    private final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent>
        appender = new ch.qos.logback.core.read.ListAppender<>();

    WarningsOf(Class<?> type) {
      logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(type);
      appender.start();
      logger.addAppender(appender);
    }

    List<String> lines() {
      return appender.list.stream()
          .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
          .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
          .toList();
    }

    @Override
    public void close() {
      logger.detachAppender(appender);
    }
  }

  @Test
  void shouldStartAChunkedRefreshAgainFromItsFirstChunkWhenItsPlanChanged() {
    long s1 = minutes(20, "2026-04-08T10");
    ViewDefinition definition =
        view(OHLCV, new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(5)));
    CompiledView cutInFive = compiled(definition, 1);
    assertThatThrownBy(
            () ->
                refresher.refresh(
                    RefreshRequest.of(cutInFive, s1, null, DirtyBuckets.none()),
                    p -> {
                      if (p.chunksDone() == 2) {
                        throw new IllegalStateException("crash after chunk 2");
                      }
                    }))
        .hasMessage("crash after chunk 2");

    // The same refresh after a settings change (same version): another chunk plan.
    CompiledView cutInSeven =
        compiled(
            view(OHLCV, new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(7))), 2);
    List<String> progress = new ArrayList<>();
    RefreshOutcome restarted =
        refresher.refresh(
            RefreshRequest.of(cutInSeven, s1, null, DirtyBuckets.none()),
            p -> progress.add(p.toString()));

    assertThat(cutInSeven.version()).isEqualTo(cutInFive.version());
    assertThat(restarted.work().chunks()).isEqualTo(3);
    assertThat(progress)
        .containsExactly(
            "7/20 buckets (chunk 1/3)", "14/20 buckets (chunk 2/3)", "20/20 buckets (chunk 3/3)");
    assertThat(target().properties()).doesNotContainKey(FloeProperties.PROGRESS);
    OracleAssertions.assertMatches(target(), trades, s1, OHLCV);
  }

  @Test
  void shouldReportARefreshFoundAppliedWithTheRangesAndModeItCommitted() {
    long s1 = minutes(3, "2026-04-08T10");
    CompiledView view = refreshedAt(s1);
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:01:30Z", 3.0, 2L, "S")));
    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                trades, s2, List.of(BucketedView.of(view)), ManifestWork.LOCAL_READS)
            .get("bars");
    RefreshRequest request = RefreshRequest.of(view, s2, s1, dirty);
    RefreshOutcome committed = refresher.refresh(request, ViewRefresher.ProgressListener.NONE);

    // Run again after a crash between the Iceberg commit and the Kafka transaction.
    RefreshOutcome replayed = refresher.refresh(request, ViewRefresher.ProgressListener.NONE);

    assertThat(replayed.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(replayed.mode()).isEqualTo(committed.mode());
    assertThat(replayed.recomputed()).isEqualTo(committed.recomputed());
    assertThat(replayed.recomputed().ranges().ranges()).hasSize(1);
    assertThat(replayed.target().snapshotId()).isEqualTo(committed.target().snapshotId());
    assertThat(replayed.work().rowsWritten()).isEqualTo(committed.work().rowsWritten());
  }

  @Test
  void shouldPlanAgainAndNotFailWhenAnotherInstanceWinsTheCommitRace() {
    long s1 = minutes(3, "2026-04-08T10");
    CompiledView view = compiled(view(OHLCV, null), 1);
    RefreshRequest request = RefreshRequest.of(view, s1, null, DirtyBuckets.none());
    ViewRefresher other = new ViewRefresher(name -> lake.catalog());
    ViewRefresher racing =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void filesWritten(String view, ChunkId chunk) {
                // The other instance commits the same refresh first.
                other.refresh(request, ViewRefresher.ProgressListener.NONE);
              }
            });

    RefreshOutcome lost = racing.refresh(request, ViewRefresher.ProgressListener.NONE);

    assertThat(lost.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(lost.full()).isTrue();
    OracleAssertions.assertMatches(target(), trades, s1, OHLCV);
  }

  @Test
  void shouldKeepSumsOfRealExactAcrossManyAppends() {
    // Given a view summing a real and a double column, first refreshed over one row
    Table source = amounts();
    String query =
        "SELECT symbol, date_trunc('day', ts) AS day, sum(amount) AS amount,"
            + " sum(weight) AS weight, count(*) AS n FROM lake.market.amounts GROUP BY 1, 2";
    CompiledView view = amountsView(query);
    // 2^24: the float that no longer holds +1, so that +1 +1 must be summed before rounding;
    // likewise 1e16 for a double.
    long snapshot = lake.append(source, List.of(row(source.schema(), 16_777_216f, 1e16)));
    refresher.refresh(
        RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);

    // When rows of +1 are appended and refreshed one at a time
    int appends = 4;
    for (int i = 1; i <= appends; i++) {
      long previous = snapshot;
      snapshot = lake.append(source, List.of(row(source.schema(), 1f, 1.0)));
      RefreshOutcome outcome = refreshDay(view, snapshot, previous);

      // Then each refresh recomputes the day from all its rows: floating-point sums are never
      // folded into their target values, which could not keep the precision a recompute keeps
      assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
      assertThat(outcome.work().rowsRead()).isEqualTo(i + 1);
    }

    // And the sums are those of a recompute, rounded once: exact, as the oracle says too
    Record bar = onlyRow(target());
    assertThat(bar.getField("amount")).isEqualTo((float) (16_777_216d + appends));
    assertThat(bar.getField("weight"))
        .isEqualTo(new BigDecimal(1e16).add(BigDecimal.valueOf(appends)).doubleValue());
    OracleAssertions.assertMatches(target(), source, snapshot, query);
  }

  @Test
  void shouldFoldDoubleSumsThroughCompensatedStatesSoThatTheyEqualARecompute() {
    // Given a view whose only floating-point aggregate is a sum of doubles
    Table source = amounts();
    String query =
        "SELECT symbol, date_trunc('day', ts) AS day, sum(weight) AS weight, count(*) AS n"
            + " FROM lake.market.amounts GROUP BY 1, 2";
    CompiledView view = amountsView(query);
    long snapshot = lake.append(source, List.of(row(source.schema(), 0f, 1e16)));
    refresher.refresh(
        RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);

    // When two rows of 1.0 are appended, each refreshed on its own
    RefreshOutcome outcome = null;
    for (int i = 0; i < 2; i++) {
      long previous = snapshot;
      snapshot = lake.append(source, List.of(row(source.schema(), 0f, 1.0)));
      outcome = refreshDay(view, snapshot, previous);
    }

    // Then each was folded into the day's partial state, a compensated sum, and the day's sum is
    // 1e16 + 2 as a recompute gives it (folding 1.0 into a plain 1e16 twice rounds to 1e16 each
    // time)
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.DELTA);
    assertThat(onlyRow(target()).getField("weight")).isEqualTo(1e16 + 2);
    OracleAssertions.assertMatches(target(), source, snapshot, query);
  }

  private Table amounts() {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "symbol", Types.StringType.get()),
            Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(3, "amount", Types.FloatType.get()),
            Types.NestedField.optional(4, "weight", Types.DoubleType.get()));
    return lake.createTable("market", "amounts", schema, PartitionSpec.unpartitioned());
  }

  private static CompiledView amountsView(String query) {
    return compiled(
        new ViewDefinition(
            "bars", query, TableName.parse("lake.analytics.bars"), List.of(), null, null),
        1);
  }

  /** Refreshes the day of {@link #row}'s timestamp, dirtied by the snapshots after previous. */
  private RefreshOutcome refreshDay(CompiledView view, long snapshot, long previous) {
    Bucketing day = Bucketing.utc(Granularity.DAY, BucketColumnType.TIMESTAMPTZ);
    long at = BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse("2026-04-08T10:00:00Z"));
    return refresher.refresh(
        RefreshRequest.of(
            view, snapshot, previous, DirtyBuckets.of(BucketRangeSet.of(day.bucketOf(at)), false)),
        ViewRefresher.ProgressListener.NONE);
  }

  private static Record onlyRow(Table table) {
    List<Record> rows = IcebergFixture.readAll(table, table.currentSnapshot().snapshotId());
    assertThat(rows).hasSize(1);
    return rows.get(0);
  }

  private static Record row(Schema schema, float amount, double weight) {
    GenericRecord record = GenericRecord.create(schema);
    record.setField("symbol", "A");
    record.setField(
        "ts", OffsetDateTime.ofInstant(Instant.parse("2026-04-08T10:00:00Z"), ZoneOffset.UTC));
    record.setField("amount", amount);
    record.setField("weight", weight);
    return record;
  }
}
