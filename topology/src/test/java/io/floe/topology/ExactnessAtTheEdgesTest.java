package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.ViewCommandType;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.testing.ManualExecutor;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The edges of the correctness model (DESIGN §3), each driven through the real topology over a real
 * catalog: rollbacks, recreated and dropped sources, expired history, refreshes of definitions no
 * longer in force, replays after a crash, and forced full refreshes.
 */
class ExactnessAtTheEdgesTest {

  private static final String TRADES = "lake.market.trades";
  private static final String OHLCV = TradeViews.OHLCV_1M;

  @TempDir Path dir;
  private TopologyHarness floe;

  @AfterEach
  void tearDown() throws Exception {
    if (floe != null) {
      floe.close();
    }
  }

  private TopologyHarness start(ManualExecutor refreshes) throws Exception {
    floe =
        new TopologyHarness(
            dir, Runnable::run, refreshes == null ? Runnable::run : refreshes, RefreshHooks.NONE);
    return floe;
  }

  private Table trades() {
    return floe.lake.load("market", "trades");
  }

  private long append(String symbol, String ts, double price) {
    return floe.lake.append(trades(), List.of(floe.lake.trade(symbol, ts, price, 1L, "B")));
  }

  private void assertCurrent(String view, String query) {
    Table source = trades();
    OracleAssertions.assertMatches(
        floe.target(view), source, source.currentSnapshot().snapshotId(), query);
  }

  @Test
  void shouldRefreshToTheRolledBackSnapshotWhenTheSourceRollsBackWhileChangesWait()
      throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    long s1 = append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.events();

