package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.topology.detect.SnapshotWalk;
import io.floe.topology.iceberg.SharedMetadataTables;
import io.floe.topology.ingest.WatchedTableLocations;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.TableName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.util.Tasks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The walk of the resolve stage, which runs on Floe's I/O executor: load a table and follow its
 * snapshot chain from the cursor ({@link SnapshotWalk}), as snapshot events; and what a walk means
 * for the cursor it started from.
 */
final class TableWalks {

  private static final Logger LOG = LoggerFactory.getLogger(TableWalks.class);
  private static final int ATTEMPTS = 3;

  /** How long a catalog that failed is left alone. */
  private static final Duration FAILURE_BACKOFF = Duration.ofSeconds(10);

  /** How often a table is read again while it does not show a commit a notice named. */
  private static final Duration AWAIT_INTERVAL = Duration.ofSeconds(1);

  /** How long a commit a notice named may take to show in the catalog. */
  static final Duration AWAIT_LIMIT = Duration.ofSeconds(60);

  private TableWalks() {}

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
        implements Resolved {

      /**
       * Why views on the table are to check what they read, though the walk found no new snapshot:
       * a schema change or a new name mapping creates none; null when neither changed.
       */
      String changeSince(TableCursor cursor, String table) {
        boolean sameHistory =
            events.isEmpty()
                && walk.currentSnapshotId() != null
                && walk.tableUuid().equals(cursor.tableUuid());
        if (sameHistory && cursor.schemaId() != null && cursor.schemaId() != schemaId) {
          return "source table "
              + table
              + " changed its schema (schema "
              + cursor.schemaId()
              + " -> "
              + schemaId
              + ")";
        } else if (sameHistory
            && cursor.nameMapping() != null
            && !cursor.nameMapping().equals(nameMapping)) {
          return "source table "
              + table
              + " changed its name mapping (schema.name-mapping.default)";
        }
        return null;
      }

      /**
       * {@link #changeSince}, logged: a schema change or a new name mapping creates no snapshot,
       * and no change event would reach the views; each is asked to refresh, and its refresh
       * recomputes every bucket if the change touches what it reads (RefreshPlanner compares the
       * source columns' identity), or finds the target current.
       */
      String changeToCheck(TableCursor cursor, String table) {
        if (walk.isBroken()) {
          LOG.info(
              "Table {}: {}; views on it will refresh from snapshot {}",
              table,
              walk.brokenReason(),
              walk.currentSnapshotId());
        }
        String reason = changeSince(cursor, table);
        if (reason != null) {
          LOG.info("Table {}: {}; views on it check what they read", table, reason);
        }
        return reason;
      }

      /**
       * The cursor moved to where the walk ended: owing a walk again at its {@code retryAt} while
       * the table does not show the commit a notice named (for at most {@link #AWAIT_LIMIT}), or
       * owing one now if {@code owedAgain} (a notice came while the walk ran).
       */
      TableCursor cursorAfter(TableCursor cursor, String table, long now, boolean owedAgain) {
        Long last =
            walk.currentSnapshotId() != null ? walk.currentSnapshotId() : cursor.snapshotId();
        TableCursor moved = TableCursor.at(walk.tableUuid(), last, schemaId, nameMapping);
        TableCursor.Awaited awaited = cursor.awaited();
        if (awaited != null && !showsAwaited && events.isEmpty()) {
          if (now < awaited.until()) {
            LOG.debug(
                "Table {} does not show the commit of {} yet; reading it again", table, awaited);
            return moved.requested(awaited).awaitingAgainAt(now + AWAIT_INTERVAL.toMillis());
          }
          LOG.info(
              "Table {} did not show the commit a notice named within {} s; no longer waiting for"
                  + " it (a writer that loses a commit race leaves such a metadata file behind)",
              table,
              AWAIT_LIMIT.toSeconds());
        }
        return owedAgain ? moved.requested(null) : moved;
      }
    }

    /** The table does not exist. */
    record Missing() implements Resolved {}

    /** The catalog is not configured. */
    record UnknownCatalog(String message) implements Resolved {}
  }

  /** The cursor of a table whose walk failed: owing it again after a backoff. */
  static TableCursor failed(TableCursor cursor, String table, Throwable failure, long now) {
    LOG.warn(
        "Cannot read table {} from its catalog; retrying in {} ms",
        table,
        FAILURE_BACKOFF.toMillis(),
        failure);
    return cursor.failed(now + FAILURE_BACKOFF.toMillis(), String.valueOf(failure));
  }

  /** Walks {@code name} from {@code cursor}, trying a failing catalog a few times. */
  static Resolved walk(Function<String, Catalog> catalogs, TableName name, TableCursor cursor) {
    Catalog catalog;
    try {
      catalog = catalogs.apply(name.catalog());
    } catch (IllegalArgumentException e) {
      return new Resolved.UnknownCatalog(e.getMessage());
    }
    AtomicInteger attempts = new AtomicInteger();
    AtomicReference<Resolved> resolved = new AtomicReference<>();
    // Tried again at once: a catalog that still fails is left alone for FAILURE_BACKOFF by the
    // stage (failed()), whose stream thread never waits.
    Tasks.foreach(name)
        .retry(ATTEMPTS - 1)
        .exponentialBackoff(0, 0, Long.MAX_VALUE, 1)
        .run(n -> resolved.set(walkOnce(catalog, n, cursor, attempts.incrementAndGet())));
    return resolved.get();
  }

  private static Resolved walkOnce(
      Catalog catalog, TableName name, TableCursor cursor, int attempt) {
    try {
      Table table = SharedMetadataTables.load(catalog, name.identifier());
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
      LOG.debug("Attempt {} to resolve {} failed", attempt, name, e);
      throw e;
    }
  }

  /**
   * A hash of the table's name mapping as recorded, empty when it has none: only a hint that it
   * changed, for the views decide by the columns they read.
   */
  private static String nameMappingOf(Table table) {
    String json = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    return json == null ? "" : Integer.toHexString(json.hashCode());
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

  private static String metadataLocation(Table table) {
    if (table instanceof HasTableOperations ops) {
      return ops.operations().current().metadataFileLocation();
    }
    return null;
  }
}
