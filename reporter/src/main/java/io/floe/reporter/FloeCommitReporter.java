package io.floe.reporter;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.TableCommitted;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An Iceberg {@link MetricsReporter} that announces every commit of the writer it runs in to Floe:
 * add the jar to the writer's classpath and set, on the writer's catalog,
 *
 * <pre>
 * metrics-reporter-impl=io.floe.reporter.FloeCommitReporter
 * floe.bootstrap.servers=kafka:9092
 * floe.catalog=lake            # the catalog's name in Floe's configuration
 * floe.topic=floe.commits      # default
 * floe.kafka.*                 # any Kafka producer setting (security.protocol, sasl.*, ...)
 * schema.registry.url=...      # when Floe's topics use the registry
 * </pre>
 *
 * A notice is sent asynchronously after the commit; a failure to send is logged and never fails the
 * writer's commit. Notices are hints: Floe reads the table's real state.
 */
public final class FloeCommitReporter implements MetricsReporter {

  public static final String BOOTSTRAP_SERVERS = "floe.bootstrap.servers";
  public static final String TOPIC = "floe.topic";
  public static final String CATALOG = "floe.catalog";
  public static final String KAFKA_PREFIX = "floe.kafka.";

  private static final Logger LOG = LoggerFactory.getLogger(FloeCommitReporter.class);

  private KafkaProducer<String, TableCommitted> producer;
  private String topic;
  private String catalog;

  @Override
  public void initialize(Map<String, String> properties) {
    String servers = properties.get(BOOTSTRAP_SERVERS);
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException(
          "FloeCommitReporter needs the catalog property " + BOOTSTRAP_SERVERS);
    }
    this.topic = properties.getOrDefault(TOPIC, "floe.commits");
    this.catalog = properties.get(CATALOG);
    Map<String, Object> config = new HashMap<>();
    properties.forEach(
        (key, value) -> {
          if (key.startsWith(KAFKA_PREFIX)) {
            config.put(key.substring(KAFKA_PREFIX.length()), value);
          }
        });
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
    config.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
    config.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
    config.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "floe-commit-reporter");
    // Kafka loads the classes its configuration names through the context class loader, which in
    // a writer (a Spark executor, a Flink task) need not see this jar.
    Thread thread = Thread.currentThread();
    ClassLoader context = thread.getContextClassLoader();
    thread.setContextClassLoader(FloeCommitReporter.class.getClassLoader());
    try {
      this.producer =
          new KafkaProducer<>(
              config,
              new StringSerializer(),
              FloeSerdes.fromConfig(properties).tableCommitted().serializer());
    } finally {
      thread.setContextClassLoader(context);
    }
  }

  @Override
  public void report(MetricsReport report) {
    if (!(report instanceof CommitReport commit) || producer == null) {
      return;
    }
    try {
      TableCommitted notice = notice(commit, catalog, Instant.now());
      String key =
          String.join(
              ".", notice.getCatalog(), String.join(".", notice.getNamespace()), notice.getTable());
      producer.send(
          new ProducerRecord<>(topic, key, notice),
          (metadata, error) -> {
            if (error != null) {
              LOG.warn("Cannot announce commit of {} to Floe: {}", key, error.getMessage());
            }
          });
    } catch (RuntimeException e) {
      LOG.warn("Cannot announce commit of {} to Floe: {}", commit.tableName(), e.getMessage());
    }
  }

  /**
   * The notice for a commit report. Iceberg names the table {@code catalog.namespace...table};
   * {@code catalog} replaces its first part when Floe knows the catalog by another name.
   */
  static TableCommitted notice(CommitReport commit, String catalog, Instant now) {
    List<String> parts = Arrays.asList(commit.tableName().split("\\."));
    if (parts.size() < 3) {
      throw new IllegalArgumentException(
          "table name " + commit.tableName() + " has no catalog and namespace");
    }
    return TableCommitted.newBuilder()
        .setCatalog(catalog != null ? catalog : parts.get(0))
        .setNamespace(parts.subList(1, parts.size() - 1))
        .setTable(parts.get(parts.size() - 1))
        .setSnapshotId(commit.snapshotId())
        .setEventTime(now)
        .setProducer("metrics-reporter")
        .build();
  }

  @Override
  public void close() {
    if (producer != null) {
      // Notices still in flight get a few seconds; a writer never hangs on Floe's broker.
      producer.close(java.time.Duration.ofSeconds(5));
    }
  }
}
