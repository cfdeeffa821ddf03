package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewCommand;
import io.floe.topology.detect.SnapshotWalk;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resolve stage (DESIGN §2): turns commit notices, which may be duplicated, reordered, late or
 * lost, into one {@link SnapshotEvent} per real snapshot of the table, in commit order. A notice
 * only marks the table's cursor as owing a walk; the walk itself (load the table, follow its
 * snapshot chain from the cursor, {@link SnapshotWalk}) runs on Floe's I/O executor, and its events
 * and the moved cursor are applied together on the stream thread. The cursor records the walk owed,
 * so a crash or a rebalance walks again, from the cursor, publishing nothing twice.
 *
 * <p>Outputs {@link SnapshotEvent}s; {@code byte[]} dead letters for notices about an unknown
 * catalog or table; and, when a table that views read is found dropped, one {@link ViewCommand} per
 * such view (a refresh, which puts the view in error with the reason). A walk that finds no new
 * snapshot but a new current schema asks those views to refresh too: a schema change creates no
 * snapshot, and may change what a view reads.
 */
public final class ResolveSnapshotsProcessor
    implements Processor<String, TableCommitted, String, Object> {

  /** The node name. */
  public static final String NAME = "resolve-snapshots";

  private static final Logger LOG = LoggerFactory.getLogger(ResolveSnapshotsProcessor.class);

  private final Function<String, Catalog> catalogs;
  private final ViewIndex views;
  private final FloeMetrics metrics;
  private final Duration tick;
  private final Jobs<String, TableWalks.Resolved> walks;
  private final OwedWalks owed = new OwedWalks();
  private final HeldNotices held;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, TableCursor> cursors;

  /**
   * Walks snapshots on the I/O executor of {@code services}, collects finished walks every tick of
   * {@code settings}, and holds notices for floe.commits (of {@code settings}) in its format.
   */
  public ResolveSnapshotsProcessor(TopologySettings settings, TopologyServices services) {
    this.catalogs = services.catalogs();
    this.views = services.views();
    this.walks = new Jobs<>(services.io());
    this.tick = settings.tick();
    this.metrics = services.metrics();
    this.held =
        new HeldNotices(
            NAME,
            settings.topics().commits(),
            settings.serdes().tableCommitted().serializer(),
            metrics);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.cursors = context.getStateStore(StoreNames.TABLE_CURSORS);
    // Walks owed by a previous owner of this task: run them again.
    try (KeyValueIterator<String, TableCursor> all = cursors.all()) {
      all.forEachRemaining(
          entry -> {
            if (entry.value.requested()) {
              owed.retryAt(entry.key, entry.value.retryAt() == null ? 0L : entry.value.retryAt());
            }
          });
    }
    context.schedule(tick, PunctuationType.WALL_CLOCK_TIME, this::tick);
  }

  @Override
  public void process(Record<String, TableCommitted> record) {
    TableCommitted notice = record.value();
    if (notice == null) {
      return;
    }
    TableName table = held.tableOrDeadLetter(context, record);
    if (table == null) {
      return;
    }
    metrics.commitEvent(table.toString());
    String key = table.toString();
    TableCursor cursor = cursors.get(key);
    TableCursor.Awaited named =
        EventRecords.awaited(
            notice, context.currentSystemTimeMs() + TableWalks.AWAIT_LIMIT.toMillis());
    cursors.put(key, (cursor == null ? TableCursor.unwalked() : cursor).requested(named));
    held.hold(key, record, DeadLetters.originOf(context));
    if (walks.isRunning(key)) {
      owed.noticedWhileWalking(key);
    } else {
      owed.walkingNow(key);
      startWalk(key);
      applyFinished();
    }
  }

  private void tick(long now) {
    applyFinished();
    for (String table : owed.takeDue(now, walks::isRunning)) {
      startWalk(table);
    }
    applyFinished();
  }

  private void startWalk(String key) {
    TableCursor cursor = cursors.get(key);
    if (cursor == null) {
      return;
    }
    TableName name;
    try {
      name = TableName.parse(key);
    } catch (IllegalArgumentException e) {
      // Written before notices were checked (an empty table name, say): no table to read, and a
      // tick that throws would end the stream thread on every start.
      LOG.warn("Dropping the cursor of '{}', which names no table: {}", key, e.getMessage());
      cursors.delete(key);
      owed.walkingNow(key);
      return;
    }
    walks.start(key, RequestStage.RESOLVE, () -> TableWalks.walk(catalogs, name, cursor));
  }

  private void applyFinished() {
    for (Jobs.Done<String, TableWalks.Resolved> done : walks.collect()) {
      String key = done.key();
      TableCursor cursor = cursors.get(key);
      long now = context.currentSystemTimeMs();
      if (cursor == null) {
        continue;
      }
      if (done.failed()) {
        TableCursor failed = TableWalks.failed(cursor, key, done.failure(), now);
        cursors.put(key, failed);
        owed.retryAt(key, failed.retryAt());
        owed.takeNoticedWhileWalking(key);
        continue;
      }
      List<HeldNotices.Held> letters = held.release(key);
      boolean owedAgain = owed.takeNoticedWhileWalking(key);
      TableWalks.Resolved result = done.result();
      if (result instanceof TableWalks.Resolved.Walked walked) {
        applyWalk(key, cursor, walked, now, owedAgain);
      } else if (result instanceof TableWalks.Resolved.UnknownCatalog unknown) {
        held.deadLetterAll(context, letters, unknown.message());
        cursors.delete(key);
      } else {
        applyMissing(key, cursor, letters);
      }
    }
  }

  private void applyWalk(
      String key,
      TableCursor cursor,
      TableWalks.Resolved.Walked walked,
      long now,
      boolean owedAgain) {
    for (SnapshotEvent event : walked.events()) {
      context.forward(
          new Record<>(key, event, event.getTimestamp().toEpochMilli(), new RecordHeaders()));
      metrics.snapshotPublished(key);
    }
    String reason = walked.changeToCheck(cursor, key);
    if (reason != null) {
      askToRefresh(views.dependingOn(TableName.parse(key)), reason);
    }
    TableCursor next = walked.cursorAfter(cursor, key, now, owedAgain);
    cursors.put(key, next);
    if (next.retryAt() != null) {
      owed.retryAt(key, next.retryAt());
    } else if (next.requested()) {
      startWalk(key);
    }
  }

  /**
   * A table that does not exist: a notice about a table no view reads is a dead letter; a table
   * that views read was dropped, and each of them is asked to refresh, once, which puts it in error
   * with the reason until the table is back.
   */
  private void applyMissing(String key, TableCursor cursor, List<HeldNotices.Held> letters) {
    TableName table = TableName.parse(key);
    List<CompiledView> reading = views.dependingOn(table);
    if (reading.isEmpty()) {
      held.deadLetterAll(context, letters, "unknown table " + key);
      cursors.delete(key);
      return;
    }
    if (!cursor.missing()) {
      LOG.warn(
          "Table {} does not exist: views {} cannot refresh until it is back",
          key,
          reading.stream().map(CompiledView::name).toList());
      askToRefresh(reading, "source table " + key + " does not exist");
    }
    cursors.put(key, cursor.gone());
  }

  /** Asks each of {@code reading} to refresh now, for {@code reason}. */
  private void askToRefresh(List<CompiledView> reading, String reason) {
    long now = context.currentSystemTimeMs();
    for (CompiledView view : reading) {
      context.forward(
          new Record<>(view.name(), EventRecords.refreshCommand(view.name(), reason, now), now));
    }
  }

  @Override
  public void close() {
    // Walks still running are abandoned; the cursors record them as owed, for the next owner.
    walks.abandonAll();
    held.clear();
  }
}
