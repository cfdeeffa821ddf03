package io.floe.app.service;

import io.floe.topology.processor.DeadLetterSink;
import io.floe.topology.processor.DeadLetters;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter sink of the global thread, which has no producer of its own: a producer of this
 * process, created on the first dead letter (most instances never need one), sending asynchronously
 * so that the global thread never waits for the broker. A dead letter that cannot be sent is logged
 * at ERROR with its origin; the record itself was already skipped.
 */
final class GlobalDeadLetters implements DeadLetterSink, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(GlobalDeadLetters.class);

  private final Map<String, Object> clients;
  private final String topic;
  private KafkaProducer<byte[], byte[]> producer;
  private boolean closed;

  GlobalDeadLetters(Map<String, Object> clients, String topic) {
    this.clients = clients;
    this.topic = topic;
  }

  @Override
  public synchronized void send(byte[] key, byte[] value, long timestamp, Headers headers) {
    String origin = origin(headers);
    if (closed) {
      LOG.error("Cannot send the dead letter of {} to {}: Floe is stopping", origin, topic);
      return;
    }
    try {
      producer()
          .send(
              new ProducerRecord<>(topic, null, timestamp, key, value, headers),
              (metadata, error) -> {
                if (error != null) {
                  LOG.error(
                      "Cannot send the dead letter of {} to {}: {}",
                      origin,
                      topic,
                      error.toString());
                }
              });
    } catch (RuntimeException e) {
      LOG.error("Cannot send the dead letter of {} to {}: {}", origin, topic, e.toString());
    }
  }

  private KafkaProducer<byte[], byte[]> producer() {
    if (producer == null) {
      Map<String, Object> config = new HashMap<>(clients);
      config.put(ProducerConfig.ACKS_CONFIG, "all");
      config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      // The global thread keeps every instance's views current: it waits at most this long.
      config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
      producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }
    return producer;
  }

  private static String origin(Headers headers) {
    Header origin = headers.lastHeader(DeadLetters.ORIGIN);
    return origin == null ? "floe.views" : new String(origin.value(), StandardCharsets.UTF_8);
  }

  /** Sends what is pending, for at most ten seconds, and stops. */
  @Override
  public synchronized void close() {
    closed = true;
    if (producer != null) {
      producer.close(Duration.ofSeconds(10));
      producer = null;
    }
  }
}
