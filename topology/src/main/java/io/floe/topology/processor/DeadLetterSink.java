package io.floe.topology.processor;

import org.apache.kafka.common.header.Headers;

/**
 * Where the global views processor sends its dead letters. Processors of stream tasks forward dead
 * letters to a sink node, inside the task's transaction; the global thread has no producer, so the
 * process supplies one. Delivery is at least once: every start of an instance reads the views topic
 * from its beginning and sends the same dead letter again, with the same origin header.
 */
@FunctionalInterface
public interface DeadLetterSink {

  /** Sends nothing: the rejected record is only logged and counted. For tests and tools. */
  DeadLetterSink NONE = (key, value, timestamp, headers) -> {};

  /**
   * Sends a dead letter to the dead-letter topic; never blocks for long, never throws.
   *
   * @param headers the headers {@link DeadLetters#headers} built
   */
  void send(byte[] key, byte[] value, long timestamp, Headers headers);
}
