package io.floe.topology.bucket;

import java.util.Objects;

/**
 * The buckets of a view that must be recomputed: a union of bucket ranges, the null bucket (rows
 * whose bucket column is null), or everything (DESIGN §3.2–§3.4).
 *
 * @param ranges bucket-aligned ranges of stored bucket-column values
 * @param nullBucket whether the null bucket is dirty
 * @param full whether every bucket is dirty, whatever the ranges say
 * @param reason why everything is dirty, for status and refresh events; null unless full
 */
public record DirtyBuckets(BucketRangeSet ranges, boolean nullBucket, boolean full, String reason) {

  private static final DirtyBuckets NONE =
      new DirtyBuckets(BucketRangeSet.empty(), false, false, null);

  public DirtyBuckets {
    Objects.requireNonNull(ranges, "ranges");
  }

  /** Nothing is dirty. */
  public static DirtyBuckets none() {
    return NONE;
  }

  /** Every bucket is dirty, for {@code reason}. */
  public static DirtyBuckets all(String reason) {
    return new DirtyBuckets(BucketRangeSet.empty(), true, true, reason);
  }

  /** The given ranges, and the null bucket if {@code nullBucket}. */
  public static DirtyBuckets of(BucketRangeSet ranges, boolean nullBucket) {
    return new DirtyBuckets(ranges, nullBucket, false, null);
  }

  public boolean isEmpty() {
    return !full && !nullBucket && ranges.isEmpty();
  }

  /** The union of both dirty sets; a full set absorbs everything, keeping the first reason. */
  public DirtyBuckets union(DirtyBuckets other) {
    if (full || other.full) {
      return all(full ? reason : other.reason);
    }
    return new DirtyBuckets(
        ranges.union(other.ranges), nullBucket || other.nullBucket, false, null);
  }

  /** True if a row whose bucket-column value is {@code value} (null allowed) is dirty. */
  public boolean contains(Long value) {
    if (full) {
      return true;
    }
    return value == null ? nullBucket : ranges.contains(value);
  }

  @Override
  public String toString() {
    if (full) {
      return "all buckets (" + reason + ")";
    }
    return ranges + (nullBucket ? " + null bucket" : "");
  }
}
