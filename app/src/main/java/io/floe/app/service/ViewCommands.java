package io.floe.app.service;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.ViewCommand;
import io.floe.schemas.ViewCommandType;
import io.floe.schemas.ViewRecord;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.processor.EventRecords;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.ViewDefinition;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes view definitions to floe.views and refresh requests to floe.requests: the only way the API
 * and the views file change what Floe maintains, so that every instance sees the same views.
 */
public final class ViewCommands implements ViewWrites.Publisher, AutoCloseable {

  private final KafkaProducer<String, byte[]> producer;
  private final TopologySettings.Topics topics;
  private final FloeSerdes serdes;

  public ViewCommands(
      Map<String, Object> clients, TopologySettings.Topics topics, FloeSerdes serdes) {
    Map<String, Object> config = new HashMap<>(clients);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    this.producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    this.topics = topics;
    this.serdes = serdes;
  }

  /**
   * Publishes a definition; {@code origin} is "api" or "file".
   *
   * @param revision its revision ({@link StoredView#nextRevision})
   */
  @Override
  public void define(ViewDefinition view, String origin, long revision)
      throws InterruptedException {
    ViewRecord record = StoredView.toRecord(view, origin, Instant.now(), revision);
    send(
        topics.views(),
        view.name(),
        serdes.viewRecord().serializer().serialize(topics.views(), record));
  }

  /** Deletes a view: it is no longer maintained; its target table stays. */
  @Override
  public void delete(String view) throws InterruptedException {
    send(topics.views(), view, null);
  }

  /** Asks the view's owner to refresh it now, fully if {@code full}. */
  public void refresh(String view, boolean full, String requestedBy) throws InterruptedException {
    ViewCommand command =
        ViewCommand.newBuilder()
            .setView(view)
            .setCommand(full ? ViewCommandType.FULL_REFRESH : ViewCommandType.REFRESH)
            .setRequestedAt(Instant.now())
            .setRequestedBy(requestedBy)
            .build();
    send(
        topics.requests(),
        view,
        serdes.viewCommand().serializer().serialize(topics.requests(), command));
  }

  /** Asks the view's owner to recompute every bucket that overlaps {@code range}, now. */
  public void refreshRange(String view, TimeRange range, String requestedBy)
      throws InterruptedException {
    ViewCommand command = EventRecords.rangeCommand(view, range, Instant.now(), requestedBy);
    send(
        topics.requests(),
        view,
        serdes.viewCommand().serializer().serialize(topics.requests(), command));
  }

  private void send(String topic, String key, byte[] value) throws InterruptedException {
    try {
      producer.send(new ProducerRecord<>(topic, key, value)).get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "Cannot write to " + topic + ": " + e.getCause().getMessage(), e.getCause());
    }
  }

  @Override
  public void close() {
    producer.close();
  }
}
