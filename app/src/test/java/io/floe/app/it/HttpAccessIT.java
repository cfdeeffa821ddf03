package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.app.testing.LogCapture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API of a running Floe without a token: open on loopback to requests addressed to
 * loopback, open everywhere only when asked for ({@code floe.http.auth=none}); with a token, the
 * instance-to-instance endpoint is guarded like every other and instances still reach each other.
 * Real server, real requests. {@code RunCommandTest} covers the refusal to start without a token
 * elsewhere.
 */
class HttpAccessIT {

  private static final String VIEW =
      "{\"name\": \"bars\", \"target\": \"lake.analytics.bars\", \"query\": \"SELECT symbol,"
          + " date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2\"}";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "it-token-4f1c";
  private static final String BARS_QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";

  @TempDir Path dir;
  private FloeHarness floe;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    floe.lake().createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private HttpResponse<String> post(FloeService service, String path, String body)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(FloeService service, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(FloeService service, String path, String token)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
            .header("Authorization", "Bearer " + token)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private void awaitReady(FloeService service) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> get(service, "/health/ready").statusCode() == 200);
  }

  /** A request with a Host header of our choosing, which java.net.http does not allow to set. */
  private static String rawRequest(int port, String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.UTF_8));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      return in.readLine();
    }
  }

  @Test
  void shouldServeChangesWithoutATokenWhenBoundToLoopback() throws Exception {
    FloeService service = floe.start("a");
    awaitReady(service);

    HttpResponse<String> created = post(service, "/api/views", VIEW);

    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get(service, "/api/views/bars").statusCode() == 200);
    assertThat(post(service, "/api/validate", "{\"query\": \"SELECT 1\"}").statusCode())
        .isEqualTo(200);
  }

  @Test
  void shouldRefuseRequestsAddressedToAnotherNameWhenOpenOnLoopback() throws Exception {
    FloeService service = floe.start("a");
    awaitReady(service);
    String body = VIEW;
    String request =
        "POST /api/views HTTP/1.1\r\n"
            + "Host: %s\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: "
            + body.getBytes(StandardCharsets.UTF_8).length
            + "\r\nConnection: close\r\n\r\n"
            + body;

    // A page on a name that resolves to 127.0.0.1 (DNS rebinding) is same-origin for the browser.
    String rebound =
        rawRequest(service.httpPort(), request.formatted("evil.example:" + service.httpPort()));
    String details =
        rawRequest(
            service.httpPort(),
            "GET /api/views/bars HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");

    assertThat(rebound).isEqualTo("HTTP/1.1 403 Forbidden");
    assertThat(details).isEqualTo("HTTP/1.1 403 Forbidden");
    assertThat(floe.storedViews()).isEmpty();
    for (String host : List.of("localhost", "127.0.0.1", "[::1]")) {
      String list =
          rawRequest(
              service.httpPort(),
              "GET /api/views/none HTTP/1.1\r\nHost: "
                  + host
                  + ":"
                  + service.httpPort()
                  + "\r\nConnection: close\r\n\r\n");
      assertThat(list).as(host).isEqualTo("HTTP/1.1 404 Not Found");
    }
  }

  @Test
  void shouldServeEveryoneOnEveryAddressOnlyWhenOpenedExplicitlyAndWarn() throws Exception {
    FloeService service;
    try (LogCapture log = LogCapture.floe()) {
      service =
          floe.start(
              "a",
              Map.of(
                  FloeConfig.HTTP_HOST,
                  "0.0.0.0",
                  FloeConfig.HTTP_AUTH,
                  FloeConfig.HTTP_AUTH_NONE));
      assertThat(log.lines())
          .anyMatch(
              line ->
                  line.startsWith("WARN ")
                      && line.contains("floe.http.auth=none")
                      && line.contains("without a token"));
    }
    awaitReady(service);

    HttpResponse<String> created = post(service, "/api/views", VIEW);

    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
  }

  @Test
  void shouldRefuseTheInstanceStatesWithoutTheToken() throws Exception {
    // Given an instance with a token that maintains a view
    FloeService service = floe.start("a", Map.of(FloeConfig.HTTP_TOKEN, TOKEN));
    awaitReady(service);
    floe.define(FloeHarness.view("bars", BARS_QUERY));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get(service, "/internal/view-states", TOKEN).body().contains("\"bars\""));

    // When the instance states are asked for without the token, with a wrong one, with the right
    // one
    HttpResponse<String> missing = get(service, "/internal/view-states");
    HttpResponse<String> wrong = get(service, "/internal/view-states", "not-" + TOKEN);
    HttpResponse<String> right = get(service, "/internal/view-states", TOKEN);

    // Then only the right token reads them
    assertThat(missing.statusCode()).as(missing.body()).isEqualTo(401);
    assertThat(missing.body()).contains("bearer token").doesNotContain("bars");
    assertThat(wrong.statusCode()).as(wrong.body()).isEqualTo(401);
    assertThat(wrong.body()).doesNotContain("bars");
    assertThat(right.statusCode()).isEqualTo(200);
    assertThat(right.body()).contains("\"bars\"");
  }

  @Test
  void shouldReadTheOtherInstanceStatesWithTheToken() throws Exception {
    // Given two instances with a token and a view on each partition's instance
    FloeService a = floe.start("a", Map.of(FloeConfig.HTTP_TOKEN, TOKEN));
    FloeService b = floe.start("b", Map.of(FloeConfig.HTTP_TOKEN, TOKEN));
    awaitReady(a);
    awaitReady(b);
    List<String> names = List.of("v1", "v2", "v3", "v4", "v5", "v6");
    for (String name : names) {
      floe.define(FloeHarness.view(name, BARS_QUERY));
    }
    // Both instances own some of the views, so each answers for some through the other.
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                !local(a).isEmpty()
                    && !local(b).isEmpty()
                    && local(a).size() + local(b).size() == names.size());

    // When each instance is asked for every view
    for (FloeService service : List.of(a, b)) {
      // Then every view has its state, the other instance's views included
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                for (String name : names) {
                  HttpResponse<String> view = get(service, "/api/views/" + name, TOKEN);
                  assertThat(view.statusCode()).as(view.body()).isEqualTo(200);
                  assertThat(JSON.readTree(view.body()).path("status").asText())
                      .as(name + " on " + service.httpPort() + ": " + view.body())
                      .isNotEqualTo("UNKNOWN");
                }
              });
    }
  }

  private java.util.Set<String> local(FloeService service) throws Exception {
    HttpResponse<String> states = get(service, "/internal/view-states", TOKEN);
    assertThat(states.statusCode()).as(states.body()).isEqualTo(200);
    java.util.Set<String> names = new java.util.TreeSet<>();
    JSON.readTree(states.body()).fieldNames().forEachRemaining(names::add);
    return names;
  }
}
