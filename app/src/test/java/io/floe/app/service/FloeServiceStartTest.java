package io.floe.app.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.config.FloeConfig;
import io.floe.app.http.HttpApi;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FloeServiceStartTest {

  @TempDir Path dir;

  @Test
  void shouldServeLivenessWhileTheTopicsWaitForTheBroker() throws Exception {
    // Given a service whose broker does not answer (a port nothing listens on), so that setting
    // up its topics waits until the clients' API timeout
    int httpPort = freePort();
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", "127.0.0.1:" + freePort());
    p.setProperty("default.api.timeout.ms", "20000");
    p.setProperty("request.timeout.ms", "20000");
    p.setProperty("floe.catalog.lake.type", "jdbc");
    p.setProperty("floe.catalog.lake.uri", "jdbc:sqlite:" + dir.resolve("catalog.db"));
    p.setProperty(FloeConfig.HTTP_HOST, "127.0.0.1");
    p.setProperty(FloeConfig.HTTP_PORT, Integer.toString(httpPort));
    p.setProperty("state.dir", dir.resolve("state").toString());
    try (FloeService service = new FloeService(FloeConfig.of(p, dir))) {

      // When it starts
      CompletableFuture<Void> start =
          CompletableFuture.runAsync(
              () -> {
                try {
                  service.start();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });

      // Then its HTTP server answers while the start still waits for the topics: alive, not ready
      HttpClient http = HttpClient.newHttpClient();
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() -> status(http, httpPort, HttpApi.LIVE_PATH) == 200);
      assertThat(start).isNotDone();
      assertThat(status(http, httpPort, HttpApi.READY_PATH)).isEqualTo(503);
    }
  }

  @Test
  void shouldLoadTheStoresNativeLibraryWhileTheTopicsWaitForTheBroker() throws Exception {
    // Given a service whose broker does not answer, so that setting up its topics waits
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", "127.0.0.1:" + freePort());
    p.setProperty("default.api.timeout.ms", "20000");
    p.setProperty("request.timeout.ms", "20000");
    p.setProperty("floe.catalog.lake.type", "jdbc");
    p.setProperty("floe.catalog.lake.uri", "jdbc:sqlite:" + dir.resolve("catalog.db"));
    p.setProperty(FloeConfig.HTTP_ENABLED, "false");
    p.setProperty("state.dir", dir.resolve("state").toString());
    try (FloeService service = new FloeService(FloeConfig.of(p, dir))) {

      // When it starts
      CompletableFuture<Void> start =
          CompletableFuture.runAsync(
              () -> {
                try {
                  service.start();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });

      // Then RocksDB's native library is loaded before Kafka Streams exists, off the stream
      // thread that would load it when it opens its first store
      await().atMost(Duration.ofSeconds(15)).until(() -> service.storesLibrary() != null);
      assertThat(service.storesLibrary()).succeedsWithin(Duration.ofSeconds(15));
      assertThat(start).isNotDone();
      assertThat(service.streams()).isNull();
    }
  }

  private static int status(HttpClient http, int port, String path) throws InterruptedException {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
