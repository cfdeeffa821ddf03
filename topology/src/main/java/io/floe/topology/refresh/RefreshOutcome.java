package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.view.TableName;
import java.util.List;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * What a refresh did. Built by its named factories: {@link #committed}, {@link #skipped}, and
 * {@link #reportedLate} for a refresh an earlier run committed.
 *
 * @param status whether it committed, found its change already applied, found the target past the
 *     requested source snapshot, or found its pinned snapshot gone from the source's history
 * @param mode how its buckets were computed; {@link Mode#NONE} when nothing was
 * @param reason why the refresh was full (or skipped, or stale), for status and refresh events; may
 *     be null
 * @param refreshId the refresh id recorded in the target
 * @param recomputed the buckets recomputed, in stored bucket-column values
 * @param bucketType the type of the bucket column, the unit of {@code recomputed}; null if unknown
 * @param source the source snapshot the refresh read
 * @param dimensions each dimension table the refresh joined, at the snapshot it read, ordered by
 *     table name; empty for a view of one table and for a refresh that computed nothing
 * @param target the target snapshot holding the change, if any
 * @param work what the refresh read and wrote
 * @param compaction what the compaction that ran after the refresh, in its slot, did; null when
 *     none ran
 * @param requests the object-store requests the refresh made, by stage and kind, and the bytes it
 *     read and wrote
 */
public record RefreshOutcome(
    Status status,
    Mode mode,
    String reason,
    RefreshId refreshId,
    DirtyBuckets recomputed,
    BucketColumnType bucketType,
    SourceSnapshot source,
    List<Dimension> dimensions,
    Target target,
    Work work,
    Compaction compaction,
    RequestCounts requests) {

  public RefreshOutcome {
    dimensions = List.copyOf(dimensions);
  }

  /**
   * A dimension table a refresh joined (DESIGN §3.10), at the one snapshot it read for the whole
   * refresh.
   *
   * @param table the dimension as the view names it
   * @param snapshot the snapshot read; null when the dimension had none (no rows). Its commit time
   *     is 0 when not known (a refresh reported after a restart, told from its commit's summary)
   */
  public record Dimension(TableName table, SourceSnapshot snapshot) {}

  /**
   * The target as a refresh left it.
   *
   * @param tableUuid the target table's UUID, or null when it was not prepared
   * @param snapshotId the target snapshot holding the change, or null when there is none
   * @param committedAt when that snapshot was committed (epoch millis), or null
   * @param metadataLocation the target's metadata file after the refresh (and its compaction), for
   *     commit notices; null when unknown
   */
  public record Target(
      String tableUuid, Long snapshotId, Long committedAt, String metadataLocation) {

    /** No target: it was not prepared. */
    static final Target NONE = new Target(null, null, null, null);

    /** The target {@code table} (or null), holding the change in {@code snapshot} (or null). */
    static Target of(Table table, Snapshot snapshot) {
      return table == null
          ? NONE
          : new Target(
              table.uuid().toString(),
              snapshot == null ? null : snapshot.snapshotId(),
              snapshot == null ? null : snapshot.timestampMillis(),
              metadataLocation(table));
    }

    /** The location of the table's current metadata file, or null when it cannot tell. */
    static String metadataLocation(Table table) {
      return table instanceof HasTableOperations ops
          ? ops.operations().current().metadataFileLocation()
          : null;
    }
  }

  /**
   * What a refresh read and wrote.
   *
   * @param rowsRead source rows read
   * @param bytesRead bytes of source data files opened
   * @param rowsWritten recomputed target rows written
   * @param rowsRemoved target rows of the recomputed buckets that were replaced
   * @param filesAdded target data files added
   * @param filesRemoved target data files removed
   * @param chunks chunks committed by this call
   */
  public record Work(
      long rowsRead,
      long bytesRead,
      long rowsWritten,
      long rowsRemoved,
      int filesAdded,
      int filesRemoved,
      int chunks) {

    /** Nothing read or written. */
    public static final Work NONE = new Work(0, 0, 0, 0, 0, 0, 0);

    /** What earlier commits wrote, told from their summaries: nothing was read or committed now. */
    static Work recorded(long rowsWritten, long rowsRemoved, int filesAdded, int filesRemoved) {
      return new Work(0, 0, rowsWritten, rowsRemoved, filesAdded, filesRemoved, 0);
    }
  }

  /** A refresh that committed its change to the target, in {@code target}'s snapshot. */
  public static RefreshOutcome committed(
      RefreshId refreshId,
      Mode mode,
      String reason,
      DirtyBuckets recomputed,
      BucketColumnType bucketType,
      SourceSnapshot source,
      List<Dimension> dimensions,
      Target target,
      Work work) {
    return new RefreshOutcome(
        Status.COMMITTED,
        mode,
        reason,
        refreshId,
        recomputed,
        bucketType,
        source,
        dimensions,
        target,
        work,
        null,
        RequestCounts.NONE);
  }

  /**
   * A refresh that computed nothing: {@code status} says why (its change already applied with what
   * it did no longer known, the target ahead, the pin stale); {@code target} is as it was found.
   */
  public static RefreshOutcome skipped(
      Status status,
      String reason,
      RefreshId refreshId,
      BucketColumnType bucketType,
      SourceSnapshot source,
      Target target) {
    return new RefreshOutcome(
        status,
        Mode.NONE,
        reason,
        refreshId,
        DirtyBuckets.none(),
        bucketType,
        source,
        List.of(),
        target,
        Work.NONE,
        null,
        RequestCounts.NONE);
  }

  /**
   * What a compaction of the target did ({@link TargetCompaction}).
   *
   * @param targetSnapshotId the {@code replace} snapshot it committed
   * @param partitions partitions rewritten
   * @param dataFilesRewritten data files removed
   * @param deleteFilesRemoved delete files removed
   * @param filesAdded data files written
   * @param bytesRewritten bytes of the data files removed
   * @param bytesWritten bytes of the data files written
   * @param rowsWritten rows written
   * @param durationMs how long it took
   */
  public record Compaction(
      long targetSnapshotId,
      int partitions,
      int dataFilesRewritten,
      int deleteFilesRemoved,
      int filesAdded,
      long bytesRewritten,
      long bytesWritten,
      long rowsWritten,
      long durationMs) {}

  /**
   * This outcome as a later run reports it: the refresh was committed by an earlier run, which
   * crashed before it could report it.
   */
  public RefreshOutcome reportedLate() {
    return with(Status.ALREADY_APPLIED, target, compaction, requests);
  }

  /** This outcome, with the compaction that ran after it and the metadata file it left. */
  public RefreshOutcome withCompaction(Compaction done, String metadataLocation) {
    Target compacted =
        new Target(target.tableUuid(), target.snapshotId(), target.committedAt(), metadataLocation);
    return with(status, compacted, done, requests);
  }

  /** This outcome, with the object-store requests the refresh made. */
  public RefreshOutcome withRequests(RequestCounts counted) {
    return with(status, target, compaction, counted);
  }

  /** This outcome with another status, target, compaction and request counts. */
  private RefreshOutcome with(
      Status newStatus, Target newTarget, Compaction newCompaction, RequestCounts newRequests) {
    return new RefreshOutcome(
        newStatus,
        mode,
        reason,
        refreshId,
        recomputed,
        bucketType,
        source,
        dimensions,
        newTarget,
        work,
        newCompaction,
        newRequests);
  }

  /** How a refresh ended. */
  public enum Status {
    /** The change is committed to the target. */
    COMMITTED,
    /** An earlier run of the same refresh had already committed it (a crash came in between). */
    ALREADY_APPLIED,
    /**
     * The target already reflects a later source snapshot, or a newer definition of the view
     * committed to it: nothing was done.
     */
    TARGET_AHEAD,
    /**
     * The pinned source snapshot is no longer in the source's history (expired, rolled back, the
     * table recreated): nothing was done, and the view must be pinned again.
     */
    STALE_PIN
  }

  /** How the buckets of a refresh were computed (the summary's {@code floe.refresh-mode}). */
  public enum Mode {
    /** Every bucket recomputed. */
    FULL,
    /** The dirty buckets recomputed. */
    INCREMENTAL,
    /** Appended rows folded into the target rows of their groups. */
    DELTA,
    /** Nothing computed. */
    NONE;

    /** The name recorded in snapshot summaries and metrics. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The mode a summary records, or {@link #NONE}. */
    public static Mode ofLabel(String label) {
      for (Mode mode : values()) {
        if (mode.label().equals(label)) {
          return mode;
        }
      }
      return NONE;
    }
  }

  /**
   * The commit time (epoch millis) of the newest snapshot the refresh read, of the source or of a
   * dimension it joins; 0 when none is known. A refresh's lag counts from it: one that a dimension
   * commit asked for brings that commit in, not the source's older one.
   */
  public long newestReadCommittedAt() {
    long newest = source.committedAt();
    for (Dimension dimension : dimensions) {
      if (dimension.snapshot() != null) {
        newest = Math.max(newest, dimension.snapshot().committedAt());
      }
    }
    return newest;
  }

  /** Whether every bucket was recomputed. */
  public boolean full() {
    return mode == Mode.FULL;
  }

  /** Whether appended rows were folded into the target rows of their groups (the delta path). */
  public boolean delta() {
    return mode == Mode.DELTA;
  }
}
