package io.floe.app.views;

import io.floe.schemas.ViewRecord;
import io.floe.topology.processor.DeadLetters;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes records of floe.views for Floe's readers outside the topology (the views file publisher,
 * the catalog watcher). They read the topic as bytes: a consumer whose deserializer throws cannot
 * get past the record, and one undecodable definition would stop the views file and the watcher.
 * Such a record is skipped with a warning, and the earlier definition of its view stays in force,
 * as in the topology, whose global thread dead-letters it.
 */
public final class ViewRecords {

  private static final Logger LOG = LoggerFactory.getLogger(ViewRecords.class);

  private ViewRecords() {}

  /** The definition in a record whose value is not null, or null when it does not decode. */
  public static ViewRecord decode(
      Deserializer<ViewRecord> records, ConsumerRecord<String, byte[]> record) {
    try {
      return records.deserialize(record.topic(), record.headers(), record.value());
    } catch (RuntimeException e) {
      LOG.warn(
          "Skipping the record of view {} at {}, which does not decode (the earlier definition"
              + " stays in force): {}",
          record.key(),
          DeadLetters.origin(record.topic(), record.partition(), record.offset()),
          e.getMessage());
      return null;
    }
  }
}
