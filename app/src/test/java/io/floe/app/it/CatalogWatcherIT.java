package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.CatalogWatcher;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe watch-catalog}: commits nobody announces still reach the views. */
class CatalogWatcherIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() throws Exception {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldAnnounceCommitsOfTheViewsSourcesWhenTheirMetadataMoves() throws Exception {
    ViewDefinition view =
        FloeHarness.view(
            "volume",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
                + " FROM lake.market.trades GROUP BY 1, 2");
    floe.start("a");
    floe.define(view);
    FloeConfig config = FloeConfig.load(floe.configFile("watcher", Map.of()));

    try (CatalogWatcher watcher =
        new CatalogWatcher(config, Set.of(TableName.parse("lake.market.other")))) {
      assertThat(watcher.tables())
          .extracting(TableName::toString)
          .contains("lake.market.trades", "lake.market.other");
      // First look: every table is announced once (the missing one is reported and skipped).
      assertThat(watcher.check()).isEqualTo(1);
      floe.awaitOracle(view, trades);
      assertThat(watcher.check()).isZero();

      // A commit nobody announces: the watcher sees the metadata move and announces it.
      lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:03:00Z", 99.0, 7L, "S")));
      assertThat(watcher.check()).isEqualTo(1);
      floe.awaitOracle(view, trades);
      assertThat(watcher.check()).isZero();
    }
  }

  @Test
  void shouldAnnounceASchemaChangeThatCreatesNoSnapshotSoThatTheViewsReadingItRefresh()
      throws Exception {
    // Given a view over the quantity of trades, current, and a watcher that has looked once
    ViewDefinition view =
        FloeHarness.view(
            "volume",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
                + " FROM lake.market.trades GROUP BY 1, 2");
    floe.start("a");
    floe.define(view);
    FloeConfig config = FloeConfig.load(floe.configFile("watcher", Map.of()));
    try (CatalogWatcher watcher = new CatalogWatcher(config, Set.of())) {
      assertThat(watcher.check()).isEqualTo(1);
      floe.awaitOracle(view, trades);

      // When quantity is dropped and added again (no snapshot: every row now reads null)
      trades.updateSchema().deleteColumn("quantity").commit();
      trades.updateSchema().addColumn("quantity", Types.LongType.get()).commit();

      // Then the watcher announces it, and the view refreshes fully to the oracle
      assertThat(watcher.check()).isEqualTo(1);
      floe.awaitEvent(
          view.name(), e -> e.getMode() == RefreshMode.FULL && e.getReason().contains("quantity"));
      trades.refresh();
      OracleAssertions.assertMatches(
          floe.target(view), trades, trades.currentSnapshot().snapshotId(), view.query());
    }
  }
}
