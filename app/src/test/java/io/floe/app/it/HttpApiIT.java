package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API of a running Floe with a token, over a real broker and catalog: real requests to the
 * real server. {@link HttpAccessIT} covers the servers without a token.
 */
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
    return send(method, path, body, token, Map.of("Content-Type", "application/json"));
  }

  private HttpResponse<String> send(
      String method, String path, String body, String token, Map<String, String> headers)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(request::header);
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return send("GET", path, null, null, Map.of());
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    return send("GET", path, null, token, Map.of());
  }

  private static String view(String name, String query, String target) {
    return JSON.createObjectNode()
        .put("name", name)
        .put("query", query)
        .put("target", target)
        .toString();
  }

  /** Creates a view through the API and waits until the views store has it. */
  private void create(String name, String query) throws Exception {
    HttpResponse<String> created = send("POST", "/api/views", view(name, query), TOKEN);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get("/api/views/" + name, TOKEN).statusCode() == 200);
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
    JsonNode detail = json(get("/api/views/bars", TOKEN));
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
  void shouldRecomputeATimeRangeAnOutsideWriteChangedOnlyWhenAskedFor() throws Exception {
    // Given a view in step with its source, and a row written into its 10:00 bucket behind
    // Floe's back: a group the source does not have
    create("bars", FloeServiceIT.OHLCV_1M);
    ViewDefinition bars = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.awaitOracle(bars, trades);
    Table target = floe.target(bars);
    Record outsider = IcebergFixture.readAll(target, target.currentSnapshot().snapshotId()).get(0);
    outsider = outsider.copy();
    outsider.setField("symbol", "ZZZZ");
    lake.append(target, List.of(outsider));

    // When a refresh is asked for, and a later change of another bucket is refreshed after it
    assertThat(send("POST", "/api/views/bars/refresh", null, TOKEN).statusCode()).isEqualTo(202);
    long later =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T11:00:00Z", 12.0, 1L, "S")));
    assertThat(send("POST", "/api/views/bars/refresh", null, TOKEN).statusCode()).isEqualTo(202);
    floe.awaitEvent("bars", e -> e.getSourceSnapshotId() == later);

    // Then neither knew of a change in 10:00: the outside row stays
    assertThat(rowsOf(floe.target(bars), "ZZZZ")).isEqualTo(1);

    // When the hour holding it is asked for
    HttpResponse<String> range =
        send(
            "POST",
            "/api/views/bars/refresh?from=2026-04-08T10:00:00Z&to=2026-04-08T11:00:00Z",
            null,
            TOKEN);

    // Then that bucket is recomputed from the source, and the event says it was a range
    assertThat(range.statusCode()).as(range.body()).isEqualTo(202);
    assertThat(json(range).get("from").asText()).isEqualTo("2026-04-08T10:00:00Z");
    List<RefreshEvent> events = floe.awaitEvent("bars", e -> "range".equals(e.getScope()));
    RefreshEvent ranged =
        events.stream().filter(e -> "range".equals(e.getScope())).findFirst().get();
    assertThat(ranged.getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(ranged.getSourceSnapshotId()).isEqualTo(later);
    assertThat(events)
        .filteredOn(e -> e.getSourceSnapshotId() == later && e != ranged)
        .extracting(RefreshEvent::getScope)
        .containsOnly("changes");
    assertThat(rowsOf(floe.target(bars), "ZZZZ")).isZero();
    floe.awaitOracle(bars, trades);
  }

  @Test
  void shouldRefuseATimeRangeThatIsHalfGivenUnreadableEmptyOrWithFull() throws Exception {
    create("bars", FloeServiceIT.OHLCV_1M);

    assertRefused("from=2026-04-08T10:00:00Z", "'to' is required with a time range");
    assertRefused("to=2026-04-08", "'from' is required with a time range");
    assertRefused("from=yesterday&to=2026-04-08", "'from' is neither an ISO-8601 instant");
    assertRefused(
        "from=2026-04-08T10:00:00Z&to=2026-04-08T10:00:00Z", "is empty: from must be before to");
    assertRefused("from=2026-04-09&to=2026-04-08", "is empty: from must be before to");
    assertRefused(
        "full=true&from=2026-04-08&to=2026-04-09", "Cannot set both full and a time range");
  }

  private void assertRefused(String query, String reason) throws Exception {
    HttpResponse<String> refused = send("POST", "/api/views/bars/refresh?" + query, null, TOKEN);
    assertThat(refused.statusCode()).as(query).isEqualTo(400);
    assertThat(json(refused).get("error").asText()).as(query).contains(reason);
  }

  private static long rowsOf(Table target, String symbol) {
    target.refresh();
    return IcebergFixture.readAll(target, target.currentSnapshot().snapshotId()).stream()
        .filter(row -> symbol.equals(row.getField("symbol")))
        .count();
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
            + "FROM lake.market.trades t RIGHT JOIN lake.market.symbols s ON t.symbol = s.ticker\n"
            + "GROUP BY 1, 2";
    HttpResponse<String> response = send("POST", "/api/views", view("bad", joined), TOKEN);

    assertThat(response.statusCode()).isEqualTo(400);
    JsonNode error = json(response);
    assertThat(error.get("rule").asText()).isEqualTo("DIMENSION_JOIN");
    assertThat(error.get("line").asInt()).isEqualTo(2);
    assertThat(error.get("column").asInt()).isEqualTo(33);
    assertThat(error.get("error").asText()).contains("RIGHT join");

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
  void shouldRejectAViewBodyWithThePositionOfTheProblemInTheBody() throws Exception {
    // Given a body that is not JSON on its third line, and one with an unknown field there
    String malformed = "{\n  \"name\": \"x\",\n  \"query\": ,\n  \"target\": \"lake.a.x\"\n}";
    String unknown = "{\n  \"name\": \"x\",\n  \"querry\": \"SELECT 1\"\n}";

    // When they are posted
    String malformedError = error(send("POST", "/api/views", malformed, TOKEN));
    String unknownError = error(send("POST", "/api/views", unknown, TOKEN));

    // Then each answer says where in the body the problem is, as for a views file
    assertThat(malformedError).startsWith("request:3:12: malformed JSON");
    assertThat(unknownError).startsWith("request:3:3: view 'x': unknown field 'querry'");
    assertThat(json(get("/api/views"))).isEmpty();
  }

  @Test
  void shouldAnswer404ForAnUnknownViewAnd409ForADuplicate() throws Exception {
    assertThat(get("/api/views/nope", TOKEN).statusCode()).isEqualTo(404);
    assertThat(send("POST", "/api/views/nope/refresh", null, TOKEN).statusCode()).isEqualTo(404);
    assertThat(send("DELETE", "/api/views/nope", null, TOKEN).statusCode()).isEqualTo(404);

    assertThat(send("POST", "/api/views", view("bars", FloeServiceIT.OHLCV_1M), TOKEN).statusCode())
        .isEqualTo(201);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get("/api/views/bars", TOKEN).statusCode() == 200);
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
            TOKEN);
    assertThat(ok.statusCode()).isEqualTo(200);
    JsonNode plan = json(ok);
    assertThat(plan.get("valid").asBoolean()).isTrue();
    assertThat(plan.get("granularity").asText()).isEqualTo("hour");
    assertThat(plan.get("columns").get(2).get("type").asText()).isEqualTo("long");
    assertThat(plan.get("deltaPath").asBoolean()).isTrue();
    // A query alone has no name or target; the answer does not show the stand-ins it was checked as
    assertThat(plan.get("name").isNull()).as(plan.toString()).isTrue();
    assertThat(plan.get("target").isNull()).as(plan.toString()).isTrue();
    assertThat(plan.get("source").asText()).isEqualTo("lake.market.trades");

    JsonNode bad =
        json(
            send(
                "POST",
                "/api/validate",
                "{\"query\": \"SELECT symbol FROM lake.market.trades\"}",
                TOKEN));
    assertThat(bad.get("valid").asBoolean()).isFalse();
    assertThat(bad.get("rule").asText()).isEqualTo("NO_GROUP_BY");
    assertThat(bad.get("line").asInt()).isEqualTo(1);
  }

  @Test
  void shouldNameNoViewOrTargetAValidateRequestDidNotGive() throws Exception {
    // Given a query alone with a time zone that does not exist, and a query with a name only
    String query =
        "SELECT symbol, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.market.trades"
            + " GROUP BY 1, 2";
    String badZone =
        JSON.createObjectNode().put("query", query).put("timezone", "Mars/Olympus").toString();
    String named = JSON.createObjectNode().put("query", query).put("name", "hourly").toString();

    // When each is validated
    JsonNode zone = json(send("POST", "/api/validate", badZone, TOKEN));
    JsonNode name = json(send("POST", "/api/validate", named, TOKEN));

    // Then the error speaks of the view at its line, not of a name the request did not give, and
    // the answers carry the name given and no target
    assertThat(zone.get("valid").asBoolean()).isFalse();
    assertThat(zone.get("error").asText())
        .contains("view at line 1: field 'timezone'")
        .doesNotContain("'validate'");
    assertThat(name.get("valid").asBoolean()).as(name.toString()).isTrue();
    assertThat(name.get("name").asText()).isEqualTo("hourly");
    assertThat(name.get("target").isNull()).as(name.toString()).isTrue();
    // and a definition that cannot be read answers in the one form of a checked view, as a valid
    // one does: the same fields, null where nothing could be derived
    assertThat(fieldNames(zone)).as(zone.toString()).isEqualTo(fieldNames(name));
    assertThat(zone.get("source").isNull()).as(zone.toString()).isTrue();
    assertThat(zone.get("columns").isEmpty()).as(zone.toString()).isTrue();
  }

  @Test
  void shouldAnswerAtOnceWithTheLimitAQueryPasses() throws Exception {
    // Given what a new user tried: 20,000 OR terms (8.3 s of CPU, then "syntax error at line 0,
    // column 0") and 3,000 nested parentheses (the same message)
    StringBuilder terms = new StringBuilder("quantity = 0");
    for (int i = 1; i < 20_000; i++) {
      terms.append(" OR quantity = ").append(i);
    }
    String head =
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
            + " FROM lake.market.trades WHERE ";
    String longQuery = head + terms + " GROUP BY 1, 2";
    String deepQuery =
        head + "(".repeat(3_000) + "quantity = 1" + ")".repeat(3_000) + " GROUP BY 1, 2";

    // When both are validated
    JsonNode tooLong = json(validate(longQuery));
    JsonNode tooDeep = json(validate(deepQuery));

    // Then each is refused with the limit it passed, without Calcite parsing it
    assertThat(tooLong.get("valid").asBoolean()).isFalse();
    assertThat(tooLong.get("rule").asText()).isEqualTo("QUERY_TOO_LONG");
    assertThat(tooLong.get("error").asText())
        .isEqualTo(
            "Invalid view query: a view query may be at most 16384 characters long: this one has "
                + longQuery.length());
    assertThat(tooDeep.get("valid").asBoolean()).isFalse();
    assertThat(tooDeep.get("rule").asText()).isEqualTo("TOO_DEEPLY_NESTED");
    assertThat(tooDeep.get("error").asText())
        .contains("a view query may nest expressions at most 128 levels deep");
    assertThat(tooDeep.get("line").asInt()).isEqualTo(1);
  }

  private HttpResponse<String> validate(String query) throws Exception {
    HttpResponse<String> response =
        send(
            "POST", "/api/validate", JSON.createObjectNode().put("query", query).toString(), TOKEN);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return response;
  }

  private static final String MINUTES =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final String HOURS_OF_MINUTES =
      "SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts, sum(volume) AS volume"
          + " FROM lake.analytics.minutes GROUP BY 1, 2";

  /** A table someone else made and filled: no Floe view may take it or drop it. */
  private void createForeignTable(String name) {
    Table precious = lake.createTable("analytics", name, IcebergFixture.TRADES, unpartitioned());
    lake.append(precious, List.of(lake.trade("IBM", "2026-04-08T09:00:00Z", 1.0, 1L, "B")));
  }

  private static org.apache.iceberg.PartitionSpec unpartitioned() {
    return org.apache.iceberg.PartitionSpec.unpartitioned();
  }

  @Test
  void shouldRequireTheTokenForViewDetailsAndValidationButNotForHealthMetricsOrTheList()
      throws Exception {
    create("bars", MINUTES);

    HttpResponse<String> detail = get("/api/views/bars");
    assertThat(detail.statusCode()).isEqualTo(401);
    assertThat(detail.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"floe\"");
    assertThat(json(detail).get("error").asText()).contains("Authorization: Bearer");
    assertThat(detail.body()).doesNotContain("timestamptz");
    HttpResponse<String> validate =
        send("POST", "/api/validate", "{\"query\": \"SELECT 1\"}", null);
    assertThat(validate.statusCode()).isEqualTo(401);
    assertThat(get("/api/views/bars", "wrong").statusCode()).isEqualTo(401);

    assertThat(get("/health/live").statusCode()).isEqualTo(200);
    assertThat(get("/health/ready").statusCode()).isEqualTo(200);
    assertThat(get("/metrics").statusCode()).isEqualTo(200);
    assertThat(get("/").statusCode()).isEqualTo(200);
    HttpResponse<String> list = get("/api/views");
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(json(list).get(0).get("name").asText()).isEqualTo("bars");
    assertThat(get("/api/views/bars", TOKEN).statusCode()).isEqualTo(200);
  }

  @Test
  void shouldRefuseABodyThatIsNotJsonAndChangeNothing() throws Exception {
    String body = view("bars", MINUTES);

    for (String type : List.of("text/plain", "application/x-www-form-urlencoded")) {
      HttpResponse<String> refused =
          send("POST", "/api/views", body, TOKEN, Map.of("Content-Type", type));
      assertThat(refused.statusCode()).as(type).isEqualTo(415);
      assertThat(json(refused).get("error").asText()).contains("application/json").contains(type);
    }
    HttpResponse<String> untyped = send("POST", "/api/views", body, TOKEN, Map.of());
    assertThat(untyped.statusCode()).isEqualTo(415);
    assertThat(json(untyped).get("error").asText()).contains("(got none)");
    assertThat(send("POST", "/api/views/bars/refresh", null, TOKEN, Map.of()).statusCode())
        .as("a request without a body must be JSON too")
        .isEqualTo(415);
    assertThat(json(get("/api/views"))).isEmpty();

    HttpResponse<String> withCharset =
        send(
            "POST",
            "/api/views",
            body,
            TOKEN,
            Map.of("Content-Type", "Application/JSON; charset=UTF-8"));
    assertThat(withCharset.statusCode()).as(withCharset.body()).isEqualTo(201);
  }

  @Test
  void shouldSendNoCorsHeadersToAPreflightOrACrossOriginRequest() throws Exception {
    Map<String, String> preflight =
        Map.of(
            "Origin", "https://evil.example",
            "Access-Control-Request-Method", "DELETE",
            "Access-Control-Request-Headers", "authorization, content-type");
    List<HttpResponse<String>> responses =
        List.of(
            send("OPTIONS", "/api/views", null, null, preflight),
            send("OPTIONS", "/api/views/bars", null, null, preflight),
            send("GET", "/api/views", null, null, Map.of("Origin", "https://evil.example")),
            send(
                "POST",
                "/api/views",
                view("bars", MINUTES),
                TOKEN,
                Map.of("Origin", "https://evil.example", "Content-Type", "application/json")));

    for (HttpResponse<String> response : responses) {
      assertThat(response.headers().map().keySet())
          .as(response.request().method() + " " + response.request().uri())
          .noneMatch(name -> name.toLowerCase(java.util.Locale.ROOT).startsWith("access-control"));
    }
    assertThat(responses.get(0).statusCode() / 100).as("preflight status").isNotEqualTo(2);
  }

  @Test
  void shouldRefreshTheViewsOfATableWhoseCommitIsPostedToTheApi() throws Exception {
    // Given a view that is current, and a commit of its source that nobody announced
    create("bars", MINUTES);
    ViewDefinition bars = FloeHarness.view("bars", MINUTES);
    floe.awaitOracle(bars, trades);
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:05:00Z", 12.0, 3L, "S")));
    long snapshot = trades.currentSnapshot().snapshotId();

    // When a pipeline posts the commit
    HttpResponse<String> posted =
        send(
            "POST",
            "/api/commits",
            "{\"table\": \"lake.market.trades\", \"snapshotId\": " + snapshot + "}",
            TOKEN);

    // Then the notice is on floe.commits, as floe publish-commit sends it, and the view catches up
    assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
    JsonNode published = json(posted);
    assertThat(published.get("table").asText()).isEqualTo("lake.market.trades");
    assertThat(published.get("snapshotId").asText()).isEqualTo(String.valueOf(snapshot));
    assertThat(published.get("topic").asText()).isEqualTo(floe.topic("commits"));
    floe.awaitOracle(bars, trades);
    assertThat(floe.commitNotices())
        .anySatisfy(
            notice -> {
              assertThat(notice.getProducer()).isEqualTo("floe-http");
              assertThat(notice.getTable()).isEqualTo("trades");
              assertThat(notice.getSnapshotId()).isEqualTo(snapshot);
              assertThat(notice.getMetadataLocation()).endsWith(".metadata.json");
            });
  }

  @Test
  void shouldFillTheSnapshotOfAPostedCommitFromTheCatalog() throws Exception {
    // Given a table committed and a notice without a snapshot id
    long snapshot = trades.currentSnapshot().snapshotId();

    // When it is posted
    HttpResponse<String> posted =
        send("POST", "/api/commits", "{\"table\": \"lake.market.trades\"}", TOKEN);

    // Then the notice carries the table's current snapshot
    assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
    assertThat(json(posted).get("snapshotId").asText()).isEqualTo(String.valueOf(snapshot));
  }

  @Test
  void shouldRefuseAPostedCommitWithoutTheTokenOrWithABadBodyAndPublishNothing() throws Exception {
    String commit = "{\"table\": \"lake.market.trades\"}";
    assertThat(send("POST", "/api/commits", commit, null).statusCode()).isEqualTo(401);

    assertThat(error(send("POST", "/api/commits", "not json", TOKEN)))
        .contains("the body must be a JSON object");
    assertThat(error(send("POST", "/api/commits", "{}", TOKEN)))
        .contains("'table'", "catalog.namespace.table");
    assertThat(error(send("POST", "/api/commits", "{\"table\": \"market.trades\"}", TOKEN)))
        .contains("Table name 'market.trades' must be qualified as catalog.namespace.table");
    assertThat(error(send("POST", "/api/commits", "{\"table\": \"other.market.trades\"}", TOKEN)))
        .contains("unknown catalog 'other' (configured: lake)");
    assertThat(
            error(
                send(
                    "POST",
                    "/api/commits",
                    "{\"table\": \"lake.market.trades\", \"snapshotId\": \"latest\"}",
                    TOKEN)))
        .contains("'snapshotId' must be a snapshot id (a 64-bit integer)");
    assertThat(
            error(
                send(
                    "POST",
                    "/api/commits",
                    "{\"table\": \"lake.market.trades\", \"snapshot_id\": 1}",
                    TOKEN)))
        .contains("unknown field 'snapshot_id'");
    assertThat(floe.commitNotices()).noneMatch(n -> "floe-http".equals(n.getProducer()));
  }

  /** The error message of a 400 answer. */
  private static String error(HttpResponse<String> response) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    return json(response).get("error").asText();
  }

  @Test
  void shouldSendSnapshotIdsAsStrings() throws Exception {
    create("bars", MINUTES);
    floe.awaitOracle(FloeHarness.view("bars", MINUTES), trades);
    String snapshot = String.valueOf(trades.currentSnapshot().snapshotId());

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              JsonNode listed = json(get("/api/views")).get(0);
              assertThat(listed.get("watermark").isTextual()).as(listed.toString()).isTrue();
              assertThat(listed.get("watermark").asText()).isEqualTo(snapshot);
              JsonNode last = listed.get("lastRefresh");
              assertThat(last.get("sourceSnapshotId").isTextual()).isTrue();
              assertThat(last.get("sourceSnapshotId").asText()).isEqualTo(snapshot);
              assertThat(last.get("targetSnapshotId").asText())
                  .isEqualTo(
                      String.valueOf(
                          lake.load("analytics", "bars").currentSnapshot().snapshotId()));
            });
    JsonNode recent = json(get("/api/views/bars", TOKEN)).get("recentRefreshes").get(0);
    assertThat(recent.get("sourceSnapshotId").isTextual()).isTrue();
  }

  @Test
  void shouldRefuseAViewWhoseTargetIsATableFloeDidNotCreate() throws Exception {
    createForeignTable("precious");

    HttpResponse<String> response =
        send("POST", "/api/views", view("grab", MINUTES, "lake.analytics.precious"), TOKEN);

    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(json(response).get("error").asText())
        .isEqualTo(
            "View 'grab' cannot write lake.analytics.precious: the table exists and Floe did not"
                + " create it; choose another target, or drop the table");
    assertThat(json(get("/api/views"))).isEmpty();
    assertThat(floe.storedViews()).isEmpty();
  }

  @Test
  void shouldRefuseAViewThatWritesItsSourceOrAnotherViewsTarget() throws Exception {
    create("minutes", MINUTES);

    HttpResponse<String> ownSource =
        send("POST", "/api/views", view("loop", MINUTES, "lake.market.trades"), TOKEN);
    assertThat(ownSource.statusCode()).isEqualTo(409);
    assertThat(json(ownSource).get("error").asText())
        .isEqualTo("View 'loop' cannot write lake.market.trades: it is its source");

    HttpResponse<String> shared =
        send("PUT", "/api/views/copy", view("copy", MINUTES, "lake.analytics.minutes"), TOKEN);
    assertThat(shared.statusCode()).as(shared.body()).isEqualTo(409);
    assertThat(json(shared).get("error").asText())
        .isEqualTo(
            "View 'copy' cannot write lake.analytics.minutes: it is the target of view"
                + " 'minutes'; a target belongs to one view");
    assertThat(floe.storedViews()).containsOnlyKeys("minutes");
  }

  @Test
  void shouldRefuseAChangeThatMakesChainedViewsACycle() throws Exception {
    create("minutes", MINUTES);
    create("hours", HOURS_OF_MINUTES);
    String minutesOfHours =
        "SELECT symbol, date_trunc('minute', hour_ts) AS minute_ts, sum(volume) AS volume"
            + " FROM lake.analytics.hours GROUP BY 1, 2";

    HttpResponse<String> response =
        send("PUT", "/api/views/minutes", view("minutes", minutesOfHours), TOKEN);

    assertThat(response.statusCode()).as(response.body()).isEqualTo(409);
    assertThat(json(response).get("error").asText())
        .isEqualTo(
            "View 'minutes' cannot read lake.analytics.hours: views would form a cycle,"
                + " minutes -> hours -> minutes (each reads the target of the one before)");
    assertThat(floe.storedViews().get("minutes").getQuery()).isEqualTo(MINUTES);
  }

  @Test
  void shouldDropOnlyATargetFloeCreatedForTheView() throws Exception {
    // A view over a table Floe did not create: written before these checks, or by hand.
    createForeignTable("precious");
    floe.define(
        ViewDefinition.of(
            "intruder", MINUTES, io.floe.topology.view.TableName.parse("lake.analytics.precious")));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get("/api/views/intruder", TOKEN).statusCode() == 200);

    HttpResponse<String> refused =
        send("DELETE", "/api/views/intruder?dropTarget=true", null, TOKEN);

    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(json(refused).get("error").asText())
        .isEqualTo(
            "Cannot drop lake.analytics.precious, the target of view 'intruder': Floe did not"
                + " create it, so it is not this view's to drop; nothing was deleted (delete"
                + " without dropTarget to keep the table)");
    assertThat(lake.catalog().tableExists(TableIdentifier.of("analytics", "precious"))).isTrue();
    assertThat(floe.storedViews()).containsKey("intruder");

    HttpResponse<String> kept = send("DELETE", "/api/views/intruder", null, TOKEN);
    assertThat(kept.statusCode()).isEqualTo(200);
    assertThat(json(kept).get("targetDropped").asBoolean()).isFalse();
    assertThat(lake.catalog().tableExists(TableIdentifier.of("analytics", "precious"))).isTrue();
  }

  @Test
  void shouldNeverTakeOverNorDropAnEmptyTableFloeDidNotCreate() throws Exception {
    // A table someone else made, whose rows were all deleted: no view may take it or drop it.
    Table vacant = lake.createTable("analytics", "vacant", IcebergFixture.TRADES, unpartitioned());
    lake.append(vacant, List.of(lake.trade("IBM", "2026-04-08T09:00:00Z", 1.0, 1L, "B")));
    lake.deleteFiles(vacant, row -> true);
    vacant.refresh();
    floe.define(
        ViewDefinition.of(
            "intruder", MINUTES, io.floe.topology.view.TableName.parse("lake.analytics.vacant")));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              HttpResponse<String> details = get("/api/views/intruder", TOKEN);
              return details.statusCode() == 200
                  && "ERROR".equals(json(details).path("status").asText());
            });
    assertThat(json(get("/api/views/intruder", TOKEN)).path("lastError").asText())
        .isEqualTo(
            "Target lake.analytics.vacant exists and was not created by Floe: refusing to use it;"
                + " drop it or choose another target for view 'intruder'");

    HttpResponse<String> refused =
        send("DELETE", "/api/views/intruder?dropTarget=true", null, TOKEN);

    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
    Table after = lake.load("analytics", "vacant");
    assertThat(after.currentSnapshot().snapshotId())
        .isEqualTo(vacant.currentSnapshot().snapshotId());
    assertThat(after.schema().sameSchema(vacant.schema())).isTrue();
    assertThat(after.properties()).isEqualTo(vacant.properties());
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
