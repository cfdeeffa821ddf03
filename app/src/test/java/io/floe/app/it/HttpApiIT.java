package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.topology.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP API of a running Floe, over a real broker and catalog. */
class HttpApiIT {

  private static final String TOKEN = "s3cr3t-token";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private FloeService service;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void setUp() throws Exception {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
    service = floe.start("a", Map.of(FloeConfig.HTTP_TOKEN, TOKEN));
    await().atMost(Duration.ofSeconds(60)).until(() -> get("/health/ready").statusCode() == 200);
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private HttpResponse<String> send(String method, String path, String body, String token)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .header("Content-Type", "application/json");
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return send("GET", path, null, null);
  }

  private static JsonNode json(HttpResponse<String> response) throws Exception {
    return JSON.readTree(response.body());
  }

  private static String view(String name, String query) {
    return JSON.createObjectNode()
        .put("name", name)
        .put("query", query)
        .put("target", "lake.analytics." + name)
        .toString();
  }

  @Test
  void shouldServeHealthAndMetrics() throws Exception {
    assertThat(get("/health/live").statusCode()).isEqualTo(200);
    assertThat(json(get("/health/ready")).get("status").asText()).isEqualTo("READY");
    HttpResponse<String> metrics = get("/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body()).contains("jvm_memory_used_bytes").contains("kafka_stream");
  }

  @Test
  void shouldCreateListRefreshAndDeleteAViewWithTheToken() throws Exception {
    HttpResponse<String> created =
        send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), TOKEN);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    ViewDefinition bars = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.awaitOracle(bars, trades);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              JsonNode listed = json(get("/api/views")).get(0);
              assertThat(listed.get("name").asText()).isEqualTo("bars");
              assertThat(listed.get("status").asText()).isEqualTo("IDLE");
              assertThat(listed.get("source").asText()).isEqualTo("lake.market.trades");
              assertThat(listed.get("lastRefresh").get("mode").asText()).isEqualTo("FULL");
            });
    JsonNode detail = json(get("/api/views/bars"));
    assertThat(detail.get("definition").get("query").asText()).contains("min_by(price, ts)");
    assertThat(detail.get("plan").get("bucketColumn").asText()).isEqualTo("ts");
    assertThat(detail.get("plan").get("columns").get(1).get("type").asText())
        .isEqualTo("timestamptz");
    assertThat(detail.get("recentRefreshes")).hasSize(1);

    // A commit nobody announced: the refresh request catches the view up.
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:03:00Z", 11.0, 1L, "S")));
    HttpResponse<String> refresh = send("POST", "/api/views/bars/refresh", null, TOKEN);
    assertThat(refresh.statusCode()).isEqualTo(202);
    floe.awaitOracle(bars, trades);

    HttpResponse<String> full = send("POST", "/api/views/bars/refresh?full=true", null, TOKEN);
    assertThat(full.statusCode()).isEqualTo(202);
    floe.awaitEvent("bars", e -> "full refresh requested".equals(e.getReason()));

    HttpResponse<String> deleted = send("DELETE", "/api/views/bars?dropTarget=true", null, TOKEN);
    assertThat(deleted.statusCode()).isEqualTo(200);
    assertThat(json(deleted).get("targetDropped").asBoolean()).isTrue();
    await().atMost(Duration.ofSeconds(30)).until(() -> json(get("/api/views")).isEmpty());
    assertThat(lake.catalog().tableExists(TableIdentifier.of("analytics", "bars"))).isFalse();
    assertThat(get("/metrics").body())
        .contains("floe_refreshes_total{mode=\"full\",view=\"bars\"}");
  }

  @Test
  void shouldRefuseChangesWithoutTheTokenAndChangeNothing() throws Exception {
    assertThat(send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), null).statusCode())
        .isEqualTo(401);
    assertThat(
            send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), "wrong").statusCode())
        .isEqualTo(401);
    assertThat(send("DELETE", "/api/views/bars", null, null).statusCode()).isEqualTo(401);
    assertThat(send("POST", "/api/views/bars/refresh", null, null).statusCode()).isEqualTo(401);
    assertThat(json(get("/api/views"))).isEmpty();
  }

  @Test
  void shouldRejectAnInvalidViewWithThePositionOfTheProblem() throws Exception {
    String joined =
        "SELECT t.symbol, date_trunc('day', t.ts) AS d, count(*) AS n\n"
            + "FROM lake.market.trades t JOIN lake.market.symbols s ON t.symbol = s.ticker\n"
            + "GROUP BY 1, 2";
    HttpResponse<String> response = send("POST", "/api/views", view("bad", joined), TOKEN);

    assertThat(response.statusCode()).isEqualTo(400);
    JsonNode error = json(response);
    assertThat(error.get("rule").asText()).isEqualTo("JOIN");
    assertThat(error.get("line").asInt()).isEqualTo(2);
    assertThat(error.get("column").asInt()).isEqualTo(27);
    assertThat(error.get("error").asText()).contains("joins are not supported");

    HttpResponse<String> unknownColumn =
        send(
            "POST",
            "/api/views",
            view(
                "bad",
                "SELECT date_trunc('day', ts) AS d, sum(qty) AS v FROM lake.market.trades GROUP BY 1"),
            TOKEN);
    assertThat(unknownColumn.statusCode()).isEqualTo(400);
    assertThat(json(unknownColumn).get("rule").asText()).isEqualTo("UNKNOWN_COLUMN");

    HttpResponse<String> unknownField =
        send("POST", "/api/views", "{\"name\": \"x\", \"querry\": \"SELECT 1\"}", TOKEN);
    assertThat(unknownField.statusCode()).isEqualTo(400);
    assertThat(json(unknownField).get("error").asText()).contains("unknown field 'querry'");
    assertThat(json(get("/api/views"))).isEmpty();
  }

  @Test
  void shouldAnswer404ForAnUnknownViewAnd409ForADuplicate() throws Exception {
    assertThat(get("/api/views/nope").statusCode()).isEqualTo(404);
    assertThat(send("POST", "/api/views/nope/refresh", null, TOKEN).statusCode()).isEqualTo(404);
    assertThat(send("DELETE", "/api/views/nope", null, TOKEN).statusCode()).isEqualTo(404);

    assertThat(send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), TOKEN).statusCode())
        .isEqualTo(201);
    await().atMost(Duration.ofSeconds(30)).until(() -> get("/api/views/bars").statusCode() == 200);
    assertThat(send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), TOKEN).statusCode())
        .isEqualTo(409);
    assertThat(
            send("PUT", "/api/views/bars", view("bars", FloeServiceIT.OHLCV_1M), TOKEN)
                .statusCode())
        .isEqualTo(200);
  }

  @Test
  void shouldValidateLiveForTheUi() throws Exception {
    HttpResponse<String> ok =
        send(
            "POST",
            "/api/validate",
            "{\"query\": \"SELECT symbol, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.market.trades GROUP BY 1, 2\"}",
            null);
    assertThat(ok.statusCode()).isEqualTo(200);
    JsonNode plan = json(ok);
    assertThat(plan.get("valid").asBoolean()).isTrue();
    assertThat(plan.get("granularity").asText()).isEqualTo("hour");
    assertThat(plan.get("columns").get(2).get("type").asText()).isEqualTo("long");
    assertThat(plan.get("deltaPath").asBoolean()).isTrue();

    JsonNode bad =
        json(
            send(
                "POST",
                "/api/validate",
                "{\"query\": \"SELECT symbol FROM lake.market.trades\"}",
                null));
    assertThat(bad.get("valid").asBoolean()).isFalse();
    assertThat(bad.get("rule").asText()).isEqualTo("NO_GROUP_BY");
    assertThat(bad.get("line").asInt()).isEqualTo(1);
  }
}
