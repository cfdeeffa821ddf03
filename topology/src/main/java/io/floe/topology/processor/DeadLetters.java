package io.floe.topology.processor;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records for floe.dlq: the original value with the reason and origin in headers. Undecodable
 * records reach the same topic through Kafka Streams' own dead-letter queue; these are records that
 * decoded but cannot be acted on (an unknown catalog or table).
 */
public final class DeadLetters {

  /** Header with the reason a record was rejected. */
  public static final String REASON = "floe.dlq.reason";

  /** Header with the topic, partition and offset the record came from. */
  public static final String ORIGIN = "floe.dlq.origin";

  /** Header naming the processor that rejected the record. */
  public static final String PROCESSOR = "floe.dlq.processor";

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

  private DeadLetters() {}

  /** A dead letter for {@code record}, whose value was {@code bytes}; logged once at WARN. */
  public static <K> Record<K, byte[]> of(
      ProcessorContext<?, ?> context,
      String processor,
      Record<K, ?> record,
      byte[] bytes,
      String reason) {
    return of(originOf(context), processor, record, bytes, reason);
  }

  /** Where the record being processed came from: topic-partition@offset. */
  public static String originOf(ProcessorContext<?, ?> context) {
    return context.recordMetadata().map(DeadLetters::describe).orElse("punctuation");
  }

  /**
   * A dead letter for {@code record} that came from {@code origin}, for records dead-lettered after
   * their processing (once an I/O job says they cannot be acted on); logged once at WARN.
   */
  public static <K> Record<K, byte[]> of(
      String origin, String processor, Record<K, ?> record, byte[] bytes, String reason) {
    LOG.warn("Dead-lettering a record from {} in {}: {}", origin, processor, reason);
    RecordHeaders headers = new RecordHeaders(record.headers().toArray());
    headers.add(REASON, reason.getBytes(StandardCharsets.UTF_8));
    headers.add(ORIGIN, origin.getBytes(StandardCharsets.UTF_8));
    headers.add(PROCESSOR, processor.getBytes(StandardCharsets.UTF_8));
    return new Record<>(record.key(), bytes, record.timestamp(), headers);
  }

  private static String describe(RecordMetadata metadata) {
    return metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset();
  }
}
