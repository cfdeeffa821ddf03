package io.floe.topology.maintain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.floe.schemas.RefreshMode;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.maintain.ViewMaintainer.Lookup;
import io.floe.topology.maintain.ViewMaintainer.Next;
import io.floe.topology.maintain.ViewMaintainer.Report;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefreshException;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoredDirty;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The maintain stage's decisions for one view, on real states, without Kafka: what starts next,
 * what an outcome or a failure does to the state, and what is reported.
 */
class ViewMaintainerTest {

  private static final long NOW = 1_000_000L;
  private static final String VIEW = "ohlcv_1m";
  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final TableName TARGET = TableName.parse("lake.analytics.ohlcv_1m");
  private static final SourceSnapshot PINNED = new SourceSnapshot("uuid-1", 42L, 7L, NOW - 500);

  private final ViewIndex index = new ViewIndex();
  private final ViewMaintainer maintainer = new ViewMaintainer(index, Duration.ofMinutes(5));

  @BeforeEach
  void setUp() {
    index.put(ViewDefinition.of(VIEW, TradeViews.OHLCV_1M, TARGET), 1);
  }

  private CompiledView inForce() {
    return index.view(VIEW).orElseThrow();
  }

  /** A new view whose source's current snapshot was looked up: its first refresh is due. */
  private ViewState pinnedNewView() {
    ViewState state = maintainer.synced(inForce(), null, NOW);
    assertThat(maintainer.next(VIEW, state, NOW)).isEqualTo(new Next.Pin(TRADES));
    assertThat(maintainer.looked(VIEW, state, new Lookup.Current(PINNED), NOW)).isEmpty();
    return state;
  }

  /** A new view whose first refresh runs. */
  private ViewState refreshing() {
    ViewState state = pinnedNewView();
    assertThat(maintainer.next(VIEW, state, NOW)).isInstanceOf(Next.Refresh.class);
    return state;
  }

  private static RefreshOutcome outcome(RefreshOutcome.Status status, RefreshId refreshId) {
    boolean committed = status == RefreshOutcome.Status.COMMITTED;
    return new RefreshOutcome(
        status,
        RefreshOutcome.Mode.FULL,
        "first refresh of the view",
        refreshId,
        DirtyBuckets.all("first refresh of the view"),
        null,
        PINNED,
        List.of(),
        new RefreshOutcome.Target(
            "uuid-2",
            committed ? 99L : null,
            committed ? NOW + 100 : null,
            "file:/target/metadata/v2.metadata.json"),
        new RefreshOutcome.Work(10, 1_000, 3, 0, 1, 0, 1),
        null,
        RequestCounts.NONE);
  }

  @Test
  void shouldReportARefreshADimensionCommitAskedForWithTheLagAndStalenessOfThatCommit() {
    // Given a current view, whose source last committed at NOW - 500 ms
    ViewState state = refreshing();
    maintainer.completed(
        VIEW, state, outcome(RefreshOutcome.Status.COMMITTED, state.inFlight().refreshId()), NOW);
    SourceSnapshot dimension = new SourceSnapshot("dim-uuid", 7L, 3L, NOW + 10_000);

    // When a dimension it joins commits at NOW + 10 s, and the refresh after it commits its
    // target at NOW + 12 s, having read that dimension snapshot
    maintainer.received(
        VIEW,
        state,
        DirtyUpdate.Request.dimensionCommitted("lake.ref.symbols", dimension),
        NOW + 10_100);
    long due = state.dueAt();
    assertThat(maintainer.next(VIEW, state, due)).isEqualTo(new Next.Pin(TRADES));
    maintainer.looked(VIEW, state, new Lookup.Current(PINNED), due);
    assertThat(maintainer.next(VIEW, state, due)).isInstanceOf(Next.Refresh.class);
    RefreshOutcome joined =
        RefreshOutcome.committed(
            state.inFlight().refreshId(),
            RefreshOutcome.Mode.FULL,
            "dimension changed",
            DirtyBuckets.all("dimension changed"),
            null,
            PINNED,
            List.of(new RefreshOutcome.Dimension(TableName.parse("lake.ref.symbols"), dimension)),
            new RefreshOutcome.Target("uuid-2", 100L, NOW + 12_000, null),
            new RefreshOutcome.Work(10, 1_000, 3, 3, 1, 1, 1));
    List<Report> reports = maintainer.completed(VIEW, state, joined, NOW + 12_500);

    // Then its lag counts from the dimension commit, not from the source's older one, it ended
    // the staleness of that commit, and the view is current
    Report.Refreshed refreshed = (Report.Refreshed) reports.get(0);
    assertThat(refreshed.lagMs()).isEqualTo(2_000);
    assertThat(refreshed.stalenessMs()).isEqualTo(2_500);
    assertThat(state.stalenessMs(NOW + 13_000)).isZero();
    assertThat(state.last().dimensionSnapshotIds()).containsExactly(entry("lake.ref.symbols", 7L));
  }

