package io.floe.app.service;

import io.floe.app.config.FloeConfig;
import io.floe.schemas.TableCommitted;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.view.TableName;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
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

  @Override
  public void close() {
    producer.close();
  }
}
