package io.floe.topology.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.testing.ManualExecutor;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.file.Path;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding the watched table of a metadata file, from the views' sources in a real catalog. */
class WatchedTableLocationsTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private final ViewIndex views = new ViewIndex();
  private WatchedTableLocations locations;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    locations = new WatchedTableLocations(views, name -> lake.catalog(), Runnable::run);
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private void define(String name, String source) {
    ViewDefinition view =
        ViewDefinition.of(
            name,
            "SELECT symbol, date_trunc('minute', ts) AS m, count(*) AS n FROM "
                + source
                + " GROUP BY 1, 2",
            TableName.parse("lake.analytics." + name));
    views.put(view, views.generation());
  }

  @Test
  void shouldFindTheSourceOfANewViewAtOnceAndIgnoreOtherTables() {
    Table trades = lake.createTrades("market", "trades");
    Table quotes = lake.createTrades("market", "quotes");
    String tradesMetadata = trades.location() + "/metadata/00002-abc.metadata.json";

    assertThat(locations.tableFor(tradesMetadata)).isEmpty();
    assertThat(locations.watches(TableName.parse("lake.market.trades"))).isFalse();

    define("bars", "lake.market.trades");
    assertThat(locations.watches(TableName.parse("lake.market.trades"))).isTrue();
    assertThat(locations.watches(TableName.parse("lake.market.quotes"))).isFalse();
    assertThat(locations.tableFor(tradesMetadata)).contains(TableName.parse("lake.market.trades"));
    assertThat(locations.tableFor(quotes.location() + "/metadata/00001-x.metadata.json")).isEmpty();
    assertThat(locations.tableFor(trades.location() + "-old/metadata/00001-x.metadata.json"))
        .isEmpty();
  }

  @Test
  void shouldLookLocationsUpOffTheCallersThreadAndSayWhileItDoes() {
    ManualExecutor io = new ManualExecutor();
    WatchedTableLocations async = new WatchedTableLocations(views, name -> lake.catalog(), io);
    Table trades = lake.createTrades("market", "trades");
    define("bars", "lake.market.trades");
    String metadata = trades.location() + "/metadata/00002-abc.metadata.json";

    assertThat(async.tableFor(metadata)).isEmpty();
    assertThat(async.isLoading()).isTrue();
    io.runAll();

    assertThat(async.isLoading()).isFalse();
    assertThat(async.tableFor(metadata)).contains(TableName.parse("lake.market.trades"));
  }

  @Test
  void shouldTreatS3aAndS3nLocationsAsS3() {
    assertThat(WatchedTableLocations.normalize("s3a://bucket/wh/t/metadata/1.metadata.json"))
        .isEqualTo("s3://bucket/wh/t/metadata/1.metadata.json");
    assertThat(WatchedTableLocations.normalize("s3n://bucket/x")).isEqualTo("s3://bucket/x");
    assertThat(WatchedTableLocations.normalize("file:/tmp/x")).isEqualTo("file:/tmp/x");
  }
}
