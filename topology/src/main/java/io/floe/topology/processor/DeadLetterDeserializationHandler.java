package io.floe.topology.processor;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka Streams' {@code deserialization.exception.handler} for Floe: a record of a stream topic
 * whose key or value cannot be deserialized goes to the dead-letter topic ({@code
 * errors.dead.letter.queue.topic.name}) with the original bytes and the headers of Floe's own dead
 * letters ({@link DeadLetters}: reason, origin, the source node), is counted in {@link
 * FloeMetrics#deadLettered}, logged once at WARN, and skipped. Kafka Streams sends the dead letter
 * through the task's producer, inside its transaction under exactly-once.
 *
 * <p>The global thread cannot send dead letters this way: Kafka Streams 4.4 casts the global
 * thread's context to a record collector it is not, and the thread dies. Floe's global source
 * therefore reads bytes, which never fail here, and {@link ViewsStoreUpdater} decodes them. Should
 * this handler still be asked on the global thread, it logs, counts and skips the record without a
 * dead letter rather than take the thread down.
 *
 * <p>Floe's metrics reach the handler through the Streams configuration, under {@link
 * #METRICS_CONFIG}; without them nothing is counted.
 */
public final class DeadLetterDeserializationHandler implements DeserializationExceptionHandler {

  /** Streams configuration entry holding the {@link FloeMetrics} instance (not a string). */
  public static final String METRICS_CONFIG = "floe.internal.dead-letter-metrics";

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetterDeserializationHandler.class);

  private String topic;
  private FloeMetrics metrics = FloeMetrics.NONE;

  @Override
  public void configure(Map<String, ?> configs) {
    Object dlq = configs.get(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG);
    if (dlq == null || dlq.toString().isBlank()) {
      throw new ConfigException(
          StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG,
          dlq,
          "must name the dead-letter topic for " + getClass().getName());
    }
    topic = dlq.toString();
    if (configs.get(METRICS_CONFIG) instanceof FloeMetrics configured) {
      metrics = configured;
    }
  }

  @Override
  public Response handleError(
      ErrorHandlerContext context, ConsumerRecord<byte[], byte[]> record, Exception exception) {
    String reason = reason(exception);
    String origin = DeadLetters.origin(record.topic(), record.partition(), record.offset());
    String node = context.processorNodeId();
    metrics.deadLettered(node, reason);
    if (context.taskId().subtopology() < 0) {
      LOG.warn(
          "Skipping a record from {} in {} (the global thread cannot dead-letter it): {}",
          origin,
          node,
          reason);
      return Response.resume();
    }
    Headers headers = DeadLetters.headers(record.headers(), origin, node, reason);
    return Response.resume(
        List.of(
            new ProducerRecord<>(
                topic, null, record.timestamp(), record.key(), record.value(), headers)));
  }

  /** The reason header of a record that failed deserialization. */
  static String reason(Exception exception) {
    String message = exception.getMessage();
    return "cannot deserialize: "
        + (message == null || message.isBlank() ? exception.getClass().getName() : message);
  }
}
