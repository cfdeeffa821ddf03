package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshEvent;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two Floe instances with the same application id share the views (each owns the views of its
 * partitions); when one stops, the other takes its views over. Every view stays equal to the oracle
 * and every refresh is reported once.
 */
class TwoInstancesIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldShareTheViewsAndTakeOverWhenOneInstanceStops() throws Exception {
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T11:00:40Z", 99.0, 7L, "S")));
    List<ViewDefinition> views = new ArrayList<>();
    for (String granularity : List.of("minute", "hour", "day", "week", "month", "year")) {
      views.add(
          FloeHarness.view(
              "by_" + granularity,
              "SELECT symbol, date_trunc('"
                  + granularity
                  + "', ts) AS bucket, sum(quantity) AS volume, count(*) AS n"
                  + " FROM lake.market.trades GROUP BY 1, 2"));
    }
    FloeService a = floe.start("a");
    FloeService b = floe.start("b");
    for (ViewDefinition view : views) {
      floe.define(view);
    }
    floe.announce("lake.market.trades");
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }

    lake.append(trades, List.of(lake.trade("IBM", "2026-04-09T09:00:00Z", 5.0, 2L, "B")));
    floe.announce("lake.market.trades");
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }

    // One instance goes; the other refreshes every view from now on.
    a.close();
    lake.append(trades, List.of(lake.trade("ORCL", "2026-04-10T09:00:00Z", 7.0, 3L, "S")));
    floe.announce("lake.market.trades");
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }
    assertThat(b.streams().state().isRunningOrRebalancing()).isTrue();

    Map<String, Long> perRefresh =
        floe.events().stream()
            .collect(Collectors.groupingBy(RefreshEvent::getRefreshId, Collectors.counting()));
    assertThat(perRefresh).allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1));
  }

  @Test
  void shouldConvergeWithNothingLostOrAppliedTwiceWhenAnInstancePausesAndResumes()
      throws Exception {
    // Given two instances sharing six views; a's stream threads can be held inside poll()
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    List<ViewDefinition> views = views();
    String gateName = "pause-" + dir.getFileName();
    PausingInterceptor.Gate gate = PausingInterceptor.gate(gateName);
    FloeService a =
        floe.start(
            "a",
            Map.of(
                "main.consumer.interceptor.classes",
                PausingInterceptor.class.getName(),
                "main.consumer." + PausingInterceptor.GATE_CONFIG,
                gateName,
                // A stuck instance leaves the group once it has not polled for this long.
                "main.consumer.max.poll.interval.ms",
                "5000"));
    FloeService b = floe.start("b");
    for (ViewDefinition view : views) {
      floe.define(view);
    }
    floe.announce("lake.market.trades");
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }

    // When a's stream threads stop inside poll() while commits go on
    gate.close();
    try {
      lake.append(trades, List.of(lake.trade("MSFT", "2026-04-09T11:00:40Z", 99.0, 7L, "S")));
      floe.announce("lake.market.trades");
      await().atMost(Duration.ofSeconds(60)).until(gate::isHolding);
      lake.append(trades, List.of(lake.trade("IBM", "2026-04-10T09:00:00Z", 5.0, 2L, "B")));
      floe.announce("lake.market.trades");

      // Then b takes a's views over and every view follows the commits made meanwhile
      for (ViewDefinition view : views) {
        floe.awaitOracle(view, trades);
      }
      assertThat(gate.isHolding()).as("a is still paused").isTrue();
    } finally {
      gate.open();
    }

    // When a resumes, finds itself out of the group, and more commits come
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> a.streams().state() == KafkaStreams.State.RUNNING);
    lake.append(trades, List.of(lake.trade("ORCL", "2026-04-11T09:00:00Z", 7.0, 3L, "S")));
    floe.announce("lake.market.trades");

    // Then every view equals the oracle, each refresh was reported once and applied once
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }
    assertThat(b.streams().state().isRunningOrRebalancing()).isTrue();
    floe.assertEachRefreshAppliedAndReportedOnce(views);
  }

  static List<ViewDefinition> views() {
    List<ViewDefinition> views = new ArrayList<>();
    for (String granularity : List.of("minute", "hour", "day", "week", "month", "year")) {
      views.add(
          FloeHarness.view(
              "by_" + granularity,
              "SELECT symbol, date_trunc('"
                  + granularity
                  + "', ts) AS bucket, sum(quantity) AS volume, count(*) AS n"
                  + " FROM lake.market.trades GROUP BY 1, 2"));
    }
    return views;
  }
}
