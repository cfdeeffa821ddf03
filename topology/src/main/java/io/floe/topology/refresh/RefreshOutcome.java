package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.RequestCounts;

/**
 * What a refresh did.
 *
 * @param status whether it committed, found its change already applied, found the target past the
 *     requested source snapshot, or found its pinned snapshot gone from the source's history
 * @param mode how its buckets were computed; {@link Mode#NONE} when nothing was
 * @param reason why the refresh was full (or skipped, or stale), for status and refresh events; may
 *     be null
 * @param recomputed the buckets recomputed, in stored bucket-column values
 * @param bucketType the type of the bucket column, the unit of {@code recomputed}; null if unknown
 * @param refreshId the refresh id recorded in the target
 * @param sourceSnapshotId the source snapshot the refresh read
 * @param sourceSequenceNumber its sequence number
 * @param targetSnapshotId the target snapshot holding the change, if any
 * @param sourceCommitMillis when the source snapshot was committed
 * @param targetCommitMillis when the target snapshot was committed, if any
 * @param rowsRead source rows read
 * @param bytesRead bytes of source data files opened
 * @param rowsWritten recomputed target rows written
 * @param rowsRemoved target rows of the recomputed buckets that were replaced
 * @param filesAdded target data files added
 * @param filesRemoved target data files removed
 * @param chunks chunks committed by this call
 * @param sourceTableUuid the source table's UUID
 * @param targetTableUuid the target table's UUID
 * @param targetMetadataLocation the target's metadata file after the refresh (and its compaction),
 *     for commit notices
 * @param compaction what the compaction that ran after the refresh, in its slot, did; null when
 *     none ran
 * @param requests the object-store requests the refresh made, by stage and kind, and the bytes it
 *     read and wrote
 */
public record RefreshOutcome(
    Status status,
    Mode mode,
    String reason,
    DirtyBuckets recomputed,
    BucketColumnType bucketType,
    String refreshId,
    long sourceSnapshotId,
    long sourceSequenceNumber,
    Long targetSnapshotId,
    long sourceCommitMillis,
    Long targetCommitMillis,
    long rowsRead,
    long bytesRead,
    long rowsWritten,
    long rowsRemoved,
    int filesAdded,
    int filesRemoved,
    int chunks,
    String sourceTableUuid,
    String targetTableUuid,
    String targetMetadataLocation,
    Compaction compaction,
    RequestCounts requests) {

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

  /** This outcome, with the compaction that ran after it and the metadata file it left. */
  public RefreshOutcome withCompaction(Compaction done, String metadataLocation) {
    return new RefreshOutcome(
        status,
        mode,
        reason,
        recomputed,
        bucketType,
        refreshId,
        sourceSnapshotId,
        sourceSequenceNumber,
        targetSnapshotId,
        sourceCommitMillis,
        targetCommitMillis,
        rowsRead,
        bytesRead,
        rowsWritten,
        rowsRemoved,
        filesAdded,
        filesRemoved,
        chunks,
        sourceTableUuid,
        targetTableUuid,
        metadataLocation,
        done,
        requests);
  }

  /** This outcome, with the object-store requests the refresh made. */
  public RefreshOutcome withRequests(RequestCounts counted) {
    return new RefreshOutcome(
        status,
        mode,
        reason,
        recomputed,
        bucketType,
        refreshId,
        sourceSnapshotId,
        sourceSequenceNumber,
        targetSnapshotId,
        sourceCommitMillis,
        targetCommitMillis,
        rowsRead,
        bytesRead,
        rowsWritten,
        rowsRemoved,
        filesAdded,
        filesRemoved,
        chunks,
        sourceTableUuid,
        targetTableUuid,
        targetMetadataLocation,
        compaction,
        counted);
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

  /** Whether every bucket was recomputed. */
  public boolean full() {
    return mode == Mode.FULL;
  }

  /** Whether appended rows were folded into the target rows of their groups (the delta path). */
  public boolean delta() {
    return mode == Mode.DELTA;
  }
}
