package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;

/**
 * What a refresh did.
 *
 * @param status whether it committed, found its change already applied, or found the target already
 *     past the requested source snapshot
 * @param full whether every bucket was recomputed
 * @param delta whether appended rows were folded into the target rows of their groups instead of
 *     recomputing the dirty buckets (the delta path)
 * @param reason why the refresh was full (or skipped), for status and refresh events; may be null
 * @param recomputed the buckets recomputed, in stored bucket-column values
 * @param bucketType the type of the bucket column, the unit of {@code recomputed}; null if unknown
 * @param refreshId the refresh id recorded in the target, derived from the pinned snapshot
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
 * @param targetMetadataLocation the target's metadata file after the refresh, for commit notices
 */
public record RefreshOutcome(
    Status status,
    boolean full,
    boolean delta,
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
    String targetMetadataLocation) {

  /** How a refresh ended. */
  public enum Status {
    /** The change is committed to the target. */
    COMMITTED,
    /** An earlier attempt of the same refresh had already committed it. */
    ALREADY_APPLIED,
    /** The target already reflects a later source snapshot; nothing was done. */
    TARGET_AHEAD
  }
}
