package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.testing.ManualExecutor;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The refresh schedule (DESIGN §6): a refresh starts {@code linger} after the first change it has
 * not covered, or right after the running refresh when changes arrived meanwhile; one refresh per
 * view at a time; {@code min_interval} spaces them; views share the refresh threads fairly. Time is
 * the driver's wall clock; refreshes are held on a {@link ManualExecutor} until the test runs them.
 */
class RefreshScheduleTest {

  private static final String BARS =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n, sum(quantity) AS q"
          + " FROM lake.market.%s GROUP BY 1, 2";

  @TempDir Path dir;
  private final ManualExecutor refreshes = new ManualExecutor();
  private TopologyHarness floe;
  private int minute;

  @BeforeEach
  void setUp() throws Exception {
    floe = new TopologyHarness(dir, Runnable::run, refreshes, RefreshHooks.NONE);
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private Table table(String name) {
    return floe.lake.load("market", name);
  }

  /** Commits a trade to {@code table} and announces it. */
  private long commit(String table) {
    minute = (minute + 1) % 60;
    long snapshot =
        floe.lake.append(
            table(table),
            List.of(
                floe.lake.trade(
                    "AAPL", String.format("2026-04-08T10:%02d:00Z", minute), 1.0, 1L, "B")));
    floe.announce("lake.market." + table);
    return snapshot;
  }

  /** A view over lake.market.{@code table}, refreshed once so that its schedule applies. */
  private void viewOver(String name, String table, RefreshSettings settings) {
    floe.lake.createTrades("market", table);
    commit(table);
    floe.define(
        new ViewDefinition(
            name,
            String.format(BARS, table),
            TableName.parse("lake.analytics." + name),
            List.of(),
            null,
            settings));
    floe.idle(Duration.ofMillis(100));
    refreshes.runAll();
    floe.idle(Duration.ofMillis(100));
    assertThat(floe.events()).hasSize(1);
  }

  @Test
  void shouldStartARefreshLingerAfterTheFirstChange() {
    viewOver("bars", "trades", RefreshSettings.DEFAULTS);

    commit("trades");
    floe.idle(Duration.ofMillis(150));
    assertThat(refreshes.queued()).isZero();
    commit("trades");
    // The linger counts from the first change, not the last: a busy source never pushes it back.
    floe.idle(Duration.ofMillis(100));

    assertThat(refreshes.queued()).isEqualTo(1);
    refreshes.runAll();
    floe.idle(Duration.ofMillis(100));
    assertThat(floe.events()).hasSize(1);
    OracleAssertions.assertMatches(
        floe.target("bars"),
        table("trades"),
        table("trades").currentSnapshot().snapshotId(),
        String.format(BARS, "trades"));
  }

  @Test
  void shouldStartTheNextRefreshAsSoonAsTheRunningOneEndsWhenChangesArrivedMeanwhile() {
    viewOver("bars", "trades", RefreshSettings.DEFAULTS);
    commit("trades");
    floe.idle(Duration.ofMillis(250));
    assertThat(refreshes.queued()).isEqualTo(1);

    // Changes arrive while the refresh runs: at most one refresh per view, so the next waits...
    commit("trades");
    floe.idle(Duration.ofMillis(500));
    assertThat(refreshes.queued()).isEqualTo(1);
    refreshes.runOne();

    // ...and starts with the next look, its linger long past.
    floe.idle(Duration.ofMillis(50));
    assertThat(floe.events()).hasSize(1);
    assertThat(refreshes.queued()).isEqualTo(1);
    refreshes.runAll();
    floe.idle(Duration.ofMillis(50));
    assertThat(floe.events())
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getSourceSnapshotId())
                    .isEqualTo(table("trades").currentSnapshot().snapshotId()));
  }

  @Test
  void shouldSpaceRefreshesByMinInterval() {
    viewOver(
        "bars",
        "trades",
        new RefreshSettings(Duration.ofMillis(100), Duration.ofSeconds(2), OptionalInt.empty()));

    // The view refreshed a moment ago: the next refresh waits for 2 s to pass since.
    commit("trades");
    floe.idle(Duration.ofMillis(1500));
    assertThat(refreshes.queued()).isZero();
    floe.idle(Duration.ofMillis(600));

    assertThat(refreshes.queued()).isEqualTo(1);
  }

  @Test
  void shouldFollowASourceThatCommitsContinuously() {
    viewOver("bars", "trades", RefreshSettings.DEFAULTS);
    List<RefreshEvent> events = new ArrayList<>();

    // A commit every 100 ms for 3 s, refreshes running as soon as they are started.
    for (int i = 0; i < 30; i++) {
      commit("trades");
      floe.idle(Duration.ofMillis(100));
      refreshes.runAll();
      events.addAll(floe.events());
    }

    // The quiet-period rule of earlier releases refreshed nothing here until its max delay.
    assertThat(events).hasSizeGreaterThanOrEqualTo(8);
    floe.idle(Duration.ofMillis(300));
    refreshes.runAll();
    floe.idle(Duration.ofMillis(100));
    OracleAssertions.assertMatches(
        floe.target("bars"),
        table("trades"),
        table("trades").currentSnapshot().snapshotId(),
        String.format(BARS, "trades"));
  }

  @Test
  void shouldShareTheRefreshThreadsBetweenViewsSoThatABusyOneStarvesNone() {
    viewOver("busy", "trades", RefreshSettings.DEFAULTS);
    viewOver("quiet", "quotes", RefreshSettings.DEFAULTS);
    commit("trades");
    floe.idle(Duration.ofMillis(250));
    commit("quotes");
    commit("trades");
    floe.idle(Duration.ofMillis(250));

    // One refresh thread: the busy view's refresh, then the quiet one's, then the busy one again.
    List<String> order = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      commit("trades");
      refreshes.runOne();
      floe.idle(Duration.ofMillis(250));
      floe.events().forEach(e -> order.add(e.getView()));
    }

    assertThat(order).startsWith("busy", "quiet");
  }
}
