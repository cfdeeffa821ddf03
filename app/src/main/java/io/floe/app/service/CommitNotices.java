package io.floe.app.service;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.schemas.TableCommitted;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.view.TableName;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Announces table commits on {@code floe.commits}, as a writer, a pipeline step or {@code floe
 * publish-commit} does. A notice is only a hint: Floe reads the table's real snapshot chain itself.
 */
public final class CommitNotices implements AutoCloseable {

  private final KafkaProducer<String, TableCommitted> producer;
  private final String topic;
  private final String producerName;

  public CommitNotices(FloeConfig config, String producerName) {
    Map<String, Object> producerConfig = new HashMap<>(config.clientProperties());
    producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
    this.producer =
        new KafkaProducer<>(
            producerConfig, new StringSerializer(), config.serdes().tableCommitted().serializer());
    this.topic = config.topics().commits();
    this.producerName = producerName;
  }

  public String topic() {
    return topic;
  }

  /** Publishes a notice that {@code table} committed, and waits for the broker to take it. */
  public RecordMetadata publish(TableName table, Long snapshotId, String metadataLocation)
      throws InterruptedException {
    TableCommitted notice =
        CommitNotice.of(table, snapshotId, metadataLocation, Instant.now(), producerName);
    try {
      return producer.send(new ProducerRecord<>(topic, table.toString(), notice)).get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "Cannot publish a commit notice for " + table + " to " + topic, e.getCause());
    }
  }

  /**
   * Publishes a notice that {@code table} committed, as {@code floe publish-commit} and {@code POST
   * /api/commits} do: a snapshot id or metadata location not given is the table's current one, read
   * from its catalog when that catalog is configured.
   *
   * @param notes told why the catalog could not fill them in; the notice is published without
   */
  public Published announce(
      CatalogConfig catalogs,
      TableName table,
      Long snapshotId,
      String metadataLocation,
      Consumer<String> notes)
      throws InterruptedException {
    Long snapshot = snapshotId;
    String metadata = metadataLocation;
    if (snapshot == null || metadata == null) {
      try {
        Table loaded = catalogs.catalog(table.catalog()).loadTable(table.identifier());
        Snapshot current = loaded.currentSnapshot();
        if (snapshot == null && current != null) {
          snapshot = current.snapshotId();
        }
        if (metadata == null && loaded instanceof HasTableOperations ops) {
          metadata = ops.operations().current().metadataFileLocation();
        }
      } catch (RuntimeException e) {
        // The notice is a hint: Floe reads the real table state itself.
        notes.accept("could not read " + table + " from its catalog (" + e.getMessage() + ")");
      }
    }
    RecordMetadata sent = publish(table, snapshot, metadata);
    return new Published(table, snapshot, metadata, topic, sent.partition(), sent.offset());
  }

  /**
   * A notice as published.
   *
   * @param snapshotId the snapshot it names, or null
   * @param metadataLocation the metadata file it names, or null
   */
  public record Published(
      TableName table,
      Long snapshotId,
      String metadataLocation,
      String topic,
      int partition,
      long offset) {}

  @Override
  public void close() {
    producer.close();
  }
}
