package io.floe.topology.processor;

import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.ViewIndex;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the global {@link StoreNames#VIEWS} store and the {@link ViewIndex} equal to the compacted
 * floe.views topic: every instance sees every view definition, compiled once.
 *
 * <p>The store is in memory, so that every start reads the topic from its beginning through this
 * processor (Kafka Streams reprocesses global stores on restore): the index is then complete. Each
 * definition's revision, which orders the definitions of a view, is the one its record carries
 * (DESIGN §3.6), or its offset for records of earlier releases ({@link StoredView#revision}); the
 * store keeps every record with its revision filled in, so that writers continue from it.
 *
 * <p>The topic is read as bytes and decoded here, because the global thread cannot survive a record
 * that fails in Kafka Streams' own deserialization (see {@link DeadLetterDeserializationHandler}).
 * A record that does not decode is sent to the dead-letter sink, counted and skipped: the earlier
 * definition of that view stays in force. A definition that decodes but is invalid is the index's
 * to reject.
 */
public final class ViewsStoreUpdater implements Processor<byte[], byte[], Void, Void> {

  /** The node name, also the processor tag of its dead letters. */
  public static final String NAME = "views-source";

  private final TopologyServices services;
  private final Deserializer<ViewRecord> records;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<String, ViewRecord> views;

  /**
   * Decodes the values of floe.views with the serdes of {@code settings}, keeps the view index of
   * {@code services} equal to them, and sends what does not decode to its global dead letters.
   */
  public ViewsStoreUpdater(TopologySettings settings, TopologyServices services) {
    this.services = services;
    this.records = settings.serdes().viewRecord().deserializer();
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.views = context.getStateStore(StoreNames.VIEWS);
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    if (record.key() == null) {
      return;
    }
    String name = new String(record.key(), StandardCharsets.UTF_8);
    long offset = context.recordMetadata().map(RecordMetadata::offset).orElse(-1L);
    if (record.value() == null) {
      views.delete(name);
      StoredView.apply(services.views(), name, null, offset);
      return;
    }
    ViewRecord value;
    try {
      String topic = context.recordMetadata().map(RecordMetadata::topic).orElse(null);
      value = records.deserialize(topic, record.headers(), record.value());
    } catch (RuntimeException e) {
      deadLetter(record, name, DeadLetterDeserializationHandler.reason(e));
      return;
    }
    long revision = StoredView.revision(value, offset);
    value.setRevision(revision);
    views.put(name, value);
    StoredView.apply(services.views(), name, value, revision);
  }

  private void deadLetter(Record<byte[], byte[]> record, String view, String reason) {
    String origin = context.recordMetadata().map(DeadLetters::origin).orElse("floe.views");
    String kept = reason + " (the earlier definition of view " + view + ", if any, stays in force)";
    services.metrics().deadLettered(NAME, kept);
    services
        .globalDeadLetters()
        .send(
            record.key(),
            record.value(),
            record.timestamp(),
            DeadLetters.headers(record.headers(), origin, NAME, kept));
  }
}
