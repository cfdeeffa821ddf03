package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshEvent;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
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
}
