package io.floe.topology.processor;

import io.floe.schemas.TableCommitted;
import io.floe.topology.FloeMetrics;
import io.floe.topology.FloeTopology.Services;
import io.floe.topology.FloeTopology.Settings;
import io.floe.topology.ingest.CommitEventDecoder;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.ingest.Decoded;
import io.floe.topology.ingest.WatchedTableLocations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ingest: turns the records of the event topics (Lakekeeper CloudEvents, S3 notifications, Floe's
 * own notices) into commit notices keyed by table, for floe.commits. Unrecognized records go to the
 * dead-letter topic with the reason; recognized events that change no watched table are counted and
 * dropped.
 */
public final class IngestCommitEventsProcessor
    implements Processor<byte[], byte[], String, Object> {

  public static final String NAME = "ingest";
  private static final Logger LOG = LoggerFactory.getLogger(IngestCommitEventsProcessor.class);

  private final Deserializer<TableCommitted> notices;
  private final String lakekeeperCatalog;
  private final Duration tick;
  private final Services services;
  private final FloeMetrics metrics;
  // S3 notifications of unknown locations, decoded again once the locations are loaded.
  private final Deque<Held> held = new ArrayDeque<>();
  private ProcessorContext<String, Object> context;
  private WatchedTableLocations locations;
  private CommitEventDecoder decoder;

  /** The most notifications held while the watched tables' locations load. */
  private static final int MAX_HELD = 10_000;

  /** An event held until the locations are loaded, with the topic it came from. */
  private record Held(Record<byte[], byte[]> record, String topic) {}

  /**
   * @param settings the topology's settings: the serde of notices, the Lakekeeper catalog's name,
   *     how often held events are decoded again
   * @param services the catalogs and the views whose tables' locations S3 notifications are matched
   *     against, the executor that loads them, the metrics
   */
  public IngestCommitEventsProcessor(Settings settings, Services services) {
    this.notices = settings.serdes().tableCommitted().deserializer();
    this.lakekeeperCatalog = settings.events().lakekeeperCatalog();
    this.tick = settings.tick();
    this.services = services;
    this.metrics = services.metrics();
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.locations =
        new WatchedTableLocations(services.views(), services.catalogs(), services.io());
    this.decoder = new CommitEventDecoder(notices, lakekeeperCatalog, locations);
    locations.refreshIfViewsChanged();
    context.schedule(tick, PunctuationType.WALL_CLOCK_TIME, now -> tick());
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    String topic = context.recordMetadata().map(m -> m.topic()).orElse("events");
    handle(record, topic, true);
  }

  private void tick() {
    locations.refreshIfViewsChanged();
    if (locations.isLoading()) {
      return;
    }
    for (Held next = held.poll(); next != null; next = held.poll()) {
      handle(next.record(), next.topic(), false);
    }
  }

  private void handle(Record<byte[], byte[]> record, String topic, boolean mayHold) {
    Decoded decoded =
        decoder.decode(
            topic,
            record.headers(),
            record.value(),
            Instant.ofEpochMilli(context.currentSystemTimeMs()));
    if (mayHold
        && decoded instanceof Decoded.Ignored
        && locations.isLoading()
        && held.size() < MAX_HELD) {
      // Its location may be a watched table's that is being looked up right now.
      held.add(new Held(record, topic));
      return;
    }
    if (decoded instanceof Decoded.Notices n) {
      metrics.commitEventIngested(n.format(), "notice");
      for (TableCommitted notice : n.notices()) {
        String table = CommitNotice.tableOf(notice).toString();
        context.forward(new Record<>(table, notice, record.timestamp(), record.headers()));
      }
    } else if (decoded instanceof Decoded.Ignored i) {
      metrics.commitEventIngested(i.format(), "ignored");
      LOG.debug("Ignoring a {} event from {}: {}", i.format(), topic, i.reason());
    } else if (decoded instanceof Decoded.Unrecognized u) {
      metrics.commitEventIngested(u.format(), "dead-lettered");
      metrics.deadLettered(NAME, u.reason());
      String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
      context.forward(
          DeadLetters.of(context, NAME, record, record.value(), u.reason()).withKey(key));
    }
  }
}
