package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.refresh.RefreshHooks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction of a target through the real topology: it runs in the view's refresh slot, is reported
 * with the refresh that ran it, and its replace snapshot never refreshes a chained view.
 */
class TargetCompactionTopologyTest {

  private static final String TRADES = "lake.market.trades";
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

  @TempDir Path dir;
  private TopologyHarness floe;

  @AfterEach
  void tearDown() throws Exception {
    if (floe != null) {
      floe.close();
    }
  }

  private Table trades() {
    return floe.lake.load("market", "trades");
  }

  private void append(String ts, double price) {
    floe.lake.append(trades(), List.of(floe.lake.trade("AAPL", ts, price, 1L, "B")));
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
  }

  @Test
  void shouldReportACompactionWithItsRefreshAndNeverRefreshAChainedViewForIt() throws Exception {
    // Given a minute view whose target compacts after two small files, and an hour view on it
    floe = new TopologyHarness(dir, Runnable::run, Runnable::run, RefreshHooks.NONE);
    floe.lake.createTrades("market", "trades");
    append("2026-04-08T10:00:01Z", 10.0);
    floe.define("ohlcv_1m", OHLCV_1M);
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    floe.define("ohlcv_1h", OHLCV_1H);
    floe.idle(Duration.ofSeconds(1));
    floe.target("ohlcv_1m").updateProperties().set("floe.compaction.min-input-files", "2").commit();

    // When the source commits into new minutes, one commit at a time
    for (int i = 1; i <= 5; i++) {
      append("2026-04-08T1" + i + ":0" + i + ":01Z", 10.0 + i);
    }

    // Then compactions are reported with the refreshes that ran them
    List<RefreshEvent> events = floe.events();
    List<RefreshEvent> minute = new ArrayList<>();
    List<RefreshEvent> hour = new ArrayList<>();
    for (RefreshEvent event : events) {
      (event.getView().equals("ohlcv_1m") ? minute : hour).add(event);
    }
    assertThat(minute).anyMatch(e -> e.getCompaction() != null);
    Table target = floe.target("ohlcv_1m");
    for (RefreshEvent event : minute) {
      if (event.getCompaction() != null) {
        Snapshot compaction = target.snapshot(event.getCompaction().getTargetSnapshotId());
        assertThat(compaction.operation()).isEqualTo(DataOperations.REPLACE);
        assertThat(compaction.parentId()).isEqualTo(event.getTargetSnapshotId());
      }
    }
    // and the hour view refreshed once per data-changing commit of its source, never for one
    assertThat(hour).allMatch(e -> e.getMode() != RefreshMode.FAILED);
    for (RefreshEvent event : hour) {
      if (event.getMode() != RefreshMode.SKIPPED) {
        assertThat(target.snapshot(event.getSourceSnapshotId()).operation())
            .isNotEqualTo(DataOperations.REPLACE);
      }
    }
    assertThat(hour.stream().filter(e -> e.getMode() != RefreshMode.SKIPPED).count())
        .isLessThanOrEqualTo(minute.size());
    Table source = trades();
    OracleAssertions.assertMatches(target, source, source.currentSnapshot().snapshotId(), OHLCV_1M);
    target.refresh();
    OracleAssertions.assertMatches(
        floe.target("ohlcv_1h"), target, target.currentSnapshot().snapshotId(), OHLCV_1H);
  }
}
