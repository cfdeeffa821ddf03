package io.floe.topology.refresh;

import io.floe.topology.detect.SourceSnapshot;

/**
 * The keys Floe records on target tables: as snapshot-summary properties of every target commit
 * and, because summaries vanish when snapshots expire, as table properties (DESIGN §3.6). The table
 * property {@link #SOURCE_SNAPSHOT_ID} always means "the whole target reflects this source
 * snapshot"; a chunked refresh records its progress in {@link #PROGRESS} and moves the bookmark
 * only with its last chunk.
 */
public final class FloeProperties {

  /** The view whose target this is; also marks a table Floe created for that view. */
  public static final String VIEW = "floe.view";

  /** Hash of the view definition the target reflects. */
  public static final String VIEW_VERSION = "floe.view-version";

  /**
   * The revision of the view definition that last committed: the definition's place among all
   * definitions of the view, larger for a later one. It is the definition's own, carried in its
   * floe.views record and given by whoever writes the record (one more than the largest of the
   * revision in force and the one the target records), so that it outlives the topic's offsets;
   * records of releases before it carry none and take their offset on floe.views. A commit of a
   * definition of another version with a smaller revision is refused, and reported as the view's
   * error when that definition is the one in force; a definition of the same version (the same
   * rows) commits whatever its revision, and the target's revision never goes back.
   */
  public static final String VIEW_REVISION = "floe.view-revision";

  /** The source snapshot the whole target reflects. */
  public static final String SOURCE_SNAPSHOT_ID = "floe.source-snapshot-id";

  /** The source table, as catalog.namespace.table, and its UUID. */
  public static final String SOURCE_TABLE = "floe.source-table";

  public static final String SOURCE_TABLE_UUID = "floe.source-table-uuid";

  /**
   * The identity of the source columns the view reads, as the whole target reflects them: their
   * field ids and types ({@link io.floe.topology.view.SourceColumns#format}), without their names,
   * since a rename that keeps both changes no value (DESIGN §3.4).
   */
  public static final String SOURCE_COLUMNS = "floe.source-columns";

  /**
   * The state of each dimension table the view joins, as the whole target reflects them: table
   * UUID, snapshot and the identity of the columns read ({@link DimensionStates}, DESIGN §3.10);
   * absent for a view of one table.
   */
  public static final String DIMENSION_STATES = "floe.dimension-states";

  /** Deterministic id of the refresh (a chunk adds {@code #k/n}); unique per committed change. */
  public static final String REFRESH_ID = "floe.refresh-id";

  /** How the refresh ran: full, incremental (buckets recomputed) or delta. */
  public static final String REFRESH_MODE = "floe.refresh-mode";

  /**
   * Snapshot summary of a refresh's last commit: the buckets it recomputed ({@link
   * io.floe.topology.bucket.DirtyBuckets#format}), so that a refresh found applied after a crash
   * reports what it changed.
   */
  public static final String DIRTY_BUCKETS = "floe.dirty-buckets";

  /** Snapshot summary of each refresh commit: the recomputed rows it wrote and replaced. */
  public static final String ROWS_WRITTEN = "floe.rows-written";

  public static final String ROWS_REPLACED = "floe.rows-replaced";

  /**
   * Snapshot summary of each refresh commit: the commit time (epoch millis) of the oldest commit of
   * the root source (a table no view writes) that the refresh brought into the target; a view
   * reading the target counts its staleness from it (DESIGN §7). A snapshot without it is its own
   * origin.
   */
  public static final String SOURCE_COMMITTED_AT = SourceSnapshot.SOURCE_COMMITTED_AT;

  /** Table property of a chunked refresh in progress: the id of its last committed chunk. */
  public static final String PROGRESS = "floe.progress";

  /**
   * Of a view that keeps partial states apart from its rows ({@link StateTable}): the snapshot of
   * its state table that the target's rows were computed with, in every target commit's summary and
   * as a table property. A state table whose current snapshot is another is not trusted.
   */
  public static final String STATE_SNAPSHOT_ID = "floe.state-snapshot-id";

  /**
   * Marks a state table ({@link StateTable}): the target whose view's partial states it holds. The
   * table also carries {@link #VIEW}, so the ownership rules of targets cover it.
   */
  public static final String STATE_OF = "floe.state-of";

  private FloeProperties() {}
}