  @Test
  void shouldAskTheRefreshToRecordTheOldestRootCommitItBringsIn() {
    // Given a current view over another view's target, whose snapshot 43 (committed at NOW + 2 s)
    // brings in a root commit of NOW + 1 s
    ViewState state = refreshing();
    maintainer.completed(
        VIEW, state, outcome(RefreshOutcome.Status.COMMITTED, state.inFlight().refreshId()), NOW);
    maintainer.received(
        VIEW,
        state,
        new DirtyUpdate.Change(
            TRADES.toString(),
            new SourceSnapshot("uuid-1", 43L, 8L, NOW + 2_000, NOW + 1_000),
            StoredDirty.of(DirtyBuckets.all("appended"))),
        NOW + 2_100);

    // When its refresh starts, and when it is run again after a crash
    Next next = maintainer.next(VIEW, state, NOW + 5_000);
    RefreshRequest rerun = maintainer.rerun(VIEW, state, NOW + 6_000).orElseThrow();

    // Then both record the root commit with their target commits
    assertThat(((Next.Refresh) next).request().originCommittedAt()).isEqualTo(NOW + 1_000);
    assertThat(rerun.originCommittedAt()).isEqualTo(NOW + 1_000);
  }

  @Test
  void shouldLookUpTheSourcesSnapshotBeforeTheFirstRefreshOfANewView() {
    // Given
    ViewState state = maintainer.synced(inForce(), null, NOW);

    // When
    Next next = maintainer.next(VIEW, state, NOW);

    // Then
    assertThat(next).isEqualTo(new Next.Pin(TRADES));
    assertThat(state.isPinning()).isTrue();
  }

  @Test
  void shouldStartTheRefreshOfThePinnedSnapshotUnderItsRefreshId() {
    // Given
    ViewState state = pinnedNewView();

    // When
    Next next = maintainer.next(VIEW, state, NOW);

    // Then
    RefreshId expected = RefreshId.of(VIEW, inForce().version(), PINNED.snapshotId());
    assertThat(next).isInstanceOf(Next.Refresh.class);
    RefreshRequest request = ((Next.Refresh) next).request();
    assertThat(request.id()).isEqualTo(expected);
    assertThat(state.inFlight().refreshId()).isEqualTo(expected);
    assertThat(state.status()).isEqualTo(ViewState.Status.REFRESHING);
    assertThat(maintainer.awaits(state, expected)).isTrue();
    assertThat(maintainer.awaits(state, RefreshId.of(VIEW, "other", 42L))).isFalse();
  }

  @Test
  void shouldStartNothingWhileTheDefinitionInForceIsNotTheOneTheStateHolds() {
    // Given a state pinned under the first definition, and a second one in force since
    ViewState state = pinnedNewView();
    index.put(
        ViewDefinition.of(
            VIEW,
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY 1, 2",
            TARGET),
        2);

    // When
    Next next = maintainer.next(VIEW, state, NOW);

    // Then
    assertThat(next).isEqualTo(new Next.Resync());
    assertThat(state.inFlight()).isNull();
    assertThat(maintainer.synced(inForce(), state, NOW)).isSameAs(state);
    assertThat(state.view().version()).isEqualTo(inForce().version());
  }

  @Test
  void shouldLeaveAStateThatHoldsTheDefinitionInForceAsItIs() {
    ViewState state = maintainer.synced(inForce(), null, NOW);

    assertThat(maintainer.synced(inForce(), state, NOW + 1)).isNull();
  }

  @Test
  void shouldReportARefreshThatReachedThePinnedSnapshotWithItsLagAndNoticeTheTarget() {
    // Given
    ViewState state = refreshing();
    RefreshId id = state.inFlight().refreshId();

    // When
    List<Report> reports =
        maintainer.completed(VIEW, state, outcome(RefreshOutcome.Status.COMMITTED, id), NOW + 200);

    // Then
    assertThat(reports).hasSize(1).first().isInstanceOf(Report.Refreshed.class);
    Report.Refreshed refreshed = (Report.Refreshed) reports.get(0);
    assertThat(refreshed.mode()).isEqualTo(RefreshMode.FULL);
    assertThat(refreshed.lagMs()).isEqualTo(600L);
    assertThat(refreshed.durationMs()).isEqualTo(200L);
    assertThat(refreshed.refresh().refreshId()).isEqualTo(id);
    assertThat(state.watermark()).isEqualTo(42L);
    assertThat(state.inFlight()).isNull();
    assertThat(state.status()).isEqualTo(ViewState.Status.IDLE);
    assertThat(state.last().refreshId()).isEqualTo(id);
    assertThat(state.last().mode()).isEqualTo("FULL");
  }

