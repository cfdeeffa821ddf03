package io.floe.app.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretsTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        // declared PASSWORD, by Floe and by Kafka (also behind Streams' client prefixes)
        "floe.http.token",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "sasl.jaas.config",
        "producer.ssl.key.password",
        "main.consumer.sasl.jaas.config",
        "admin.ssl.truststore.password",
        // Schema Registry
        "basic.auth.user.info",
        "schema.registry.basic.auth.user.info",
        "schema.registry.ssl.truststore.password",
        "schema.registry.ssl.keystore.password",
        "bearer.auth.token",
        "bearer.auth.client.secret",
        // Iceberg catalogs
        "floe.catalog.lake.header.Authorization",
        "floe.catalog.lake.header.X-Api-Key",
        "floe.catalog.lake.token",
        "floe.catalog.lake.credential",
        "floe.catalog.lake.rest.auth.basic.password",
        "floe.catalog.lake.rest.secret-access-key",
        "floe.catalog.lake.jdbc.password",
        "floe.catalog.lake.urn:ietf:params:oauth:token-type:id_token",
        // Iceberg FileIOs
        "floe.catalog.lake.s3.access-key-id",
        "floe.catalog.lake.s3.secret-access-key",
        "floe.catalog.lake.s3.session-token",
        "floe.catalog.lake.s3.sse.key",
        "floe.catalog.lake.gcs.oauth2.token",
        "floe.catalog.lake.adls.auth.shared-key.account.key",
        "floe.catalog.lake.adls.sas-token.myaccount",
        "floe.catalog.lake.adls.connection-string.myaccount",
        "floe.catalog.lake.client.credentials-provider.secret-id",
        // and whatever looks like one
        "some.client.secret",
        "storage.account.key",
        "my.api-key",
        "floe.catalog.lake.private-key"
      })
  void shouldTreatTheKnownSecretKeysAsSecrets(String key) {
    assertThat(Secrets.isSecret(key)).isTrue();
    assertThat(Secrets.value(key, "hunter2", "hunter2")).isEqualTo(Secrets.MASK);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "bootstrap.servers",
        "application.id",
        "key.serializer",
        "floe.http.port",
        "floe.catalog.lake.type",
        "floe.catalog.lake.uri",
        "floe.catalog.lake.warehouse",
        "floe.catalog.lake.s3.endpoint",
        "floe.catalog.lake.adls.auth.shared-key.account.name",
        "schema.registry.url"
      })
  void shouldShowOrdinaryKeys(String key) {
    assertThat(Secrets.isSecret(key)).isFalse();
    assertThat(Secrets.value(key, "plain", "plain")).isEqualTo("plain");
  }

  @Test
  void shouldMaskEveryValueThatCameThroughAConfigProvider() {
    assertThat(Secrets.value("floe.catalog.lake.warehouse", "${env:WAREHOUSE}", "s3://b/wh"))
        .isEqualTo(Secrets.MASK);
    assertThat(
            Secrets.value(
                "floe.catalog.lake.warehouse",
                "s3://${file:/etc/floe/s.properties:b}/w",
                "s3://b/w"))
        .isEqualTo(Secrets.MASK);
    // A value the provider left alone (unresolved) still reads as a reference: masked too.
    assertThat(Secrets.value("floe.http.advertised-host", "${env:POD_IP}", "${env:POD_IP}"))
        .isEqualTo(Secrets.MASK);
  }

  @Test
  void shouldMaskTheUserInfoOfEveryUriAndKeepTheRest() {
    assertThat(
            Secrets.value(
                "schema.registry.url",
                null,
                "https://alice:s3cret@registry-1:8081,http://bob:pw@registry-2:8081/"))
        .isEqualTo("https://********@registry-1:8081,http://********@registry-2:8081/");
    assertThat(Secrets.text("jdbc:postgresql://floe:p%40ss@db.example:5432/catalog?ssl=true"))
        .isEqualTo("jdbc:postgresql://********@db.example:5432/catalog?ssl=true");
    assertThat(Secrets.text("http://floe:p@ss@host:8181/v1"))
        .isEqualTo("http://********@host:8181/v1");
    assertThat(Secrets.text("https://TOKEN123@git.example/repo"))
        .isEqualTo("https://********@git.example/repo");
    assertThat(Secrets.text("http://rest-catalog:8181")).isEqualTo("http://rest-catalog:8181");
  }

  @Test
  void shouldMaskThePasswordOfAUserBeforeAHostOutsideAUri() {
    // PostgreSQL's driver takes a URI's user-info for its host name and reports it so
    assertThat(Secrets.text("java.net.UnknownHostException: floe:s3cr3t@127.0.0.1"))
        .isEqualTo("java.net.UnknownHostException: floe:********@127.0.0.1");
    assertThat(Secrets.text("host (floe:p@ss@db.example:5432)"))
        .isEqualTo("host (floe:********@db.example:5432)");
    assertThat(
            Secrets.text("at org.postgresql.Driver.connect(Driver.java:305) for alice@example.com"))
        .isEqualTo("at org.postgresql.Driver.connect(Driver.java:305) for alice@example.com");
    assertThat(Secrets.text("jdbc:postgresql://********@db/lake"))
        .isEqualTo("jdbc:postgresql://********@db/lake");
  }

  @Test
  void shouldMaskSecretQueryParameters() {
    assertThat(Secrets.text("jdbc:postgresql://db/catalog?user=floe&password=hunter2&ssl=true"))
        .isEqualTo("jdbc:postgresql://db/catalog?user=floe&password=********&ssl=true");
    assertThat(Secrets.text("https://acct.blob.core.windows.net/c?sv=2022&sig=abc%2Fdef"))
        .isEqualTo("https://acct.blob.core.windows.net/c?sv=2022&sig=********");
  }

  @Test
  void shouldMaskTheConfigurationAsAWhole() {
    assertThat(
            Secrets.masked(
                java.util.Map.of(
                    "floe.http.token", "abc", "floe.catalog.lake.uri", "http://u:p@rest:8181"),
                java.util.Map.of(
                    "floe.http.token", "abc", "floe.catalog.lake.uri", "http://u:p@rest:8181")))
        .containsExactly(
            java.util.Map.entry("floe.catalog.lake.uri", "http://********@rest:8181"),
            java.util.Map.entry("floe.http.token", Secrets.MASK));
  }
}
