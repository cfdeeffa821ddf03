package io.floe.topology.processor;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records for floe.dlq: the original key and value with the reason and origin in headers. Every
 * dead letter Floe writes carries the same headers, whichever way it got there: records that
 * decoded but cannot be acted on (an unknown catalog or table, an event of no known shape) through
 * the processors' dead-letter sinks, records that cannot be deserialized through {@link
 * DeadLetterDeserializationHandler}, and undecodable records of floe.views through {@link
 * ViewsStoreUpdater}.
 */
public final class DeadLetters {

  /** Header with the reason a record was rejected. */
  public static final String REASON = "floe.dlq.reason";

  /** Header with the topic, partition and offset the record came from: {@code topic-0@42}. */
  public static final String ORIGIN = "floe.dlq.origin";

  /** Header naming the processor (or source node) that rejected the record. */
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
    return context.recordMetadata().map(DeadLetters::origin).orElse("punctuation");
  }

  /**
   * A dead letter for {@code record} that came from {@code origin}, for records dead-lettered after
   * their processing (once an I/O job says they cannot be acted on); logged once at WARN.
   */
  public static <K> Record<K, byte[]> of(
      String origin, String processor, Record<K, ?> record, byte[] bytes, String reason) {
    Headers headers = headers(record.headers(), origin, processor, reason);
    return new Record<>(record.key(), bytes, record.timestamp(), headers);
  }

  /**
   * The headers of a dead letter: the rejected record's own, then reason, origin and processor. The
   * dead letter is logged here, once, at WARN.
   *
   * @param origin where the record came from, as {@link #origin(String, int, long)} writes it
   */
  public static Headers headers(Headers original, String origin, String processor, String reason) {
    LOG.warn("Dead-lettering a record from {} in {}: {}", origin, processor, reason);
    RecordHeaders headers = new RecordHeaders();
    if (original != null) {
      original.forEach(headers::add);
    }
    headers.add(REASON, reason.getBytes(StandardCharsets.UTF_8));
    headers.add(ORIGIN, origin.getBytes(StandardCharsets.UTF_8));
    headers.add(PROCESSOR, processor.getBytes(StandardCharsets.UTF_8));
    return headers;
  }

  /**
   * The origin of a record as the {@link #ORIGIN} header names it: {@code topic-partition@offset}.
   */
  public static String origin(String topic, int partition, long offset) {
    return topic + "-" + partition + "@" + offset;
  }

  /** The origin of the record being processed. */
  public static String origin(RecordMetadata metadata) {
    return origin(metadata.topic(), metadata.partition(), metadata.offset());
  }
}
