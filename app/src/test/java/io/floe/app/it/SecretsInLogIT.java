package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.app.testing.LogCapture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets never reach the log (DESIGN §7): a Floe fed every kind of secret Floe knows of, started
 * over a real broker and catalog, with every logger at INFO (the libraries too), writes none of
 * them, in the start-up line or anywhere else, even when catalogs that hold credentials in their
 * URIs fail.
 */
class SecretsInLogIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private final Map<String, String> secrets = new LinkedHashMap<>();

  @AfterEach
  void tearDown() throws Exception {
    if (floe != null) {
      floe.close();
    }
  }

  /** A value no log would contain by chance, remembered as a secret. */
  private String secret(String what) {
    String value = "s3cr3t" + what + UUID.randomUUID().toString().substring(0, 8);
    secrets.put(what, value);
    return value;
  }

  @Test
  void shouldLogNoSecretFromAnySourceWhileStartingFailingAndServing() throws Exception {
    floe = new FloeHarness(dir);
    floe.lake().createTrades("market", "trades");
    Path providerFile = dir.resolve("secrets.properties");
    String token = secret("Token");
    Files.writeString(
        providerFile,
        "token=" + token + "\nwarehouse=s3://" + secret("ProvidedBucket") + "/warehouse\n");
    String provided = "${file:" + providerFile + ":";
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("config.providers", "file");
    settings.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    // Declared PASSWORD, and through a config provider.
    settings.put(FloeConfig.HTTP_TOKEN, provided + "token}");
    // Kafka's secrets (unused on a PLAINTEXT listener, but configured).
    settings.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"floe\""
            + " password=\""
            + secret("Jaas")
            + "\";");
    settings.put("ssl.truststore.password", secret("Truststore"));
    settings.put("producer.ssl.key.password", secret("ProducerKey"));
    // The Schema Registry's (no registry URL: Floe does not use them here).
    settings.put("basic.auth.user.info", "floe:" + secret("RegistryUserInfo"));
    settings.put("bearer.auth.client.secret", secret("RegistryClientSecret"));
    // A REST catalog's and its FileIOs', with credentials in the URI; views read from it fail.
    String rest = "floe.catalog.rest.";
    settings.put(rest + "type", "rest");
    settings.put(rest + "uri", "http://floe:" + secret("RestUserInfo") + "@127.0.0.1:1/catalog");
    settings.put(rest + "header.Authorization", "Bearer " + secret("RestHeader"));
    settings.put(rest + "credential", "client:" + secret("RestCredential"));
    settings.put(rest + "token", secret("RestToken"));
    settings.put(rest + "s3.secret-access-key", secret("S3Secret"));
    settings.put(rest + "s3.session-token", secret("S3Session"));
    settings.put(rest + "adls.auth.shared-key.account.key", secret("AdlsAccountKey"));
    settings.put(rest + "gcs.oauth2.token", secret("GcsToken"));
    settings.put(rest + "warehouse", provided + "warehouse}");
    // A JDBC catalog whose driver is missing: the driver's message quotes its URI.
    String jdbc = "floe.catalog.pg.";
    settings.put(jdbc + "type", "jdbc");
    settings.put(
        jdbc + "uri", "jdbc:postgresql://floe:" + secret("JdbcUserInfo") + "@127.0.0.1:1/lake");
    settings.put(jdbc + "jdbc.password", secret("JdbcPassword"));
    settings.put(jdbc + "warehouse", dir.resolve("pg-warehouse").toString());
    Path views = dir.resolve("views.yaml");
    Files.writeString(
        views,
        "views:\n"
            + view("minutes", "lake.market.trades")
            + view("from_rest", "rest.market.trades")
            + view("from_pg", "pg.market.trades"));
    settings.put(FloeConfig.VIEWS_FILE, views.toString());

    String log;
    try (LogCapture capture = LogCapture.everything(Level.INFO)) {
      FloeService service = floe.start("a", settings);
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + service.httpPort();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  http.send(
                              HttpRequest.newBuilder(URI.create(base + "/health/ready")).build(),
                              HttpResponse.BodyHandlers.ofString())
                          .statusCode()
                      == 200);
      HttpResponse<String> created =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/api/views"))
                  .header("Content-Type", "application/json")
                  .header("Authorization", "Bearer " + token)
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"name\": \"api_view\", \"target\": \"rest.analytics.x\", \"query\":"
                              + " \"SELECT date_trunc('day', ts) AS d, count(*) AS n"
                              + " FROM lake.market.trades GROUP BY 1\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(created.statusCode()).as(created.body()).isEqualTo(409);
      assertThat(created.body()).contains("rest.analytics.x");
      secrets.values().forEach(s -> assertThat(created.body()).doesNotContain(s));
      // A failure whose stack trace carries the driver's message, which quotes the JDBC URI.
      floe.define(
          io.floe.topology.view.ViewDefinition.of(
              "to_pg",
              "SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.market.trades GROUP BY 1",
              io.floe.topology.view.TableName.parse("pg.analytics.to_pg")));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  http.send(
                          HttpRequest.newBuilder(URI.create(base + "/api/views")).build(),
                          HttpResponse.BodyHandlers.ofString())
                      .body()
                      .contains("to_pg"));
      HttpResponse<String> failed =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/api/views/to_pg?dropTarget=true"))
                  .header("Content-Type", "application/json")
                  .header("Authorization", "Bearer " + token)
                  .DELETE()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(failed.statusCode()).as(failed.body()).isEqualTo(500);
      secrets.values().forEach(s -> assertThat(failed.body()).doesNotContain(s));
      floe.stopServices();
      log = capture.text();
    }

    assertThat(log)
        .contains("Starting Floe with configuration")
        .contains(FloeConfig.HTTP_TOKEN + "=********")
        .contains(rest + "uri=http://********@127.0.0.1:1/catalog")
        .contains(rest + "warehouse=********")
        .contains(jdbc + "uri=jdbc:postgresql://********@127.0.0.1:1/lake")
        .contains("View from_rest in the views file is invalid")
        .contains("View from_pg in the views file is invalid")
        .contains("DELETE /api/views/to_pg failed")
        .contains("Failed to connect: jdbc:postgresql://********@127.0.0.1:1/lake");
    for (Map.Entry<String, String> secret : secrets.entrySet()) {
      assertThat(log).as(secret.getKey()).doesNotContain(secret.getValue());
    }
  }

  private static String view(String name, String source) {
    return "  - name: "
        + name
        + "\n    query: \"SELECT date_trunc('day', ts) AS d, count(*) AS n FROM "
        + source
        + " GROUP BY 1\"\n    target: lake.analytics."
        + name
        + "\n";
  }
}
