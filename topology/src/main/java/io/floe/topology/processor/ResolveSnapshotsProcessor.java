package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.TableRef;
import io.floe.topology.FloeMetrics;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.ingest.WatchedTableLocations;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.TableName;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
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
 * lost, into one {@link SnapshotEvent} per real snapshot of the table, in commit order. The table's
 * snapshot chain is read from its catalog and walked from the table's cursor. When the walk is
 * impossible (rollback, expired history, the table dropped and recreated) the current snapshot is
 * published flagged so that the views on the table fully refresh.
 *
 * <p>Outputs {@link SnapshotEvent}s, and {@code byte[]} dead letters for notices about an unknown
 * catalog or table. A catalog that fails is retried a few times on the spot, then from a punctuator
 * with backoff, so that the notice is not lost.
 */
public final class ResolveSnapshotsProcessor
    implements Processor<String, TableCommitted, String, Object> {

  /** The node name. */
  public static final String NAME = "resolve-snapshots";

  private static final Logger LOG = LoggerFactory.getLogger(ResolveSnapshotsProcessor.class);
  private static final int ATTEMPTS = 3;

  /** How often pending retries are looked at. */
  private static final Duration RETRY_TICK = Duration.ofSeconds(1);

  /** How long a catalog that failed is left alone. */
  private static final Duration FAILURE_BACKOFF = Duration.ofSeconds(10);

  /** How long a commit a notice named may take to show in the catalog. */
  private static final Duration AWAIT_LIMIT = Duration.ofSeconds(60);

  private final Function<String, Catalog> catalogs;
  private final String commitsTopic;
  private final Serializer<TableCommitted> notices;
  private final FloeMetrics metrics;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, TableCursor> cursors;

  /**
   * @param commitsTopic the topic notices come from, named when a dead letter is re-encoded
   * @param notices encodes a rejected notice for the dead-letter topic
   */
  public ResolveSnapshotsProcessor(
      Function<String, Catalog> catalogs,
      FloeMetrics metrics,
      String commitsTopic,
      Serializer<TableCommitted> notices) {
    this.catalogs = catalogs;
    this.metrics = metrics;
    this.commitsTopic = commitsTopic;
    this.notices = notices;
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.cursors = context.getStateStore(StoreNames.TABLE_CURSORS);
    context.schedule(RETRY_TICK, PunctuationType.WALL_CLOCK_TIME, this::retryDue);
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
    } catch (IllegalArgumentException e) {
      deadLetter(record, "invalid table name: " + e.getMessage());
      return;
    }
    metrics.commitEvent(table.toString());
    Catalog catalog;
    try {
      catalog = catalogs.apply(table.catalog());
    } catch (IllegalArgumentException e) {
      deadLetter(record, e.getMessage());
      return;
    }
    long now = context.currentSystemTimeMs();
    Table loaded;
    try {
      loaded = resolve(table, catalog, now);
    } catch (NoSuchTableException e) {
      deadLetter(record, "unknown table " + table);
      return;
    }
    if (loaded != null && !shows(loaded, notice)) {
      LOG.debug("Table {} does not show the commit of {} yet; reading it again", table, notice);
      TableCursor cursor = cursors.get(table.toString());
      cursors.put(
          table.toString(),
          cursor.awaiting(now + RETRY_TICK.toMillis(), now + AWAIT_LIMIT.toMillis()));
    }
  }

  /**
   * Whether the table shows the commit the notice names: its snapshot, or its metadata file as the
   * current one or one of the previous ones.
   */
  private static boolean shows(Table table, TableCommitted notice) {
    if (notice.getSnapshotId() != null && table.snapshot(notice.getSnapshotId()) == null) {
      return false;
    }
    if (notice.getMetadataLocation() != null && table instanceof HasTableOperations ops) {
      TableMetadata metadata = ops.operations().current();
      String named = WatchedTableLocations.normalize(notice.getMetadataLocation());
      return named.equals(WatchedTableLocations.normalize(metadata.metadataFileLocation()))
          || metadata.previousFiles().stream()
              .anyMatch(e -> named.equals(WatchedTableLocations.normalize(e.file())));
    }
    return true;
  }

  private void deadLetter(Record<String, TableCommitted> record, String reason) {
    metrics.deadLettered(NAME, reason);
    byte[] bytes = notices.serialize(commitsTopic, record.value());
    context.forward(DeadLetters.of(context, NAME, record, bytes, reason));
  }

  /**
   * Publishes the table's snapshots since its cursor and returns the table; on failure, schedules a
   * retry and returns null.
   */
  private Table resolve(TableName name, Catalog catalog, long now) {
    RuntimeException failure = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        Table table = catalog.loadTable(name.identifier());
        publish(name, table, now);
        return table;
      } catch (NoSuchTableException e) {
        throw e;
      } catch (RuntimeException e) {
        failure = e;
        LOG.debug("Attempt {} to resolve {} failed", attempt, name, e);
      }
    }
    TableCursor cursor = cursors.get(name.toString());
    TableCursor failed = cursor == null ? TableCursor.at(null, null) : cursor;
    long backoff = FAILURE_BACKOFF.toMillis();
    cursors.put(name.toString(), failed.withRetry(now + backoff, String.valueOf(failure)));
    LOG.warn("Cannot read table {} from its catalog; retrying in {} ms", name, backoff, failure);
    return null;
  }

  /** Reads again the tables whose retry is due: after a failure, or awaiting a named commit. */
  private void retryDue(long now) {
    List<KeyValue<String, TableCursor>> due = new ArrayList<>();
    try (KeyValueIterator<String, TableCursor> all = cursors.all()) {
      all.forEachRemaining(
          entry -> {
            if (entry.value.retryAt() != null && entry.value.retryAt() <= now) {
              due.add(entry);
            }
          });
    }
    for (KeyValue<String, TableCursor> entry : due) {
      TableName name = TableName.parse(entry.key);
      try {
        resolve(name, catalogs.apply(name.catalog()), now);
      } catch (NoSuchTableException | IllegalArgumentException e) {
        LOG.warn("Giving up on table {}: {}", name, e.getMessage());
        cursors.put(
            entry.key,
            new TableCursor(
                entry.value.tableUuid(), entry.value.snapshotId(), null, e.getMessage(), null));
      }
    }
  }

  private void publish(TableName name, Table table, long now) {
    String key = name.toString();
    TableCursor cursor = cursors.get(key);
    String uuid = table.uuid().toString();
    Snapshot current = table.currentSnapshot();
    List<Snapshot> walk = new ArrayList<>();
    String broken = null;

    if (current == null) {
      // An empty table: nothing to publish yet.
    } else if (cursor == null || cursor.tableUuid() == null) {
      walk.add(current);
      broken = "first commit notice for table " + name + ": earlier history was not walked";
    } else if (!uuid.equals(cursor.tableUuid())) {
      walk.add(current);
      broken = "table " + name + " was dropped and recreated";
    } else if (cursor.snapshotId() == null) {
      walk.addAll(chainUpTo(table, current, null));
      if (walk.get(0).parentId() != null) {
        broken = "the first snapshots of table " + name + " have expired";
      }
    } else if (current.snapshotId() != cursor.snapshotId()) {
      if (SnapshotUtil.isAncestorOf(table, current.snapshotId(), cursor.snapshotId())) {
        walk.addAll(chainUpTo(table, current, cursor.snapshotId()));
        if (!cursor.snapshotId().equals(walk.get(0).parentId())) {
          // ancestorsBetween stops quietly at an expired snapshot: the walk would skip changes.
          broken = "snapshots after " + cursor.snapshotId() + " of " + name + " have expired";
          walk = List.of(current);
        }
      } else {
        walk.add(current);
        broken =
            "snapshot "
                + cursor.snapshotId()
                + " is not an ancestor of "
                + current.snapshotId()
                + " in "
                + name
                + " (rollback or expired history)";
      }
    }

    String metadataLocation = metadataLocation(table);
    for (Snapshot snapshot : walk) {
      boolean flagged = broken != null && snapshot == walk.get(walk.size() - 1);
      SnapshotEvent event =
          event(name, uuid, table, snapshot, metadataLocation, flagged ? broken : null);
      context.forward(new Record<>(key, event, snapshot.timestampMillis(), new RecordHeaders()));
      metrics.snapshotPublished(key);
    }
    if (broken != null) {
      LOG.info(
          "Table {}: {}; views on it will refresh from snapshot {}",
          name,
          broken,
          current.snapshotId());
    }
    Long last =
        current == null ? (cursor == null ? null : cursor.snapshotId()) : current.snapshotId();
    Long awaitUntil = cursor == null ? null : cursor.awaitUntil();
    if (walk.isEmpty() && awaitUntil != null && now < awaitUntil) {
      // Still waiting for the catalog to show a commit a notice named.
      cursors.put(
          key, TableCursor.at(uuid, last).awaiting(now + RETRY_TICK.toMillis(), awaitUntil));
      return;
    }
    if (walk.isEmpty() && awaitUntil != null) {
      LOG.info(
          "Table {} did not show the commit a notice named within {} s; no longer waiting for it"
              + " (a writer that loses a commit race leaves such a metadata file behind)",
          name,
          AWAIT_LIMIT.toSeconds());
    }
    cursors.put(key, TableCursor.at(uuid, last));
  }

  /** The snapshots after {@code after} (exclusive) up to {@code current}, oldest first. */
  private static List<Snapshot> chainUpTo(Table table, Snapshot current, Long after) {
    List<Snapshot> chain = new ArrayList<>();
    for (Snapshot s = current;
        s != null;
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (after != null && s.snapshotId() == after) {
        break;
      }
      chain.add(s);
    }
    Collections.reverse(chain);
    return chain;
  }

  private static String metadataLocation(Table table) {
    if (table instanceof HasTableOperations ops) {
      return ops.operations().current().metadataFileLocation();
    }
    return null;
  }

  private static SnapshotEvent event(
      TableName name,
      String uuid,
      Table table,
      Snapshot snapshot,
      String metadataLocation,
      String broken) {
    return SnapshotEvent.newBuilder()
        .setTable(
            TableRef.newBuilder()
                .setCatalog(name.catalog())
                .setNamespace(name.namespace())
                .setName(name.table())
                .setUuid(uuid)
                .build())
        .setSnapshotId(snapshot.snapshotId())
        .setParentId(snapshot.parentId())
        .setSequenceNumber(snapshot.sequenceNumber())
        .setTimestamp(Instant.ofEpochMilli(snapshot.timestampMillis()))
        .setOperation(snapshot.operation())
        .setSummary(snapshot.summary())
        .setManifestList(snapshot.manifestListLocation())
        .setSchemaId(snapshot.schemaId())
        .setMetadataLocation(metadataLocation)
        .setHistoryBroken(broken != null)
        .setHistoryBrokenReason(broken)
        .build();
  }
}
