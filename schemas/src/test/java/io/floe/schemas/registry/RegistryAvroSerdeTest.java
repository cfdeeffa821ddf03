package io.floe.schemas.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.schemas.AvroSerde;
import io.floe.schemas.FloeSerdes;
import io.floe.schemas.TableCommitted;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.apache.avro.Schema;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Schema Registry wire format, against a real HTTP server that speaks the registry's API. */
class RegistryAvroSerdeTest {

  private static final String TOPIC = "floe.commits";

  @TempDir Path dir;

  private static TableCommitted notice() {
    return TableCommitted.newBuilder()
        .setCatalog("lake")
        .setNamespace(List.of("market"))
        .setTable("trades")
        .setSnapshotId(42L)
        .setEventTime(Instant.parse("2026-04-08T10:00:00Z"))
        .setProducer("test")
        .build();
  }

  private static Serde<TableCommitted> serde(Map<String, ?> config) {
    return FloeSerdes.fromConfig(config).tableCommitted();
  }

  @Test
  void shouldRegisterUnderTheTopicSubjectWriteTheWireFormatAndCache() throws Exception {
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start(null)) {
      Serde<TableCommitted> serde = serde(Map.of(SchemaRegistryClient.URL, registry.url()));

      byte[] bytes = serde.serializer().serialize(TOPIC, notice());

      Integer id = registry.idOf(TOPIC + "-value", TableCommitted.getClassSchema());
      assertThat(id).isNotNull();
      assertThat(bytes[0]).isZero();
      assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).isEqualTo(id);
      assertThat(serde.deserializer().deserialize(TOPIC, bytes)).isEqualTo(notice());
      int requests = registry.requests();
      serde.serializer().serialize(TOPIC, notice());
      assertThat(registry.requests()).as("ids are cached").isEqualTo(requests);

