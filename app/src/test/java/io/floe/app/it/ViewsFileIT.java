package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.config.FloeConfig;
import io.floe.app.testing.LogCapture;
import io.floe.app.views.ViewsPublisher;
import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The views file: published at start, re-read when it changes, without a restart. */
class ViewsFileIT {

  private static final String VOLUME =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final String VOLUME_AND_COUNT =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume,"
          + " count(*) AS trades FROM lake.market.trades GROUP BY 1, 2";
  private static final String HOURLY =
      "SELECT date_trunc('hour', ts) AS hour_ts, max(price) AS high"
          + " FROM lake.market.trades GROUP BY 1";

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private Path viewsFile;

  @BeforeEach
  void setUp() throws Exception {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T11:20:40Z", 99.0, 7L, "B")));
    viewsFile = dir.resolve("views.yaml");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private static String entry(String name, String query) {
    return "  - name: "
        + name
        + "\n    query: \""
        + query
        + "\"\n    target: lake.analytics."
        + name
        + "\n    refresh: {linger: 200ms}\n";
  }

  /** Writes the file and makes sure its modification time moves, however coarse the clock. */
  private void write(String content) throws Exception {
    FileTime before = Files.exists(viewsFile) ? Files.getLastModifiedTime(viewsFile) : null;
    Files.writeString(viewsFile, content);
    if (before != null
        && !Files.getLastModifiedTime(viewsFile).toInstant().isAfter(before.toInstant())) {
      Files.setLastModifiedTime(viewsFile, FileTime.from(before.toInstant().plusSeconds(1)));
    }
  }

  @Test
  void shouldPickUpAddedChangedInvalidAndRemovedViewsWithoutARestart() throws Exception {
    write("views:\n" + entry("volume", VOLUME));
    floe.start(
        "a",
        Map.of(
            FloeConfig.VIEWS_FILE,
            viewsFile.toString(),
            FloeConfig.VIEWS_RELOAD_INTERVAL_MS,
            "200"));
    ViewDefinition volume = FloeHarness.view("volume", VOLUME);
    floe.awaitOracle(volume, trades);

    // Change one view, add one, and add one that does not fit the source.
    write(
        "views:\n"
            + entry("volume", VOLUME_AND_COUNT)
            + entry("hourly", HOURLY)
            + entry("broken", VOLUME.replace("quantity", "qty")));
    ViewDefinition changed = FloeHarness.view("volume", VOLUME_AND_COUNT);
    ViewDefinition hourly = FloeHarness.view("hourly", HOURLY);
    floe.awaitEvent(
        "volume",
        e -> e.getMode() == RefreshMode.FULL && e.getViewVersion().equals(changed.version()));
    floe.awaitOracle(changed, trades);
    floe.awaitOracle(hourly, trades);
    assertThat(lake.catalog().tableExists(TableIdentifier.of("analytics", "broken"))).isFalse();

    // A file that does not parse changes nothing; the views keep following the source.
    write("views:\n  - name: [unclosed\n");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:02:00Z", 11.0, 2L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(changed, trades);
    floe.awaitOracle(hourly, trades);

    // Removing a view stops maintaining it and leaves its target alone.
    write("views:\n" + entry("volume", VOLUME_AND_COUNT));
    Instant removedAt = Instant.now();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> floe.storedViews().keySet().equals(java.util.Set.of("volume")));
    lake.append(trades, List.of(lake.trade("IBM", "2026-04-08T12:00:00Z", 50.0, 1L, "B")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(changed, trades);
    Thread.sleep(1000);
    assertThat(floe.events())
        .filteredOn(e -> e.getView().equals("hourly") && e.getFinishTime().isAfter(removedAt))
        .isEmpty();
    assertThat(lake.catalog().tableExists(TableIdentifier.of("analytics", "hourly"))).isTrue();
  }

  private static String entry(String name, String query, String target) {
    return "  - name: " + name + "\n    query: \"" + query + "\"\n    target: " + target + "\n";
  }

  @Test
  void shouldNotPublishFileViewsThatConflictWithTheViewsInForce() throws Exception {
    Table precious =
        lake.createTable(
            "analytics",
            "precious",
            IcebergFixture.TRADES,
            org.apache.iceberg.PartitionSpec.unpartitioned());
    lake.append(precious, List.of(lake.trade("IBM", "2026-04-08T09:00:00Z", 1.0, 1L, "B")));
    floe.define(FloeHarness.view("from_api", VOLUME));
    write(
        "views:\n"
            + entry("volume", VOLUME)
            + entry("copy", HOURLY, "lake.analytics.from_api")
            + entry("grab", HOURLY, "lake.analytics.precious")
            + entry("loop", HOURLY, "lake.market.trades"));

    String log;
    try (LogCapture capture = LogCapture.floe()) {
      floe.start("a", Map.of(FloeConfig.VIEWS_FILE, viewsFile.toString()));
      log = capture.text();
    }

    assertThat(floe.storedViews()).containsOnlyKeys("from_api", "volume");
    assertThat(log)
        .contains(
            "View copy in the views file is not published: View 'copy' cannot write"
                + " lake.analytics.from_api: it is the target of view 'from_api'; a target belongs"
                + " to one view")
        .contains(
            "View grab in the views file is not published: View 'grab' cannot write"
                + " lake.analytics.precious: the table exists and Floe did not create it")
        .contains(
            "View loop in the views file is not published: View 'loop' cannot write"
                + " lake.market.trades: it is its source");
    assertThat(IcebergFixture.readAll(precious, precious.currentSnapshot().snapshotId()))
        .hasSize(1);
  }

  /** The views on the views topic now, read to its end. */
  private java.util.Set<String> viewsInForce() {
    return new ViewsPublisher(
            Map.of("bootstrap.servers", FloeHarness.kafka().bootstrapServers()),
            floe.topic("views"),
            FloeSerdes.singleObject())
        .read()
        .keySet();
  }

  @Test
  void shouldKeepEveryViewWhenTheFileIsTruncatedThenWrittenBack() throws Exception {
    String full = "views:\n" + entry("volume", VOLUME) + entry("hourly", HOURLY);
    write(full);
    floe.start(
        "a",
        Map.of(
            FloeConfig.VIEWS_FILE,
            viewsFile.toString(),
            FloeConfig.VIEWS_RELOAD_INTERVAL_MS,
            "200"));
    ViewDefinition volume = FloeHarness.view("volume", VOLUME);
    ViewDefinition hourly = FloeHarness.view("hourly", HOURLY);
    floe.awaitOracle(volume, trades);
    floe.awaitOracle(hourly, trades);
    java.util.Set<String> both = java.util.Set.of("volume", "hourly");

    // A non-atomic save: the file is emptied, left so for many reload intervals, written back.
    write("");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> viewsInForce().equals(both));
    // Cut after its first line, as an interrupted copy leaves it.
    write("views:\n");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> viewsInForce().equals(both));
    write(full);
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(10))
        .until(() -> viewsInForce().equals(both));

    // No view was ever deleted, and both still follow their source.
    assertThat(floe.readAll("views")).noneMatch(record -> record.value() == null);
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:02:00Z", 11.0, 2L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(volume, trades);
    floe.awaitOracle(hourly, trades);

    // Only an explicit empty list removes them.
    write("views: []\n");
    await().atMost(Duration.ofSeconds(30)).until(() -> viewsInForce().isEmpty());
  }
}
