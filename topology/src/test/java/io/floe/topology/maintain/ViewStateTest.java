package io.floe.topology.maintain;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The per-view state machine around the lookup of the source's current snapshot. */
class ViewStateTest {

  private static final long NOW = 1_000_000L;
  private static final String TRADES = "lake.market.trades";

  private static ViewState pinningNewView() throws Exception {
    ViewDefinition definition =
        ViewDefinition.of(
            "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m"));
    ViewState state = ViewState.created(StoredView.of(CompiledView.compile(definition, 1)), NOW);
    assertThat(state.needsPin()).isTrue();
    state.pinning();
    return state;
  }

  @Test
  void shouldKeepARequestedRangeInTheStoreAndInTheRefreshInFlight() throws Exception {
    // Given a range asked for, stored and read back
    ViewState state = pinningNewView();
    TimeRange hour =
        TimeRange.parse("2026-04-08T10:00:00Z", "2026-04-08T11:00:00Z", ZoneOffset.UTC);
    state.requestRange(hour, NOW);
    JsonSerde<ViewState> serde = JsonSerde.of(ViewState.class);
    ViewState stored = serde.deserialize("t", serde.serialize("t", state));

    // When its refresh starts, and is stored in flight
    stored.pinned(new SourceSnapshot("uuid-1", 42L, 7L, NOW - 500));
    stored.start(RefreshId.ranged("ohlcv_1m", "v", 42L, 1), NOW);
    ViewState inFlight = serde.deserialize("t", serde.serialize("t", stored));

    // Then
    assertThat(stored.rangeRequests()).isEqualTo(1);
    assertThat(inFlight.inFlight().ranges()).containsExactly(hour);
    assertThat(inFlight.pendingRanges()).isEmpty();
  }

  @Test
  void shouldReadARefreshRequestOfAnEarlierReleaseAsOneWithoutARange() {
    JsonSerde<DirtyUpdate> serde = JsonSerde.of(DirtyUpdate.class);

    DirtyUpdate update =
        serde.deserialize(
            "t",
            "{\"type\":\"request\",\"kind\":\"REFRESH\",\"requestedAt\":5,\"requestedBy\":\"api\"}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));

    assertThat(update)
        .isEqualTo(new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, 5, "api"));
  }

  @Test
  void shouldDropWhatWasPendingWhenTheLookupFindsTheSourceEmpty() throws Exception {
    // Given
    ViewState state = pinningNewView();

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.hasPending()).isFalse();
    assertThat(state.status()).isEqualTo(ViewState.Status.IDLE);
    assertThat(state.dueAt()).isNull();
  }

  @Test
  void shouldRefreshFromTheSnapshotOfAChangeThatArrivedWhileTheLookupFoundTheSourceEmpty()
      throws Exception {
    // Given
    ViewState state = pinningNewView();
    SourceSnapshot first = new SourceSnapshot("uuid", 42L, 1L, NOW);
    state.addChange(TRADES, TRADES, DirtyBuckets.all("appended"), first, NOW + 10);

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.status()).isEqualTo(ViewState.Status.PENDING);
    assertThat(state.pendingPin()).isEqualTo(first);
    assertThat(state.isDue(NOW + 10)).isTrue();
  }

  @Test
  void shouldLookTheSourceUpAgainWhenARefreshWasRequestedWhileTheLookupFoundItEmpty()
      throws Exception {
    // Given
    ViewState state = pinningNewView();
    state.requestRefresh(true, NOW + 10);

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.hasPending()).isTrue();
    assertThat(state.needsPin()).isTrue();
    assertThat(state.isDue(NOW + 10)).isTrue();
  }

  /** A view whose first refresh reached source snapshot 42, committed at {@code NOW}. */
  private static ViewState currentView() throws Exception {
    ViewState state = pinningNewView();
    state.pinned(new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000));
    state.start(RefreshId.of("ohlcv_1m", "v", 42L), NOW);
    state.complete(null, new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000), NOW + 100);
    return state;
  }

  @Test
  void shouldCountANewViewStaleFromWhenItWasDefinedUntilItsFirstRefreshCompletes()
      throws Exception {
    // Given a view defined at NOW over a source last committed before
    ViewState state = pinningNewView();
    state.pinned(new SourceSnapshot("uuid", 42L, 1L, NOW - 600_000));

    // When its first refresh runs
    state.start(RefreshId.of("ohlcv_1m", "v", 42L), NOW + 1_000);

    // Then it is stale from its definition, not from the source's old commit, until it completes
    assertThat(state.stalenessMs(NOW + 2_000)).isEqualTo(2_000);
    state.complete(null, new SourceSnapshot("uuid", 42L, 1L, NOW - 600_000), NOW + 3_000);
    assertThat(state.stalenessMs(NOW + 4_000)).isZero();
    assertThat(state.unreflectedSince()).isNull();
  }

  @Test
  void shouldCountTheFirstRefreshOfANewDefinitionFromWhenItCameIntoForce() throws Exception {
    // Given a current view with a commit of NOW + 1 s pending
    ViewState state = currentView();
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("a"),
        new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000),
        NOW + 1_000);

    // When its definition changes at NOW + 5 s
    state.redefine(state.view(), NOW + 5_000);

    // Then it is stale from the new definition, not from the commit promised under the old one
    assertThat(state.stalenessMs(NOW + 6_000)).isEqualTo(1_000);
  }

  @Test
  void shouldCountStalenessFromTheOldestSourceCommitTheTargetDoesNotReflect() throws Exception {
    // Given a current view
    ViewState state = currentView();

    // When two commits arrive, at NOW + 1 s and NOW + 3 s
    state.addChange(
        TRADES, TRADES, DirtyBuckets.all("a"), new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000), 0);
    state.addChange(
        TRADES, TRADES, DirtyBuckets.all("b"), new SourceSnapshot("uuid", 44L, 3L, NOW + 3_000), 0);

    // Then it is as stale as the first of them is old
    assertThat(state.stalenessMs(NOW + 10_000)).isEqualTo(9_000);
  }

  @Test
  void shouldCountAChainedViewStaleFromTheRootCommitsItsUpstreamsSnapshotsBringIn()
      throws Exception {
    // Given a view over another view's target, current
    ViewState state = currentView();

    // When the upstream commits at NOW + 3 s and NOW + 4 s what the root source committed at
    // NOW + 1 s and NOW + 2 s
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("a"),
        new SourceSnapshot("uuid", 43L, 2L, NOW + 3_000, NOW + 1_000),
        NOW + 3_100);
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("b"),
        new SourceSnapshot("uuid", 44L, 3L, NOW + 4_000, NOW + 2_000),
        NOW + 4_100);

    // Then it is as stale as the oldest root commit is old, and its refresh records that commit
    assertThat(state.stalenessMs(NOW + 10_000)).isEqualTo(9_000);
    state.start(RefreshId.of("ohlcv_1m", "v", 44L), NOW + 10_000);
    assertThat(state.inFlightSince()).isEqualTo(NOW + 1_000);
    assertThat(state.stalenessMs(NOW + 11_000)).isEqualTo(10_000);
    state.complete(null, new SourceSnapshot("uuid", 44L, 3L, NOW + 4_000), NOW + 12_000);
    assertThat(state.stalenessMs(NOW + 12_000)).isZero();
    assertThat(state.inFlightSince()).isNull();
  }

  @Test
  void shouldCountAChangeTheRefreshInFlightAlreadyReadsAsBroughtInByIt() throws Exception {
    // Given a current view whose catch-up refresh was pinned to snapshot 44 (committed at NOW + 3
    // s)
    ViewState state = currentView();
    state.requestRefresh(false, NOW + 3_500);
    state.pinning();
    state.pinned(new SourceSnapshot("uuid", 44L, 3L, NOW + 3_000));
    state.start(RefreshId.of("ohlcv_1m", "v", 44L), NOW + 3_600);

    // When the changes of snapshots 43 (NOW + 1 s) and 44 reach it while that refresh runs
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("a"),
        new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000),
        NOW + 4_000);
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("b"),
        new SourceSnapshot("uuid", 44L, 3L, NOW + 3_000),
        NOW + 4_000);

    // Then the refresh in flight brings in the older commit, and once it completes the view is
    // current, not stale from commits it reflects
    assertThat(state.stalenessMs(NOW + 5_000)).isEqualTo(4_000);
    state.complete(null, new SourceSnapshot("uuid", 44L, 3L, NOW + 3_000), NOW + 6_000);
    assertThat(state.stalenessMs(NOW + 7_000)).isZero();
  }

  @Test
  void shouldRecordNoOriginForARefreshThatBringsInNoNewCommit() throws Exception {
    // Given a current view whose full refresh is requested with nothing new in the source
    ViewState state = currentView();
    state.requestRefresh(true, NOW + 1_000);
    state.pinning();
    state.pinned(new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000));

    // When it starts
    state.start(RefreshId.forced("ohlcv_1m", "v", 42L, 1), NOW + 1_000);

    // Then it brings in no source commit: its commits record no origin
    assertThat(state.inFlightSince()).isNull();
  }

  @Test
  void shouldIgnoreAChangeTheTargetAlreadyReflects() throws Exception {
    // Given a current view at source snapshot 42
    ViewState state = currentView();

    // When the change of snapshot 42 arrives again (a duplicate notice)
    state.addChange(
        TRADES, TRADES, DirtyBuckets.none(), new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000), 0);

    // Then it stays current
    assertThat(state.stalenessMs(NOW + 10_000)).isZero();
  }

  @Test
  void shouldCountFromTheCommitsOfARefreshThatFailedUntilARetryCompletes() throws Exception {
    // Given a commit at NOW + 1 s whose refresh fails
    ViewState state = currentView();
    SourceSnapshot commit = new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000);
    state.addChange(TRADES, TRADES, DirtyBuckets.all("a"), commit, NOW + 1_000);
    state.start(RefreshId.of("ohlcv_1m", "v", 43L), NOW + 1_200);
    state.fail("boom", NOW + 1_500, java.time.Duration.ofMinutes(1));

    // When it is retried and a second commit arrives while the retry runs
    state.start(RefreshId.of("ohlcv_1m", "v", 43L), NOW + 5_000);
    state.addChange(
        TRADES,
        TRADES,
        DirtyBuckets.all("b"),
        new SourceSnapshot("uuid", 44L, 3L, NOW + 6_000),
        NOW + 6_000);

    // Then it counts from the first commit until the retry completes, then from the second
    assertThat(state.stalenessMs(NOW + 7_000)).isEqualTo(6_000);
    state.complete(null, commit, NOW + 8_000);
    assertThat(state.stalenessMs(NOW + 9_000)).isEqualTo(3_000);
  }

  @Test
  void shouldStayCurrentWhenARequestedRefreshFindsNothingNew() throws Exception {
    // Given a current view
    ViewState state = currentView();

    // When a refresh is requested and the source's current snapshot is the one it reflects
    state.requestRefresh(false, NOW + 1_000);
    state.pinning();
    state.pinned(new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000));

    // Then it is not stale
    assertThat(state.stalenessMs(NOW + 2_000)).isZero();
  }

  @Test
  void shouldCountACatchUpFromTheCommitOfTheSnapshotItFound() throws Exception {
    // Given a current view
    ViewState state = currentView();

    // When a refresh is requested and the source has a commit nobody announced, at NOW + 1 s
    state.requestRefresh(false, NOW + 2_000);
    state.pinning();
    state.pinned(new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000));

    // Then it is stale from that commit
    assertThat(state.stalenessMs(NOW + 4_000)).isEqualTo(3_000);
  }

  @Test
  void shouldCountACommitOfADimensionStaleUntilTheRefreshThatStartsAfterItCompletes()
      throws Exception {
    // Given a current view, whose source does not commit again
    ViewState state = currentView();

    // When a dimension it joins commits at NOW + 1 s, and its request arrives at NOW + 1.1 s
    state.addDimensionChange(new SourceSnapshot("dim-uuid", 7L, 3L, NOW + 1_000), NOW + 1_100);

    // Then the view is stale by the dimension commit's age, its refresh waits for linger as a
    // commit of its source does, and once that refresh completes the view is current
    assertThat(state.stalenessMs(NOW + 4_000)).isEqualTo(3_000);
    assertThat(state.dueAt()).isEqualTo(NOW + 1_100 + state.view().lingerMs());
    state.pinning();
    state.pinned(new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000));
    state.start(RefreshId.of("ohlcv_1m", "v", 42L), NOW + 5_000);
    assertThat(state.stalenessMs(NOW + 6_000)).isEqualTo(5_000);
    state.complete(null, new SourceSnapshot("uuid", 42L, 1L, NOW - 5_000), NOW + 7_000);
    assertThat(state.stalenessMs(NOW + 8_000)).isZero();
  }

  @Test
  void shouldCountACommitOfADimensionThatArrivesWhileARefreshRunsUntilTheNextRefresh()
      throws Exception {
    // Given a current view whose refresh of a source commit at NOW + 1 s runs
    ViewState state = currentView();
    SourceSnapshot commit = new SourceSnapshot("uuid", 43L, 2L, NOW + 1_000);
    state.addChange(TRADES, TRADES, DirtyBuckets.all("a"), commit, NOW + 1_000);
    state.start(RefreshId.of("ohlcv_1m", "v", 43L), NOW + 1_500);

    // When a dimension commits at NOW + 2 s while it runs (it may have pinned the dimension before)
    state.addDimensionChange(new SourceSnapshot("dim-uuid", 7L, 3L, NOW + 2_000), NOW + 2_100);
    state.complete(null, commit, NOW + 3_000);

    // Then the view stays stale from the dimension commit, with a refresh pending for it
    assertThat(state.stalenessMs(NOW + 4_000)).isEqualTo(2_000);
    assertThat(state.hasPending()).isTrue();
  }

  @Test
  void shouldKeepTheDimensionSnapshotOfARequestThroughTheRepartitionTopic() {
    // Given the request a dimension commit makes, and a user's
    JsonSerde<DirtyUpdate> serde = JsonSerde.of(DirtyUpdate.class);
    DirtyUpdate.Request dimension =
        DirtyUpdate.Request.dimensionCommitted(
            "lake.ref.symbols", new SourceSnapshot("dim-uuid", 7L, 3L, NOW));
    DirtyUpdate.Request user = new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, 5, "api");

    // When they go through the topic
    DirtyUpdate dimensionRead = serde.deserialize("t", serde.serialize("t", dimension));
    String userWritten =
        new String(serde.serialize("t", user), java.nio.charset.StandardCharsets.UTF_8);

    // Then the dimension's request keeps its snapshot, and a user's is written as before
    assertThat(dimensionRead).isEqualTo(dimension);
    assertThat(dimension.requestedBy()).isEqualTo("snapshot 7 of dimension lake.ref.symbols");
    assertThat(userWritten).doesNotContain("dimensionSnapshot");
  }
}
