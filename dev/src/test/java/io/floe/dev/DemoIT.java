package io.floe.dev;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe demo --for 60s --verify}, run as a user runs it ({@code ./floe demo}): the developer
 * tool's packaged jar in its own process. While it runs, the HTTP API answers; at the end every
 * view must equal the oracle.
 */
class DemoIT {

  private static final List<String> VIEWS =
      List.of(
          "ohlcv_1m",
          "ohlcv_1h",
          "daily_buy_volume",
          "weekly_bars",
          "price_percentiles_1h",
          "volume_by_sector_5m");

  @TempDir Path dir;

  @Test
  void shouldRunTheDemoAndVerifyEveryViewAgainstTheOracle() throws Exception {
    Path jar = Path.of("target", "floe-dev.jar").toAbsolutePath();
    assertThat(jar).exists();
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path output = dir.resolve("demo.log");
    Process demo =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g",
                "-Djava.io.tmpdir=" + dir,
                "-jar",
                jar.toString(),
                "demo",
                "--dir",
                dir.resolve("demo").toString(),
                "--port",
                String.valueOf(port),
                "--for",
                "60s",
                "--verify")
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    try {
      // While it runs, the API lists the six views and at least one has refreshed. (No fixed
      // deadline short of the demo's own end: on a loaded machine start-up alone can take long.)
      List<String> names = new ArrayList<>();
      boolean refreshed = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
      while (demo.isAlive()
          && System.nanoTime() < deadline
          && (names.size() < VIEWS.size() || !refreshed)) {
        Thread.sleep(1000);
        try {
          JsonNode views = views(port);
          names.clear();
          refreshed = false;
          for (JsonNode view : views) {
            names.add(view.get("name").asText());
            refreshed |= view.hasNonNull("lastRefresh");
          }
        } catch (java.io.IOException notYet) {
          // still starting
        }
      }
      assertThat(names).containsExactlyInAnyOrderElementsOf(VIEWS);
      assertThat(refreshed).isTrue();

      assertThat(demo.waitFor(5, TimeUnit.MINUTES)).isTrue();
    } finally {
      demo.destroyForcibly();
    }
    String log = Files.readString(output);
    assertThat(demo.exitValue()).as(log).isZero();
    assertThat(log)
        .contains("Verified: every view equals its query evaluated from scratch")
        .doesNotContain("DIFFERS");
    // Each view refreshed incrementally at least once, the source saw every kind of commit, and a
    // symbol moved to another sector, which the view joined to the symbols followed with a refresh
    // (the oracle at the end says it was right).
    for (String view : VIEWS) {
      assertThat(log).as(view).containsPattern("(?m)^\\S+  " + view + " +incremental ");
    }
    assertThat(log)
        .contains("source late")
        .contains("source delete")
        .contains("source overwrite")
        .contains("source compaction")
        .containsPattern("(?m)source sector +\\S+ moved from \\S+ to \\S+")
        .containsPattern(
            "(?m)^\\S+  source sector .*\\R(?:.*\\R)*?\\S+  volume_by_sector_5m +(?:full|incremental) ");
  }

  private static JsonNode views(int port) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/views"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new java.io.IOException("status " + response.statusCode());
    }
    return new ObjectMapper().readTree(response.body());
  }
}
