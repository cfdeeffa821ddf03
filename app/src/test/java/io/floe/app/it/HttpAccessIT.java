package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
 * loopback, open everywhere only when asked for ({@code floe.http.auth=none}). Real server, real
 * requests. {@code RunCommandTest} covers the refusal to start without a token elsewhere.
 */
class HttpAccessIT {

  private static final String VIEW =
      "{\"name\": \"bars\", \"target\": \"lake.analytics.bars\", \"query\": \"SELECT symbol,"
          + " date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2\"}";

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
}
