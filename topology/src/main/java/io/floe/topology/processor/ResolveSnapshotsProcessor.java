package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewCommand;
import io.floe.topology.FloeMetrics;
import io.floe.topology.detect.SnapshotWalk;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.ingest.WatchedTableLocations;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
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
  private static final int ATTEMPTS = 3;

  /** How long a catalog that failed is left alone. */
  private static final Duration FAILURE_BACKOFF = Duration.ofSeconds(10);

  /** How often a table is read again while it does not show a commit a notice named. */
  private static final Duration AWAIT_INTERVAL = Duration.ofSeconds(1);

  /** How long a commit a notice named may take to show in the catalog. */
  private static final Duration AWAIT_LIMIT = Duration.ofSeconds(60);

  /** The most dead letters held per table while its walk runs. */
  private static final int MAX_HELD_LETTERS = 100;

  private final Function<String, Catalog> catalogs;
  private final ViewIndex views;
  private final String commitsTopic;
  private final Serializer<TableCommitted> notices;
  private final FloeMetrics metrics;
  private final Duration tick;
  private final Jobs<String, Resolved> walks;
  // Tables whose walk is owed again: a notice came while their walk ran.
  private final Set<String> again = new HashSet<>();
  // Tables with a retry time, so that the tick does not scan every cursor.
  private final Map<String, Long> retries = new HashMap<>();
  // The notices of a walk in progress, dead-lettered if the table turns out to be unknown.
  private final Map<String, List<Held>> held = new HashMap<>();
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, TableCursor> cursors;

  /** What a walk found. */
  sealed interface Resolved {
    /**
     * The table's new snapshots as events, whether it shows the commit a notice awaited, its
     * current schema id and a hash of its name mapping ({@link #nameMappingOf}).
     */
    record Walked(
        List<SnapshotEvent> events,
        SnapshotWalk walk,
        boolean showsAwaited,
        int schemaId,
        String nameMapping)
        implements Resolved {}

    /** The table does not exist. */
    record Missing() implements Resolved {}

    /** The catalog is not configured. */
    record UnknownCatalog(String message) implements Resolved {}
  }

  /**
   * @param io the executor that walks tables
   * @param tick how often finished walks are collected and due retries started
   * @param commitsTopic the topic notices come from, named when a dead letter is re-encoded
   * @param notices encodes a rejected notice for the dead-letter topic
   */
  public ResolveSnapshotsProcessor(
      Function<String, Catalog> catalogs,
      ViewIndex views,
      Executor io,
      Duration tick,
      FloeMetrics metrics,
      String commitsTopic,
      Serializer<TableCommitted> notices) {
    this.catalogs = catalogs;
    this.views = views;
    this.walks = new Jobs<>(io);
    this.tick = tick;
    this.metrics = metrics;
    this.commitsTopic = commitsTopic;
    this.notices = notices;
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
              retries.put(entry.key, entry.value.retryAt() == null ? 0L : entry.value.retryAt());
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
    TableName table;
    try {
      table = CommitNotice.tableOf(notice);
    } catch (IllegalArgumentException | NullPointerException e) {
      deadLetter(
          new Held(record, DeadLetters.originOf(context)), "invalid table name: " + e.getMessage());
      return;
    }
    metrics.commitEvent(table.toString());
    String key = table.toString();
    TableCursor cursor = cursors.get(key);
    TableCursor.Awaited named =
        notice.getSnapshotId() == null && notice.getMetadataLocation() == null
            ? null
            : new TableCursor.Awaited(
                notice.getSnapshotId(),
                notice.getMetadataLocation(),
                context.currentSystemTimeMs() + AWAIT_LIMIT.toMillis());
    cursors.put(key, (cursor == null ? TableCursor.unwalked() : cursor).requested(named));
    List<Held> letters = held.computeIfAbsent(key, k -> new ArrayList<>());
    if (letters.size() < MAX_HELD_LETTERS) {
      letters.add(new Held(record, DeadLetters.originOf(context)));
    }
    if (walks.isRunning(key)) {
      again.add(key);
    } else {
      retries.remove(key);
      startWalk(key);
      applyFinished();
    }
  }

  private void tick(long now) {
    applyFinished();
    List<String> due = new ArrayList<>();
    retries.forEach(
        (table, at) -> {
          if (at <= now && !walks.isRunning(table)) {
            due.add(table);
          }
        });
    for (String table : due) {
      retries.remove(table);
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
      retries.remove(key);
      return;
    }
    walks.start(key, RequestStage.RESOLVE, () -> walk(name, cursor));
  }

  /** Runs on the I/O executor. */
  private Resolved walk(TableName name, TableCursor cursor) {
    Catalog catalog;
    try {
      catalog = catalogs.apply(name.catalog());
    } catch (IllegalArgumentException e) {
      return new Resolved.UnknownCatalog(e.getMessage());
    }
    RuntimeException failure = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        Table table = catalog.loadTable(name.identifier());
        SnapshotWalk walk =
            SnapshotWalk.since(table, cursor.tableUuid(), cursor.snapshotId(), name.toString());
        String metadataLocation = metadataLocation(table);
        List<SnapshotEvent> events = new ArrayList<>();
        for (Snapshot snapshot : walk.snapshots()) {
          boolean flagged = walk.isBroken() && events.size() == walk.snapshots().size() - 1;
          events.add(
              EventRecords.snapshot(
                  name,
                  walk.tableUuid(),
                  snapshot,
                  metadataLocation,
                  flagged ? walk.brokenReason() : null));
        }
        return new Resolved.Walked(
            events,
            walk,
            shows(table, cursor.awaited()),
            table.schema().schemaId(),
            nameMappingOf(table));
      } catch (NoSuchTableException e) {
        return new Resolved.Missing();
      } catch (RuntimeException e) {
        failure = e;
        LOG.debug("Attempt {} to resolve {} failed", attempt, name, e);
      }
    }
    throw failure;
  }

  private void applyFinished() {
    for (Jobs.Done<String, Resolved> done : walks.collect()) {
      String key = done.key();
      TableCursor cursor = cursors.get(key);
      long now = context.currentSystemTimeMs();
      if (cursor == null) {
        continue;
      }
      if (done.failed()) {
        long at = now + FAILURE_BACKOFF.toMillis();
        LOG.warn(
            "Cannot read table {} from its catalog; retrying in {} ms",
            key,
            FAILURE_BACKOFF.toMillis(),
            done.failure());
        cursors.put(key, cursor.failed(at, String.valueOf(done.failure())));
        retries.put(key, at);
        again.remove(key);
        continue;
      }
      List<Held> letters = held.remove(key);
      boolean owedAgain = again.remove(key);
      Resolved result = done.result();
      if (result instanceof Resolved.Walked walked) {
        applyWalk(key, cursor, walked, now, owedAgain);
      } else if (result instanceof Resolved.UnknownCatalog unknown) {
        deadLetterAll(letters, unknown.message());
        cursors.delete(key);
      } else {
        applyMissing(key, cursor, letters);
      }
    }
  }

  private void applyWalk(
      String key, TableCursor cursor, Resolved.Walked walked, long now, boolean owedAgain) {
    SnapshotWalk walk = walked.walk();
    for (SnapshotEvent event : walked.events()) {
      context.forward(
          new Record<>(key, event, event.getTimestamp().toEpochMilli(), new RecordHeaders()));
      metrics.snapshotPublished(key);
    }
    if (walk.isBroken()) {
      LOG.info(
          "Table {}: {}; views on it will refresh from snapshot {}",
          key,
          walk.brokenReason(),
          walk.currentSnapshotId());
    }
    Long last = walk.currentSnapshotId() != null ? walk.currentSnapshotId() : cursor.snapshotId();
    boolean sameHistory =
        walked.events().isEmpty()
            && walk.currentSnapshotId() != null
            && walk.tableUuid().equals(cursor.tableUuid());
    String reason = null;
    if (sameHistory && cursor.schemaId() != null && cursor.schemaId() != walked.schemaId()) {
      reason =
          "source table "
              + key
              + " changed its schema (schema "
              + cursor.schemaId()
              + " -> "
              + walked.schemaId()
              + ")";
    } else if (sameHistory
        && cursor.nameMapping() != null
        && !cursor.nameMapping().equals(walked.nameMapping())) {
      reason = "source table " + key + " changed its name mapping (schema.name-mapping.default)";
    }
    if (reason != null) {
      // A schema change or a new name mapping creates no snapshot, and no change event would
      // reach the views: each is asked to refresh, and its refresh recomputes every bucket if the
      // change touches what it reads (RefreshPlanner compares the source columns' identity), or
      // finds the target current.
      LOG.info("Table {}: {}; views on it check what they read", key, reason);
      askToRefresh(views.readingTable(TableName.parse(key)), reason);
    }
    TableCursor moved =
        TableCursor.at(walk.tableUuid(), last, walked.schemaId(), walked.nameMapping());
    TableCursor.Awaited awaited = cursor.awaited();
    if (awaited != null && !walked.showsAwaited() && walked.events().isEmpty()) {
      if (now < awaited.until()) {
        LOG.debug("Table {} does not show the commit of {} yet; reading it again", key, awaited);
        long at = now + AWAIT_INTERVAL.toMillis();
        cursors.put(key, moved.requested(awaited).awaitingAgainAt(at));
        retries.put(key, at);
        return;
      }
      LOG.info(
          "Table {} did not show the commit a notice named within {} s; no longer waiting for it"
              + " (a writer that loses a commit race leaves such a metadata file behind)",
          key,
          AWAIT_LIMIT.toSeconds());
    }
    if (owedAgain) {
      cursors.put(key, moved.requested(null));
      startWalk(key);
    } else {
      cursors.put(key, moved);
    }
  }

  /**
   * A table that does not exist: a notice about a table no view reads is a dead letter; a table
   * that views read was dropped, and each of them is asked to refresh, once, which puts it in error
   * with the reason until the table is back.
   */
  private void applyMissing(String key, TableCursor cursor, List<Held> letters) {
    TableName table = TableName.parse(key);
    List<CompiledView> reading = views.readingTable(table);
    if (reading.isEmpty()) {
      deadLetterAll(letters, "unknown table " + key);
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

  /**
   * A hash of the table's name mapping as recorded, empty when it has none: only a hint that it
   * changed, for the views decide by the columns they read.
   */
  private static String nameMappingOf(Table table) {
    String json = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    return json == null ? "" : Integer.toHexString(json.hashCode());
  }

  /** Asks each of {@code reading} to refresh now, for {@code reason}. */
  private void askToRefresh(List<CompiledView> reading, String reason) {
    long now = context.currentSystemTimeMs();
    for (CompiledView view : reading) {
      context.forward(
          new Record<>(view.name(), EventRecords.refreshCommand(view.name(), reason, now), now));
    }
  }

  /**
   * Whether the table shows the commit a notice named: its snapshot, or its metadata file as the
   * current one or one of the previous ones.
   */
  private static boolean shows(Table table, TableCursor.Awaited awaited) {
    if (awaited == null) {
      return true;
    }
    if (awaited.snapshotId() != null && table.snapshot(awaited.snapshotId()) == null) {
      return false;
    }
    if (awaited.metadataLocation() != null && table instanceof HasTableOperations ops) {
      TableMetadata metadata = ops.operations().current();
      String named = WatchedTableLocations.normalize(awaited.metadataLocation());
      return named.equals(WatchedTableLocations.normalize(metadata.metadataFileLocation()))
          || metadata.previousFiles().stream()
              .anyMatch(e -> named.equals(WatchedTableLocations.normalize(e.file())));
    }
    return true;
  }

  /** A notice kept while its table is walked, to be dead-lettered if the table is unknown. */
  private record Held(Record<String, TableCommitted> record, String origin) {}

  private void deadLetter(Held letter, String reason) {
    metrics.deadLettered(NAME, reason);
    byte[] bytes = notices.serialize(commitsTopic, letter.record().value());
    context.forward(DeadLetters.of(letter.origin(), NAME, letter.record(), bytes, reason));
  }

  private void deadLetterAll(List<Held> letters, String reason) {
    if (letters == null) {
      LOG.warn("Notices walked before a restart cannot be dead-lettered: {}", reason);
      return;
    }
    letters.forEach(letter -> deadLetter(letter, reason));
  }

  private static String metadataLocation(Table table) {
    if (table instanceof HasTableOperations ops) {
      return ops.operations().current().metadataFileLocation();
    }
    return null;
  }

  @Override
  public void close() {
    // Walks still running are abandoned; the cursors record them as owed, for the next owner.
    walks.abandonAll();
    held.clear();
  }
}
