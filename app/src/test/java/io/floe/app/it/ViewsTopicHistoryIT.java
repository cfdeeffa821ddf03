package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Views against the history of floe.views on a real broker (DESIGN §3.6): a topic deleted and
 * recreated while Floe is down must not freeze a view, and a real conflict with what a target holds
 * shows in the view's status.
 */
class ViewsTopicHistoryIT {

  private static final String VOLUME =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final String VOLUME_AND_COUNT =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume,"
          + " count(*) AS trades FROM lake.market.trades GROUP BY 1, 2";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
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
  void shouldRefreshAViewRedefinedOnceAfterTheViewsTopicIsRecreatedWhileFloeWasDown()
      throws Exception {
    // Given a view of the views file redefined once
    Path viewsFile = dir.resolve("views.yaml");
    Map<String, String> config = Map.of(FloeConfig.VIEWS_FILE, viewsFile.toString());
    Files.writeString(viewsFile, "views:\n" + entry("volume", VOLUME));
    floe.start("a", config);
    floe.awaitOracle(FloeHarness.view("volume", VOLUME), trades);
    floe.stopServices();
    Files.writeString(viewsFile, "views:\n" + entry("volume", VOLUME_AND_COUNT));
    floe.start("a", config);
    ViewDefinition changed = FloeHarness.view("volume", VOLUME_AND_COUNT);
    floe.awaitOracle(changed, trades);

    // When floe.views is deleted and recreated while Floe is down, and Floe starts again
    floe.stopServices();
    recreateViewsTopic();
    floe.start("a", config);
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 7L, "S")));
    floe.announce("lake.market.trades");

    // Then the view follows its source as before
    floe.awaitOracle(changed, trades);
    assertThat(floe.storedViews().get("volume").getRevision()).isEqualTo(2L);
  }

  @Test
  void shouldShowAConflictInTheViewsStatusUntilTheViewIsDefinedAgain() throws Exception {
    // Given a view defined and redefined through the API
    FloeService service = floe.start("a");
    awaitReady(service);
    assertThat(send(service, "POST", "/api/views", body("volume", VOLUME)).statusCode())
        .isEqualTo(201);
    floe.awaitOracle(FloeHarness.view("volume", VOLUME), trades);
    assertThat(
            send(service, "PUT", "/api/views/volume", body("volume", VOLUME_AND_COUNT))
                .statusCode())
        .isEqualTo(200);
    floe.awaitOracle(FloeHarness.view("volume", VOLUME_AND_COUNT), trades);
    assertThat(floe.target(FloeHarness.view("volume", VOLUME)).properties())
        .containsEntry(FloeProperties.VIEW_REVISION, "1");

    // When floe.views is recreated holding the first definition only, as a record of an earlier
    // release (no revision of its own: its offset, 0)
    floe.stopServices();
    recreateViewsTopic();
    service = floe.start("a");
    awaitReady(service);
    floe.define(FloeHarness.view("volume", VOLUME));

    // Then the view's status shows the conflict, and a refresh event reports it
    FloeService running = service;
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> json(send(running, "GET", "/api/views/volume", null)).path("status").asText(),
            "ERROR"::equals);
    JsonNode status = json(send(service, "GET", "/api/views/volume", null));
    assertThat(status.path("lastError").asText())
        .contains("holds revision 1 of its definition", "newer than revision 0");
    floe.awaitEvent(
        "volume",
        e -> e.getMode() == RefreshMode.FAILED && e.getError().contains("holds revision 1"));

    // And defining the view again through the API makes it the newest and refreshes it
    assertThat(send(service, "PUT", "/api/views/volume", body("volume", VOLUME)).statusCode())
        .isEqualTo(200);
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 7L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(FloeHarness.view("volume", VOLUME), trades);
    assertThat(floe.target(FloeHarness.view("volume", VOLUME)).properties())
        .containsEntry(FloeProperties.VIEW_REVISION, "2");
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

  /** Deletes floe.views and creates it again, empty: its offsets start again from 0. */
  private void recreateViewsTopic() throws Exception {
    String topic = floe.topic("views");
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                FloeHarness.kafka().bootstrapServers()))) {
      admin.deleteTopics(Set.of(topic)).all().get();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                try {
                  admin
                      .createTopics(
                          List.of(
                              new NewTopic(topic, 2, (short) 1)
                                  .configs(Map.of("cleanup.policy", "compact"))))
                      .all()
                      .get();
                  return true;
                } catch (java.util.concurrent.ExecutionException e) {
                  // The deletion is still under way.
                  return false;
                }
              });
    }
    assertThat(floe.readAll("views")).isEmpty();
  }

  private static void awaitReady(FloeService service) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> send(service, "GET", "/health/ready", null).statusCode() == 200);
  }

  private static String body(String name, String query) {
    return JSON.createObjectNode()
        .put("name", name)
        .put("query", query)
        .put("target", "lake.analytics." + name)
        .toString();
  }

  private static HttpResponse<String> send(
      FloeService service, String method, String path, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> response) throws Exception {
    return JSON.readTree(response.body());
  }
}
