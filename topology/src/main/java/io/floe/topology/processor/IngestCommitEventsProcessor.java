package io.floe.topology.processor;

import io.floe.schemas.TableCommitted;
import io.floe.topology.ingest.CommitEventDecoder;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.ingest.Decoded;
import io.floe.topology.ingest.WatchedTableLocations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
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

  private final Duration tick;
  private final WatchedTableLocations locations;
  private final CommitEventDecoder decoder;
  private final FloeMetrics metrics;
  // S3 notifications of unknown locations, decoded again once the locations are loaded.
  private final Deque<Held> held = new ArrayDeque<>();
  private ProcessorContext<String, Object> context;

  /** The most notifications held while the watched tables' locations load. */
  private static final int MAX_HELD = 10_000;

  /** An event held until the locations are loaded, with the topic it came from. */
  private record Held(Record<byte[], byte[]> record, String topic) {}

  /**
   * Decodes notices in Floe's format (the serdes of {@code settings}) and Lakekeeper's events for
   * the catalog its events name, matches S3 notifications against the locations of the views'
   * tables, and decodes held events again every tick.
   */
  public IngestCommitEventsProcessor(TopologySettings settings, TopologyServices services) {
    this.locations =
        new WatchedTableLocations(services.views(), services.catalogs(), services.io());
    this.decoder =
        new CommitEventDecoder(
            settings.serdes().tableCommitted().deserializer(),
            settings.events().lakekeeperCatalog(),
            locations);
    this.tick = settings.tick();
    this.metrics = services.metrics();
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
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