      // A reader that has never seen the schema fetches it by id, once.
      Serde<TableCommitted> reader = serde(Map.of(SchemaRegistryClient.URL, registry.url()));
      reader.deserializer().deserialize(TOPIC, bytes);
      reader.deserializer().deserialize(TOPIC, bytes);
      assertThat(registry.requests()).isEqualTo(requests + 1);
    }
  }

  @Test
  void shouldReadRecordedWireFormatBytesOfAnOlderWriterSchema() throws Exception {
    Schema v1;
    try (InputStream in = getClass().getResourceAsStream("/compat/v1/TableCommitted.avsc")) {
      v1 = new Schema.Parser().parse(in);
    }
    byte[] recorded;
    try (InputStream in = getClass().getResourceAsStream("/registry/table-committed-v1-id7.hex")) {
      recorded =
          HexFormat.of().parseHex(new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip());
    }
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start(null)) {
      registry.preload(TOPIC + "-value", v1, 7);

      TableCommitted read =
          serde(Map.of(SchemaRegistryClient.URL, registry.url()))
              .deserializer()
              .deserialize(TOPIC, recorded);

      assertThat(read.getCatalog()).isEqualTo("lake");
      assertThat(read.getNamespace()).containsExactly("market");
      assertThat(read.getTable()).isEqualTo("trades");
      assertThat(read.getSnapshotId()).isEqualTo(4242L);
      assertThat(read.getMetadataLocation())
          .isEqualTo("s3://warehouse/market/trades/metadata/00003-5d1b7a2e.metadata.json");
      assertThat(read.getProducer()).isEqualTo("spark-job");
    }
  }

  @Test
  void shouldStillReadSingleObjectRecordsAndExplainWireFormatWithoutARegistry() throws Exception {
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start(null)) {
      Serde<TableCommitted> withRegistry = serde(Map.of(SchemaRegistryClient.URL, registry.url()));
      byte[] singleObject = AvroSerde.of(TableCommitted.class).serialize(TOPIC, notice());
      assertThat(withRegistry.deserializer().deserialize(TOPIC, singleObject)).isEqualTo(notice());

      byte[] wire = withRegistry.serializer().serialize(TOPIC, notice());
      assertThatThrownBy(() -> serde(Map.of()).deserializer().deserialize(TOPIC, wire))
          .isInstanceOf(SerializationException.class)
          .hasMessageContaining("Schema Registry wire format")
          .hasMessageContaining(SchemaRegistryClient.URL);
    }
  }

  @Test
  void shouldAuthenticateWithBasicAuthAndReportARefusal() throws Exception {
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start("floe:s3cret")) {
      Serde<TableCommitted> good =
          serde(
              Map.of(
                  SchemaRegistryClient.URL, registry.url(),
                  SchemaRegistryClient.BASIC_AUTH_SOURCE, "USER_INFO",
                  SchemaRegistryClient.BASIC_AUTH_USER_INFO, "floe:s3cret"));
      byte[] bytes = good.serializer().serialize(TOPIC, notice());
      assertThat(good.deserializer().deserialize(TOPIC, bytes)).isEqualTo(notice());

      Serde<TableCommitted> wrong =
          serde(
              Map.of(
                  SchemaRegistryClient.URL,
                  registry.url(),
                  SchemaRegistryClient.BASIC_AUTH_USER_INFO,
                  "floe:wrong"));
      assertThatThrownBy(() -> wrong.serializer().serialize(TOPIC, notice()))
          .isInstanceOf(SerializationException.class)
          .hasMessageContaining("HTTP 401")
          .hasMessageContaining("Unauthorized");
    }
  }

  @Test
  void shouldTakeCredentialsFromTheUrlAndNeverQuoteThem() throws Exception {
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start("floe:s3cret")) {
      String withUserInfo = registry.url().replace("://", "://floe:s3cret@");
      Serde<TableCommitted> good =
          serde(
              Map.of(
                  SchemaRegistryClient.URL,
                  withUserInfo,
                  SchemaRegistryClient.BASIC_AUTH_SOURCE,
                  "URL"));
      byte[] bytes = good.serializer().serialize(TOPIC, notice());
      assertThat(good.deserializer().deserialize(TOPIC, bytes)).isEqualTo(notice());

      Serde<TableCommitted> wrong =
          serde(
              Map.of(
                  SchemaRegistryClient.URL,
                  registry.url().replace("://", "://floe:wr0ng@"),
                  SchemaRegistryClient.BASIC_AUTH_SOURCE,
                  "URL"));
      assertThatThrownBy(() -> wrong.serializer().serialize(TOPIC, notice()))
          .isInstanceOf(SerializationException.class)
          .hasMessageContaining("HTTP 401")
          .hasMessageContaining(registry.url())
          .hasMessageNotContaining("wr0ng");
    }
  }

  @Test
  void shouldOnlyLookUpWhenAutoRegistrationIsOff() throws Exception {
    try (FakeSchemaRegistry registry = FakeSchemaRegistry.start(null)) {
      Map<String, String> config =
          Map.of(
              SchemaRegistryClient.URL,
              registry.url(),
              SchemaRegistryClient.AUTO_REGISTER,
              "false");
      assertThatThrownBy(() -> serde(config).serializer().serialize(TOPIC, notice()))
          .isInstanceOf(SerializationException.class)
          .hasMessageContaining("40403");

      registry.preload(TOPIC + "-value", TableCommitted.getClassSchema(), 55);
      byte[] bytes = serde(config).serializer().serialize(TOPIC, notice());
      assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).isEqualTo(55);
    }
  }

  @Test
  void shouldTrustARegistryOverTlsThroughTheConfiguredTruststore() throws Exception {
    Path keystore = dir.resolve("registry.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "registry",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-validity",
                "2",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=dns:localhost,ip:127.0.0.1",
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue())
        .as(new String(keytool.getInputStream().readAllBytes()))
        .isZero();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      keys.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory keyManagers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, "changeit".toCharArray());
    SSLContext server = SSLContext.getInstance("TLS");
    server.init(keyManagers.getKeyManagers(), null, null);

    try (FakeSchemaRegistry registry = FakeSchemaRegistry.startTls(server)) {
      assertThatThrownBy(
              () ->
                  serde(Map.of(SchemaRegistryClient.URL, registry.url()))
                      .serializer()
                      .serialize(TOPIC, notice()))
          .as("an untrusted certificate is refused")
          .isInstanceOf(SerializationException.class);

      Serde<TableCommitted> trusting =
          serde(
              Map.of(
                  SchemaRegistryClient.URL,
                  registry.url(),
                  SchemaRegistryClient.TRUSTSTORE_LOCATION,
                  keystore.toString(),
                  SchemaRegistryClient.TRUSTSTORE_PASSWORD,
                  "changeit",
                  SchemaRegistryClient.TRUSTSTORE_TYPE,
                  "PKCS12"));
      byte[] bytes = trusting.serializer().serialize(TOPIC, notice());
      assertThat(trusting.deserializer().deserialize(TOPIC, bytes)).isEqualTo(notice());
    }
  }
}
