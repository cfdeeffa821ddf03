package io.floe.topology.processor;

import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.ViewIndex;
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
 * processor (Kafka Streams reprocesses global stores on restore): the index is then complete, and
 * each definition's revision is its offset, which orders the definitions of a view.
 */
public final class ViewsStoreUpdater implements Processor<String, ViewRecord, Void, Void> {

  private final ViewIndex index;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<String, ViewRecord> views;

  public ViewsStoreUpdater(ViewIndex index) {
    this.index = index;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.views = context.getStateStore(StoreNames.VIEWS);
  }

  @Override
  public void process(Record<String, ViewRecord> record) {
    String name = record.key();
    if (name == null) {
      return;
    }
    long revision = context.recordMetadata().map(RecordMetadata::offset).orElse(-1L);
    if (record.value() == null) {
      views.delete(name);
    } else {
      views.put(name, record.value());
    }
    StoredView.apply(index, name, record.value(), revision);
  }
}
