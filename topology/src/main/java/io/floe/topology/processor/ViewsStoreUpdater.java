package io.floe.topology.processor;

import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoreNames;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the global {@link StoreNames#VIEWS} store equal to the compacted floe.views topic: every
 * instance sees every view definition.
 */
public final class ViewsStoreUpdater implements Processor<String, ViewRecord, Void, Void> {

  private KeyValueStore<String, ViewRecord> views;

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    views = context.getStateStore(StoreNames.VIEWS);
  }

  @Override
  public void process(Record<String, ViewRecord> record) {
    if (record.key() == null) {
      return;
    }
    if (record.value() == null) {
      views.delete(record.key());
    } else {
      views.put(record.key(), record.value());
    }
  }
}