  @Test
  void shouldRefreshARequestedRangeAsARefreshOfItsOwnAtTheSnapshotTheTargetReflects() {
    // Given a view whose target reflects the pinned snapshot
    ViewState state = refreshing();
    maintainer.completed(
        VIEW,
        state,
        outcome(RefreshOutcome.Status.COMMITTED, state.inFlight().refreshId()),
        NOW + 200);
    TimeRange hour =
        TimeRange.parse("2026-04-08T10:00:00Z", "2026-04-08T11:00:00Z", ZoneOffset.UTC);

    // When a range is asked for, and the source's current snapshot is still the one reflected
    maintainer.received(
        VIEW,
        state,
        new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, NOW + 300, "api", hour),
        NOW + 300);
    assertThat(maintainer.next(VIEW, state, NOW + 300)).isEqualTo(new Next.Pin(TRADES));
    maintainer.looked(VIEW, state, new Lookup.Current(PINNED), NOW + 300);
    Next next = maintainer.next(VIEW, state, NOW + 300);

    // Then it runs under an id of its own, with the range to recompute
    assertThat(next).isInstanceOf(Next.Refresh.class);
    RefreshRequest request = ((Next.Refresh) next).request();
    assertThat(request.id())
        .isEqualTo(RefreshId.ranged(VIEW, inForce().version(), PINNED.snapshotId(), 1));
    assertThat(request.scope()).isInstanceOf(RefreshRequest.Ranged.class);
    assertThat(((RefreshRequest.Ranged) request.scope()).ranges()).containsExactly(hour);
  }

  @Test
  void shouldKeepARequestedRangeForTheRetryOfARefreshThatFailed() {
    // Given a range refresh in flight
    ViewState state = refreshing();
    maintainer.completed(
        VIEW,
        state,
        outcome(RefreshOutcome.Status.COMMITTED, state.inFlight().refreshId()),
        NOW + 200);
    TimeRange day = TimeRange.parse("2026-04-08", "2026-04-09", ZoneOffset.UTC);
    maintainer.received(
        VIEW,
        state,
        new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, NOW + 300, "api", day),
        NOW + 300);
    maintainer.next(VIEW, state, NOW + 300);
    maintainer.looked(VIEW, state, new Lookup.Current(PINNED), NOW + 300);
    maintainer.next(VIEW, state, NOW + 300);
    RefreshId id = state.inFlight().refreshId();

    // When it fails
    maintainer.failed(VIEW, state, new IllegalStateException("disk full"), NOW + 400);

    // Then its retry recomputes the range again, under the same id
    assertThat(state.pendingRanges()).containsExactly(day);
    Next retry = maintainer.next(VIEW, state, state.retryAt());
    assertThat(retry).isInstanceOf(Next.Refresh.class);
    RefreshRequest request = ((Next.Refresh) retry).request();
    assertThat(request.id()).isEqualTo(id);
    assertThat(((RefreshRequest.Ranged) request.scope()).ranges()).containsExactly(day);
  }

  @Test
  void shouldReportAChangeThatAnEarlierRunCommittedButCouldNotReport() {
    // Given a re-run of a refresh whose commit happened before a crash
    ViewState state = refreshing();
    RefreshId id = state.inFlight().refreshId();

    // When
    List<Report> reports =
        maintainer.completed(
            VIEW, state, outcome(RefreshOutcome.Status.ALREADY_APPLIED, id), NOW + 200);

    // Then it is reported, once: the earlier run published no event for it
    assertThat(reports).singleElement().isInstanceOf(Report.Refreshed.class);
    assertThat(((Report.Refreshed) reports.get(0)).lagMs()).isNull();
    assertThat(state.last().refreshId()).isEqualTo(id);
  }

  @Test
  void shouldReportNothingWhenTheTargetIsAheadOfThePinnedSnapshot() {
    // Given
    ViewState state = refreshing();
    RefreshId id = state.inFlight().refreshId();

    // When
    List<Report> reports =
        maintainer.completed(
            VIEW, state, outcome(RefreshOutcome.Status.TARGET_AHEAD, id), NOW + 200);

    // Then
    assertThat(reports).isEmpty();
    assertThat(state.inFlight()).isNull();
    assertThat(state.watermark()).isNull();
  }

  @Test
  void shouldLookTheSourceUpAgainWhenTheRefreshFindsItsPinStale() {
    // Given
    ViewState state = refreshing();
    RefreshId id = state.inFlight().refreshId();

    // When
    List<Report> reports =
        maintainer.completed(VIEW, state, outcome(RefreshOutcome.Status.STALE_PIN, id), NOW + 200);

    // Then
    assertThat(reports).isEmpty();
    assertThat(state.inFlight()).isNull();
    assertThat(maintainer.next(VIEW, state, NOW + 200)).isEqualTo(new Next.Pin(TRADES));
  }

  @Test
  void shouldReportAnUnexpectedFailureWithItsTypeAndRetryAfterABackoff() {
    // Given
    ViewState state = refreshing();
    ViewState.InFlight refresh = state.inFlight();

    // When
    List<Report> reports =
        maintainer.failed(VIEW, state, new IllegalStateException("disk full"), NOW + 200);

    // Then
    assertThat(reports)
        .containsExactly(
            new Report.Failed(
                VIEW, state.view(), refresh, "IllegalStateException: disk full", NOW + 200));
    assertThat(state.status()).isEqualTo(ViewState.Status.ERROR);
    assertThat(state.failures()).isEqualTo(1);
    assertThat(state.lastError()).isEqualTo("IllegalStateException: disk full");
    assertThat(state.retryAt()).isGreaterThan(NOW + 200);
    assertThat(state.isDue(NOW + 200)).isFalse();
  }

  @Test
  void shouldReportAMissingSourceThatNoViewCreatesAsAFailureOfTheLookup() {
    // Given
    ViewState state = maintainer.synced(inForce(), null, NOW);
    maintainer.next(VIEW, state, NOW);

    // When
    List<Report> reports = maintainer.looked(VIEW, state, new Lookup.Missing(TRADES), NOW);

    // Then
    assertThat(reports).singleElement().isInstanceOf(Report.Failed.class);
    Report.Failed failed = (Report.Failed) reports.get(0);
    assertThat(failed.refresh()).isNull();
    assertThat(failed.message()).contains("lake.market.trades");
    assertThat(state.status()).isEqualTo(ViewState.Status.ERROR);
  }

  @Test
  void shouldWaitWithoutAnErrorForTheUpstreamViewThatCreatesAMissingSource() {
    // Given a view that writes the source of ours
    index.put(
        ViewDefinition.of(
            "trades_copy",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
                + " FROM lake.raw.trades GROUP BY 1, 2",
            TRADES),
        1);
    ViewState state = refreshing();

    // When
    List<Report> reports =
        maintainer.failed(
            VIEW, state, new ViewRefreshException.SourceMissing(VIEW, TRADES), NOW + 200);

    // Then
    assertThat(reports).isEmpty();
    assertThat(state.waitingFor())
        .isEqualTo("waiting for view trades_copy to create lake.market.trades");
    assertThat(state.status()).isNotEqualTo(ViewState.Status.ERROR);
    assertThat(state.retryAt()).isGreaterThan(NOW + 200);
  }

  @Test
  void shouldDropWhatWasPendingWhenTheSourceHasNoSnapshotYet() {
    ViewState state = maintainer.synced(inForce(), null, NOW);
    maintainer.next(VIEW, state, NOW);

    assertThat(maintainer.looked(VIEW, state, new Lookup.Empty(), NOW)).isEmpty();

    assertThat(state.hasPending()).isFalse();
    assertThat(maintainer.next(VIEW, state, NOW)).isEqualTo(new Next.Idle());
  }

  @Test
  void shouldRunARefreshInFlightAgainUnderItsOwnId() {
    // Given a state left with a refresh in flight
    ViewState state = refreshing();
    RefreshId id = state.inFlight().refreshId();

    // When
    RefreshRequest again = maintainer.rerun(VIEW, state, NOW + 1_000).orElseThrow();

    // Then
    assertThat(again.id()).isEqualTo(id);
    assertThat(state.inFlight().refreshId()).isEqualTo(id);
  }

  @Test
  void shouldAbandonARefreshInFlightOfADefinitionNoLongerInForce() {
    // Given
    ViewState state = refreshing();
    index.remove(VIEW);

    // When / Then
    assertThat(maintainer.rerun(VIEW, state, NOW + 1_000)).isEmpty();
    assertThat(state.inFlight()).isNull();
  }

  @Test
  void shouldIgnoreAChangeOfAViewNotInForceAndCreateTheStateOfOneThatIs() {
    DirtyUpdate change =
        new DirtyUpdate.Change(
            TRADES.toString(),
            new SourceSnapshot("uuid-1", 43L, 8L, NOW),
            StoredDirty.of(DirtyBuckets.all("appended")));

    assertThat(maintainer.received("gone", null, change, NOW)).isNull();
    ViewState created = maintainer.received(VIEW, null, change, NOW);
    assertThat(created.view().version()).isEqualTo(inForce().version());
    assertThat(created.hasPending()).isTrue();
  }
}
