package io.floe.app.it;

import static org.awaitility.Awaitility.await;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewRecord;
import io.floe.testing.EmbeddedKafka;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.refresh.Freshness;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Floe as a user runs it, for integration tests: a real Kafka broker in this JVM, a real JDBC
 * catalog, and one or more {@link FloeService}s configured through a properties file. Every harness
 * uses its own topic names and application id.
 */
final class FloeHarness implements AutoCloseable {

  private static EmbeddedKafka kafka;

  private final Path dir;
  private final IcebergFixture lake;
  private final String prefix = "t" + UUID.randomUUID().toString().substring(0, 8);
  private final List<FloeService> services = new ArrayList<>();
  private final Map<String, String> settings;
  private final FloeSerdes serdes;
  private final KafkaProducer<String, Object> producer;
  private final KafkaConsumer<String, RefreshEvent> refreshes;
  private final List<RefreshEvent> events = new ArrayList<>();

  FloeHarness(Path dir) {
    this(dir, IcebergFixture.create(dir));
  }

  /** A harness over a catalog of any type, configured in Floe with the same properties. */
  FloeHarness(Path dir, IcebergFixture lake) {
    this(dir, lake, Map.of());
  }

  /**
   * A harness whose instances all get {@code settings} (such as a schema registry), which its own
   * producer and consumer follow too.
   */
  FloeHarness(Path dir, IcebergFixture lake, Map<String, String> settings) {
    this.dir = dir;
    this.lake = lake;
    this.settings = Map.copyOf(settings);
    this.serdes = FloeSerdes.fromConfig(settings);
    Map<String, Object> producerConfig = new HashMap<>();
    producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().bootstrapServers());
    this.producer =
        new KafkaProducer<>(
            producerConfig,
            new StringSerializer(),
            (topic, value) ->
                value instanceof ViewRecord v
                    ? serdes.viewRecord().serializer().serialize(topic, v)
                    : serdes
                        .tableCommitted()
                        .serializer()
                        .serialize(topic, (TableCommitted) value));
    Map<String, Object> consumerConfig = new HashMap<>();
    consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().bootstrapServers());
    consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, prefix + "-reader");
    consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    this.refreshes =
        new KafkaConsumer<>(
            consumerConfig, new StringDeserializer(), serdes.refreshEvent().deserializer());
    createTopics();
  }

  /** The topics exist before any instance starts, as they would in a managed cluster. */
  private void createTopics() {
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(
            Map.of(
                org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka().bootstrapServers()))) {
      List<org.apache.kafka.clients.admin.NewTopic> topics = new ArrayList<>();
      for (String name : List.of("commits", "snapshots", "refreshes", "requests", "dlq")) {
        topics.add(new org.apache.kafka.clients.admin.NewTopic(topic(name), 2, (short) 1));
      }
      topics.add(
          new org.apache.kafka.clients.admin.NewTopic(topic("views"), 2, (short) 1)
              .configs(Map.of("cleanup.policy", "compact")));
      admin.createTopics(topics).all().get();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot create test topics", e);
    }
  }

  /** The broker shared by all integration tests of this JVM. */
  static synchronized EmbeddedKafka kafka() {
    if (kafka == null) {
      try {
        kafka = EmbeddedKafka.start(Files.createTempDirectory("floe-it-kafka"));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(kafka::close));
    }
    return kafka;
  }

  IcebergFixture lake() {
    return lake;
  }

  String topic(String name) {
    return prefix + "." + name;
  }

  /** The configuration file a user would write, with this harness's names. */
  Path configFile(String instance, Map<String, String> extra) throws Exception {
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", kafka().bootstrapServers());
    p.setProperty("application.id", prefix + "-floe");
    p.setProperty("state.dir", dir.resolve("state-" + instance).toString());
    p.setProperty("commit.interval.ms", "100");
    // A crashed instance must not hold its partitions for long (its open transaction: Floe's
    // default transaction timeout, 10 s).
    p.setProperty("session.timeout.ms", "6000");
    p.setProperty("heartbeat.interval.ms", "1500");
    p.setProperty(FloeConfig.TOPIC_COMMITS, topic("commits"));
    p.setProperty(FloeConfig.TOPIC_SNAPSHOTS, topic("snapshots"));
    p.setProperty(FloeConfig.TOPIC_REFRESHES, topic("refreshes"));
    p.setProperty(FloeConfig.TOPIC_VIEWS, topic("views"));
    p.setProperty(FloeConfig.TOPIC_DLQ, topic("dlq"));
    p.setProperty(FloeConfig.TOPIC_REQUESTS, topic("requests"));
    p.setProperty(FloeConfig.HTTP_PORT, "0");
    p.setProperty(FloeConfig.HTTP_HOST, "127.0.0.1");
    p.setProperty(FloeConfig.HTTP_ADVERTISED_HOST, "127.0.0.1");
    p.setProperty(FloeConfig.TOPIC_PARTITIONS, "2");
    p.setProperty(FloeConfig.MAINTAIN_TICK_MS, "100");
    // Every service still warms its engine up, on few rows: a test JVM runs many services, and
    // the warm-up's worth is a new JVM's first large refresh (EngineWarmupTest, bench backfill).
    p.setProperty(FloeConfig.WARM_UP_ROWS, "2000");
    lake.catalogProperties().forEach((k, v) -> p.setProperty("floe.catalog.lake." + k, v));
    settings.forEach(p::setProperty);
    extra.forEach(p::setProperty);
    Path file = dir.resolve("floe-" + instance + ".properties");
    try (var out = Files.newBufferedWriter(file)) {
      p.store(out, "integration test");
    }
    return file;
  }

  /** Starts an instance of Floe from its configuration file. */
  FloeService start(String instance) throws Exception {
    return start(instance, Map.of());
  }

  FloeService start(String instance, Map<String, String> extra) throws Exception {
    return start(instance, extra, io.floe.topology.refresh.RefreshHooks.NONE);
  }

  /** Starts an instance whose refreshes call {@code hooks} at each step. */
  FloeService start(
      String instance, Map<String, String> extra, io.floe.topology.refresh.RefreshHooks hooks)
      throws Exception {
    FloeService service = new FloeService(FloeConfig.load(configFile(instance, extra)), hooks);
    service.start();
    services.add(service);
    refreshes.subscribe(List.of(topic("refreshes")));
    return service;
  }

  /**
   * Starts {@code main} with {@code args} in a child JVM on this test's class path, its output to
   * {@code log}: a process the test can kill as a lost node dies.
   */
  Process spawn(Path log, Class<?> main, String... args) throws java.io.IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx768m");
    command.add("-Djava.io.tmpdir=" + dir);
    command.add("-cp");
    // The forked test JVM's own class path may be a manifest-only jar; this is the list.
    command.add(
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    command.add(main.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
  }

  /**
   * Checks that each view's target applied every refresh once (no {@code floe.refresh-id} on two
   * snapshots that completed a refresh), and that every refresh applied was reported, once (one
   * event per refresh id).
   */
  void assertEachRefreshAppliedAndReportedOnce(List<ViewDefinition> views) {
    List<String> applied = new ArrayList<>();
    for (ViewDefinition view : views) {
      List<String> ofView = new ArrayList<>();
      for (Snapshot snapshot : target(view).snapshots()) {
        String refreshId = snapshot.summary().get("floe.refresh-id");
        if (refreshId != null && snapshot.summary().get("floe.progress") == null) {
          ofView.add(refreshId);
        }
      }
      org.assertj.core.api.Assertions.assertThat(ofView).as(view.name()).doesNotHaveDuplicates();
      applied.addAll(ofView);
    }
    // The events of the last refreshes may still be on their way: each is sent after its commit.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                org.assertj.core.api.Assertions.assertThat(
                        events().stream().map(RefreshEvent::getRefreshId).toList())
                    .as("refresh ids of the events")
                    .containsAll(applied));
    Map<String, Long> perRefresh =
        events().stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    RefreshEvent::getRefreshId, java.util.stream.Collectors.counting()));
    org.assertj.core.api.Assertions.assertThat(perRefresh)
        .allSatisfy((id, n) -> org.assertj.core.api.Assertions.assertThat(n).as(id).isEqualTo(1));
  }

  /** Declares a view through the views topic, as the API and the views file do. */
  void define(ViewDefinition view) throws Exception {
    producer
        .send(
            new ProducerRecord<>(
                topic("views"), view.name(), StoredView.toRecord(view, "api", Instant.now())))
        .get();
  }

  void delete(String view) throws Exception {
    producer.send(new ProducerRecord<>(topic("views"), view, null)).get();
  }

  /** Announces a commit of {@code table}, as a writer or pipeline would. */
  void announce(String table) throws Exception {
    TableName name = TableName.parse(table);
    producer
        .send(
            new ProducerRecord<>(
                topic("commits"),
                table,
                TableCommitted.newBuilder()
                    .setCatalog(name.catalog())
                    .setNamespace(name.namespace())
                    .setTable(name.table())
                    .setEventTime(Instant.now())
                    .setProducer("it")
                    .build()))
        .get();
  }

  /** Sends raw bytes to a topic, as a misbehaving producer would. */
  void sendRaw(String topicName, String key, byte[] value) throws Exception {
    sendRaw(topicName, key, value, Map.of());
  }

  /** Sends raw bytes with headers to a topic, as another system's event sink would. */
  void sendRaw(String topicName, String key, byte[] value, Map<String, String> headers)
      throws Exception {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().bootstrapServers());
    try (KafkaProducer<String, byte[]> raw =
        new KafkaProducer<>(
            config,
            new StringSerializer(),
            new org.apache.kafka.common.serialization.ByteArraySerializer())) {
      ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic(topicName), key, value);
      headers.forEach(
          (name, header) ->
              record.headers().add(name, header.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      raw.send(record).get();
    }
  }

  /** Every record on the dead-letter topic so far. */
  List<ConsumerRecord<String, byte[]>> deadLetters() {
    return readAll("dlq");
  }

  /** Every commit notice on the commits topic so far. */
  List<TableCommitted> commitNotices() {
    try (var serde = serdes.tableCommitted()) {
      return readAll("commits").stream()
          .map(r -> serde.deserializer().deserialize(r.topic(), r.value()))
          .toList();
    }
  }

  /** The views on the views topic now, by name: the latest record of each, deletions applied. */
  Map<String, ViewRecord> storedViews() {
    Map<String, ViewRecord> views = new java.util.TreeMap<>();
    try (var serde = serdes.viewRecord()) {
      for (ConsumerRecord<String, byte[]> record : readAll("views")) {
        if (record.value() == null) {
          views.remove(record.key());
        } else {
          views.put(record.key(), serde.deserializer().deserialize(record.topic(), record.value()));
        }
      }
    }
    return views;
  }

  /** Every committed record of one of this harness's topics, as bytes, read for a few seconds. */
  List<ConsumerRecord<String, byte[]>> readAll(String topicName) {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().bootstrapServers());
    config.put(ConsumerConfig.GROUP_ID_CONFIG, prefix + "-" + topicName + "-" + System.nanoTime());
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(
            config,
            new StringDeserializer(),
            new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic(topicName)));
      long deadline = System.currentTimeMillis() + 3000;
      while (System.currentTimeMillis() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  /** The latest snapshot of {@code source} that changed rows (compactions change none). */
  static Snapshot latestDataChange(Table source) {
    return Freshness.latestDataChange(source).orElse(null);
  }

  /**
   * Waits until the view's target reflects the source's latest data-changing snapshot, then checks
   * it against the oracle at that snapshot.
   */
  void awaitOracle(ViewDefinition view, Table source) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              try {
                return Freshness.isCurrent(target(view), source, view.version());
              } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
                return false;
              }
            });
    OracleAssertions.assertMatches(
        target(view), source, latestDataChange(source).snapshotId(), view.query());
  }

  /** Every refresh event published so far (committed transactions only). */
  List<RefreshEvent> events() {
    for (ConsumerRecord<String, RefreshEvent> record : refreshes.poll(Duration.ofMillis(200))) {
      events.add(record.value());
    }
    return events;
  }

  /** Waits for the refresh events of {@code view} until one satisfies the condition. */
  List<RefreshEvent> awaitEvent(String view, java.util.function.Predicate<RefreshEvent> condition) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> events().stream().anyMatch(e -> e.getView().equals(view) && condition.test(e)));
    return events().stream().filter(e -> e.getView().equals(view)).toList();
  }

  /** Stops every running instance (cleanly), keeping topics, tables and events. */
  void stopServices() {
    for (FloeService service : services) {
      service.close();
    }
    services.clear();
  }

  @Override
  public void close() throws Exception {
    stopServices();
    producer.close();
    refreshes.close();
    lake.close();
  }
}
