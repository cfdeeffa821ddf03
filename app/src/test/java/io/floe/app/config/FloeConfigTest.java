package io.floe.app.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.iceberg.CountingFileIO;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FloeConfigTest {

  private static Properties minimal() {
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", "localhost:9092");
    p.setProperty("floe.catalog.lake.type", "jdbc");
    p.setProperty("floe.catalog.lake.uri", "jdbc:sqlite:/tmp/c.db");
    return p;
  }

  @Test
  void shouldApplyDefaultsAndPassKafkaKeysThrough() {
    Properties p = minimal();
    p.setProperty("num.stream.threads", "3");

    FloeConfig config = FloeConfig.of(p, Path.of("/etc/floe"));

    assertThat(config.topics().commits()).isEqualTo("floe.commits");
    assertThat(config.getInt(FloeConfig.TOPIC_PARTITIONS)).isEqualTo(12);
    Properties streams = config.streamsProperties();
    assertThat(streams.getProperty("num.stream.threads")).isEqualTo("3");
    assertThat(streams.getProperty("processing.guarantee")).isEqualTo("exactly_once_v2");
    assertThat(streams.getProperty("application.id")).isEqualTo("floe");
    assertThat(streams.getProperty("errors.dead.letter.queue.topic.name")).isEqualTo("floe.dlq");
    assertThat(streams.getProperty("deserialization.exception.handler"))
        .isEqualTo("io.floe.topology.processor.DeadLetterDeserializationHandler");
    assertThat(streams).doesNotContainKey("floe.catalog.lake.type");
    assertThat(config.clientProperties()).containsEntry("bootstrap.servers", "localhost:9092");
  }

  @Test
  void shouldCacheManifestsInFloesCacheAndIcebergsOnlyWhereFloeCannotWrapTheFileIo() {
    // Given a catalog Floe wraps, one that sizes Iceberg's manifest cache itself, and one of a
    // custom implementation whose FileIO Floe cannot wrap
    Properties p = minimal();
    p.setProperty("floe.cache.bytes", "100000000");
    p.setProperty("floe.catalog.other.type", "jdbc");
    p.setProperty("floe.catalog.other.io.manifest.cache.max-total-bytes", "1000");
    p.setProperty("floe.catalog.custom.catalog-impl", "org.example.MyCatalog");

    // When their Iceberg properties are built
    CatalogConfig catalogs = FloeConfig.of(p, null).catalogs();

    // Then the wrapped catalogs leave Iceberg's cache as they set it (Floe's cache serves their
    // manifests), and the custom one has it on, with a share of half the bytes
    assertThat(catalogs.icebergProperties("lake"))
        .containsEntry("io-impl", CountingFileIO.class.getName())
        .doesNotContainKey("io.manifest.cache-enabled")
        .containsEntry("uri", "jdbc:sqlite:/tmp/c.db");
    assertThat(catalogs.icebergProperties("other"))
        .doesNotContainKey("io.manifest.cache-enabled")
        .containsEntry("io.manifest.cache.max-total-bytes", "1000");
    assertThat(catalogs.icebergProperties("custom"))
        .containsEntry("io.manifest.cache-enabled", "true")
        .containsEntry("io.manifest.cache.max-total-bytes", "16666666")
        .containsEntry("io.manifest.cache.expiration-interval-ms", "0");
  }

  @Test
  void shouldLeaveIcebergsManifestCacheOffWhenTheCacheBytesAreZero() {
    Properties p = minimal();
    p.setProperty("floe.cache.bytes", "0");
    p.setProperty("floe.catalog.custom.catalog-impl", "org.example.MyCatalog");

    CatalogConfig catalogs = FloeConfig.of(p, null).catalogs();

    assertThat(catalogs.icebergProperties("custom")).doesNotContainKey("io.manifest.cache-enabled");
  }

  @Test
  void shouldBoundTheMemoryOfAllRocksDbStoresByDefault() {
    Properties streams = FloeConfig.of(minimal(), null).streamsProperties();

    assertThat(streams.getProperty("rocksdb.config.setter"))
        .isEqualTo("io.floe.topology.store.BoundedRocksDbMemory");
    assertThat(streams.getProperty("floe.state.memory.bytes")).isEqualTo("134217728");
  }

  @Test
  void shouldFailOverWithinSecondsAndKeepStandbysByDefault() {
    Properties streams = FloeConfig.of(minimal(), null).streamsProperties();

    assertThat(streams.getProperty("session.timeout.ms")).isEqualTo("6000");
    assertThat(streams.getProperty("heartbeat.interval.ms")).isEqualTo("2000");
    assertThat(streams.getProperty("num.standby.replicas")).isEqualTo("1");
  }

  @Test
  void shouldGiveAStarvedStreamThreadsTransactionTenSecondsByDefault() {
    Properties streams = FloeConfig.of(minimal(), null).streamsProperties();

    // The prefixed key: Kafka Streams checks it against commit.interval.ms.
    assertThat(streams.getProperty("producer.transaction.timeout.ms")).isEqualTo("10000");
  }

  @Test
  void shouldLetTheFileSetTheTransactionTimeoutUnderEitherKey() {
    Properties plain = minimal();
    plain.setProperty("transaction.timeout.ms", "20000");
    Properties prefixed = minimal();
    prefixed.setProperty("producer.transaction.timeout.ms", "30000");

    Properties fromPlain = FloeConfig.of(plain, null).streamsProperties();
    Properties fromPrefixed = FloeConfig.of(prefixed, null).streamsProperties();

    // A prefixed default would win over the file's plain key in Kafka Streams.
    assertThat(fromPlain.getProperty("transaction.timeout.ms")).isEqualTo("20000");
    assertThat(fromPlain).doesNotContainKey("producer.transaction.timeout.ms");
    assertThat(fromPrefixed.getProperty("producer.transaction.timeout.ms")).isEqualTo("30000");
  }

  @Test
  void shouldLetTheFileOverrideTheMembershipDefaults() {
    Properties p = minimal();
    p.setProperty("session.timeout.ms", "45000");
    p.setProperty("num.standby.replicas", "0");

    Properties streams = FloeConfig.of(p, null).streamsProperties();

    assertThat(streams.getProperty("session.timeout.ms")).isEqualTo("45000");
    assertThat(streams.getProperty("num.standby.replicas")).isEqualTo("0");
  }

  @Test
  void shouldBeAStaticMemberOnlyWithAGroupInstanceId() {
    Properties dynamic = minimal();
    Properties viaEnvironment = minimal();
    viaEnvironment.setProperty("config.providers", "env");
    viaEnvironment.setProperty(
        "config.providers.env.class",
        "org.apache.kafka.common.config.provider.EnvVarConfigProvider");
    viaEnvironment.setProperty("group.instance.id", "${env:HOME}");
    Properties prefixed = minimal();
    prefixed.setProperty("main.consumer.group.instance.id", "floe-0");
    Properties blanked = minimal();
    blanked.setProperty("group.instance.id", "floe-0");
    blanked.setProperty("main.consumer.group.instance.id", " ");

    assertThat(FloeConfig.of(dynamic, null).isStaticMember()).isFalse();
    FloeConfig resolved = FloeConfig.of(viaEnvironment, null);
    assertThat(resolved.isStaticMember()).isTrue();
    assertThat(resolved.streamsProperties().getProperty("group.instance.id"))
        .isEqualTo(System.getenv("HOME"));
    assertThat(FloeConfig.of(prefixed, null).isStaticMember()).isTrue();
    assertThat(FloeConfig.of(blanked, null).isStaticMember()).isFalse();
  }

  @Test
  void shouldResolveTheViewsFileAgainstTheConfigDirectory() {
    Properties p = minimal();
    p.setProperty(FloeConfig.VIEWS_FILE, "views.yaml");

    assertThat(FloeConfig.of(p, Path.of("/etc/floe")).viewsFile())
        .isEqualTo(Path.of("/etc/floe/views.yaml"));
  }

  @Test
  void shouldRejectAnUnknownFloeKeyNamingIt() {
    Properties p = minimal();
    p.setProperty("floe.topic.comits", "x");

    assertThatThrownBy(() -> FloeConfig.of(p, null))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("floe.topic.comits")
        .hasMessageContaining("unknown Floe setting");
  }

  @Test
  void shouldRejectAnInvalidValueNamingTheKey() {
    Properties p = minimal();
    p.setProperty(FloeConfig.TOPIC_PARTITIONS, "0");

    assertThatThrownBy(() -> FloeConfig.of(p, null))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(FloeConfig.TOPIC_PARTITIONS)
        .hasMessageContaining("Value must be at least 1");
  }

  @Test
  void shouldRequireTheBrokers() {
    Properties p = minimal();
    p.remove("bootstrap.servers");

    assertThatThrownBy(() -> FloeConfig.of(p, null))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("bootstrap.servers");
  }

  @Test
  void shouldMaskSecretsWhenLogged() {
    Properties p = minimal();
    p.setProperty("floe.catalog.lake.s3.secret-access-key", "hunter2");
    p.setProperty("floe.catalog.lake.jdbc.password", "hunter3");
    p.setProperty("sasl.jaas.config", "org.apache.kafka... password=\"x\";");
    p.setProperty("basic.auth.user.info", "registry:hunter4");
    p.setProperty("floe.catalog.lake.header.Authorization", "Bearer hunter5");
    p.setProperty("floe.catalog.other.type", "rest");
    p.setProperty("floe.catalog.other.uri", "https://floe:hunter6@rest.example:8181");

    assertThat(FloeConfig.of(p, null).masked())
        .containsEntry("basic.auth.user.info", "********")
        .containsEntry("floe.catalog.lake.header.Authorization", "********")
        .containsEntry("floe.catalog.other.uri", "https://********@rest.example:8181")
        .containsEntry("floe.catalog.lake.s3.secret-access-key", "********")
        .containsEntry("floe.catalog.lake.jdbc.password", "********")
        .containsEntry("sasl.jaas.config", "********")
        .containsEntry("floe.catalog.lake.type", "jdbc");
  }

  @Test
  void shouldResolveSecretsFromConfigProviders() {
    Properties p = minimal();
    p.setProperty("config.providers", "env");
    p.setProperty(
        "config.providers.env.class",
        "org.apache.kafka.common.config.provider.EnvVarConfigProvider");
    p.setProperty("floe.catalog.lake.jdbc.home", "${env:HOME}");

    FloeConfig config = FloeConfig.of(p, null);

    assertThat(config.originalsStrings().get("floe.catalog.lake.jdbc.home"))
        .isEqualTo(System.getenv("HOME"));
  }

  @Test
  void shouldMaskValuesThatCameThroughAConfigProviderWhateverTheirKey(@TempDir Path dir)
      throws Exception {
    Path secrets = dir.resolve("secrets.properties");
    Files.writeString(secrets, "warehouse=s3://bucket-7f3a/wh\n");
    Properties p = minimal();
    p.setProperty("config.providers", "file");
    p.setProperty(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    p.setProperty("floe.catalog.lake.warehouse", "${file:" + secrets + ":warehouse}");

    FloeConfig config = FloeConfig.of(p, null);

    assertThat(config.catalogs()).isNotNull();
    assertThat(config.originalsStrings().get("floe.catalog.lake.warehouse"))
        .isEqualTo("s3://bucket-7f3a/wh");
    assertThat(config.masked()).containsEntry("floe.catalog.lake.warehouse", "********");
    assertThat(config.masked().toString()).doesNotContain("bucket-7f3a");
  }

  @Test
  void shouldNotQuoteTheValueOfAnUnknownKey() {
    Properties p = minimal();
    p.setProperty("floe.http.tokn", "hunter2");

    assertThatThrownBy(() -> FloeConfig.of(p, null))
        .hasMessageContaining("floe.http.tokn")
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void shouldRefuseATokenWithTheApiOpenedExplicitly() {
    Properties p = minimal();
    p.setProperty(FloeConfig.HTTP_AUTH, "none");
    p.setProperty(FloeConfig.HTTP_TOKEN, "abc");

    assertThatThrownBy(() -> FloeConfig.of(p, null))
        .isInstanceOf(ConfigException.class)
        .hasMessage("Cannot set both floe.http.auth=none and floe.http.token");
  }
}