    // s2 is announced, and the source rolls back to s1 within the view's linger.
    append("AAPL", "2026-04-08T10:05:00Z", 99.0);
    floe.announce(TRADES);
    trades().manageSnapshots().rollbackTo(s1).commit();
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));

    Table target = floe.target("ohlcv_1m");
    assertThat(target.properties()).containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, "" + s1);
    assertCurrent("ohlcv_1m", OHLCV);
  }

  @Test
  void shouldRefreshAnAppendThatArrivesWhileThePinLookupFindsTheSourceEmpty() throws Exception {
    // Catalog reads are held until the pin lookup has run; then they run as they are asked for.
    ManualExecutor held = new ManualExecutor();
    AtomicReference<Executor> io = new AtomicReference<>(held);
    floe = new TopologyHarness(dir, r -> io.get().execute(r), Runnable::run, RefreshHooks.NONE);
    floe.lake.createTrades("market", "trades");
    floe.define("ohlcv_1m", OHLCV);
    floe.idle(TopologyHarness.TICK);
    assertThat(floe.state("ohlcv_1m").isPinning()).isTrue();
    assertThat(held.queued()).isEqualTo(1);

    // The lookup finds no snapshot; its result waits for the stream thread while the first append
    // is walked and detected, and its change reaches the view.
    held.runAll();
    io.set(Runnable::run);
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));

    assertThat(floe.lake.catalog().tableExists(TableIdentifier.of("analytics", "ohlcv_1m")))
        .as("the target of a view whose source's first append arrived during the pin lookup")
        .isTrue();
    assertThat(floe.state("ohlcv_1m").status()).isEqualTo(ViewState.Status.IDLE);
    assertCurrent("ohlcv_1m", OHLCV);
  }

  @Test
  void shouldNeverLetTheSequenceNumbersOfADroppedTableGateItsSuccessor() throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    for (int i = 0; i < 4; i++) {
      append("AAPL", "2026-04-08T10:0" + i + ":01Z", 10.0 + i);
    }
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.events();

    // Dropped and recreated: its sequence numbers start again, below the view's watermark.
    floe.lake.catalog().dropTable(TableIdentifier.of("market", "trades"));
    floe.lake.createTrades("market", "trades");
    append("MSFT", "2026-04-08T11:00:01Z", 50.0);
    floe.announce(TRADES);
    append("MSFT", "2026-04-08T11:07:01Z", 51.0);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(2));

    assertThat(floe.target("ohlcv_1m").properties())
        .containsEntry(
            FloeProperties.SOURCE_SNAPSHOT_ID, "" + trades().currentSnapshot().snapshotId())
        .containsEntry(FloeProperties.SOURCE_TABLE_UUID, trades().uuid().toString());
    assertCurrent("ohlcv_1m", OHLCV);
  }

  @Test
  void shouldNeverLetTheSequenceNumbersOfAViewsOldSourceGateItsNewOne() throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    for (int i = 0; i < 4; i++) {
      append("AAPL", "2026-04-08T10:0" + i + ":01Z", 10.0 + i);
    }
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    Table quotes = floe.lake.createTrades("market", "quotes");

    // Redefined onto another source whose sequence numbers are below the view's watermark.
    String onQuotes = OHLCV.replace(TRADES, "lake.market.quotes");
    floe.define("ohlcv_1m", onQuotes);
    floe.lake.append(quotes, List.of(floe.lake.trade("IBM", "2026-04-08T09:00:00Z", 5.0, 1L, "S")));
    floe.announce("lake.market.quotes");
    floe.idle(Duration.ofSeconds(1));
    floe.lake.append(quotes, List.of(floe.lake.trade("IBM", "2026-04-08T09:30:00Z", 6.0, 2L, "S")));
    floe.announce("lake.market.quotes");
    floe.idle(Duration.ofSeconds(1));

    quotes.refresh();
    OracleAssertions.assertMatches(
        floe.target("ohlcv_1m"), quotes, quotes.currentSnapshot().snapshotId(), onQuotes);
  }

  @Test
  void shouldPinAgainWhenThePinnedSnapshotExpiredInsteadOfRetryingForever() throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.events();

    // s2 is announced and pinned; before the refresh starts a later commit lets it expire.
    long s2 = append("AAPL", "2026-04-08T10:02:01Z", 11.0);
    floe.announce(TRADES);
    append("AAPL", "2026-04-08T10:03:01Z", 12.0);
    trades().expireSnapshots().expireSnapshotId(s2).commit();
    floe.idle(Duration.ofSeconds(2));

    assertThat(floe.state("ohlcv_1m").status()).isEqualTo(ViewState.Status.IDLE);
    assertThat(floe.events()).noneMatch(e -> e.getMode() == RefreshMode.FAILED);
    assertCurrent("ohlcv_1m", OHLCV);
  }

  @Test
  void shouldReportEveryFailedRefreshOfADroppedSourceAsAnErrorOfItsViews() throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.events();

    floe.lake.catalog().dropTable(TableIdentifier.of("market", "trades"));
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));

    ViewState state = floe.state("ohlcv_1m");
    assertThat(state.status()).isEqualTo(ViewState.Status.ERROR);
    assertThat(state.lastError()).contains("source table lake.market.trades does not exist");
    assertThat(floe.events())
        .anySatisfy(
            e -> {
              assertThat(e.getMode()).isEqualTo(RefreshMode.FAILED);
              assertThat(e.getError()).contains("does not exist");
            });
    // A notice about a table no view reads is still a dead letter; this one is not.
    assertThat(floe.dlq.readRecordsToList()).isEmpty();
  }

  @Test
  void shouldRefreshFullyEachTimeAUserAsksEvenForTheSameSnapshot() throws Exception {
    start(null);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.events();

    floe.request("ohlcv_1m", ViewCommandType.FULL_REFRESH);
    floe.idle(Duration.ofMillis(500));
    floe.request("ohlcv_1m", ViewCommandType.FULL_REFRESH);
    floe.idle(Duration.ofMillis(500));

    List<RefreshEvent> events = floe.events();
    assertThat(events)
        .extracting(RefreshEvent::getMode)
        .containsExactly(RefreshMode.FULL, RefreshMode.FULL);
    assertThat(events.get(0).getRefreshId()).isNotEqualTo(events.get(1).getRefreshId());
    assertCurrent("ohlcv_1m", OHLCV);
  }

  @Test
  void shouldNeverCommitARefreshQueuedBeforeItsTaskClosed() throws Exception {
    ManualExecutor refreshes = new ManualExecutor();
    start(refreshes);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofMillis(300));
    assertThat(refreshes.queued()).isEqualTo(1);

    // The task closes (a rebalance, a shutdown) while its refresh waits for a refresh thread.
    floe.closeTopology();
    refreshes.runAll();

    assertThat(floe.lake.catalog().tableExists(TableIdentifier.of("analytics", "ohlcv_1m")))
        .isFalse();
  }

  @Test
  void shouldNeverCommitAnOlderDefinitionQueuedWhenTheViewWasRedefined() throws Exception {
    ManualExecutor refreshes = new ManualExecutor();
    start(refreshes);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofMillis(300));
    assertThat(refreshes.queued()).isEqualTo(1);

    // Redefined while the refresh of the first definition waits for a thread.
    String counted =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
            + " FROM lake.market.trades GROUP BY 1, 2";
    floe.define("ohlcv_1m", counted);
    refreshes.runAll();
    floe.idle(Duration.ofMillis(300));
    refreshes.runAll();
    floe.idle(Duration.ofMillis(300));

    Table target = floe.target("ohlcv_1m");
    assertThat(target.schema().columns())
        .extracting(c -> c.name())
        .containsExactly("symbol", "minute_ts", "n");
    assertThat(target.snapshots())
        .allSatisfy(
            s ->
                assertThat(s.summary().get(FloeProperties.VIEW_VERSION))
                    .isEqualTo(
                        ViewDefinition.of(
                                "ohlcv_1m", counted, TableName.parse("lake.analytics.ohlcv_1m"))
                            .version()));
    assertCurrent("ohlcv_1m", counted);
  }

  @Test
  void shouldNameTheVersionARefreshCommittedInItsEventWhenTheViewChangedMeanwhile()
      throws Exception {
    ManualExecutor refreshes = new ManualExecutor();
    start(refreshes);
    floe.lake.createTrades("market", "trades");
    append("AAPL", "2026-04-08T10:00:01Z", 10.0);
    ViewDefinition first = floe.define("ohlcv_1m", OHLCV);
    floe.announce(TRADES);
    floe.idle(Duration.ofMillis(300));

    // The refresh of the first definition commits; the view is redefined before its outcome is
    // folded back on the stream thread.
    refreshes.runAll();
    ViewDefinition second =
        floe.define(
            "ohlcv_1m",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY 1, 2");
    floe.idle(Duration.ofMillis(300));
    refreshes.runAll();
    floe.idle(Duration.ofMillis(300));

    List<RefreshEvent> events = floe.events();
    assertThat(events)
        .filteredOn(e -> e.getMode() != RefreshMode.SKIPPED)
        .extracting(RefreshEvent::getViewVersion)
        .containsExactly(first.version(), second.version());
    assertThat(events)
        .allSatisfy(
            e ->
                assertThat(e.getViewVersion())
                    .isEqualTo(RefreshId.parse(e.getRefreshId()).version()));
  }
}
