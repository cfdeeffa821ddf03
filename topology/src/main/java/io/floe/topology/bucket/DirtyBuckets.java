package io.floe.topology.bucket;

import java.util.ArrayList;
import java.util.List;
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

  /** How many bucket ranges are dirty: -1 when every bucket is. */
  public int rangeCount() {
    return full ? -1 : ranges.ranges().size();
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

  /** Beyond this many ranges, {@link #format} records their envelope: a superset, never less. */
  static final int MAX_FORMATTED_RANGES = 64;

  /**
   * A compact text form for snapshot summaries: {@code all} for every bucket, else ranges {@code
   * start..end} and {@code null}, comma-separated; more than {@value #MAX_FORMATTED_RANGES} ranges
   * are recorded as their envelope (a superset).
   */
  public String format() {
    if (full) {
      return "all";
    }
    List<BucketRange> list = ranges.ranges();
    if (list.size() > MAX_FORMATTED_RANGES) {
      list = List.of(new BucketRange(list.get(0).start(), list.get(list.size() - 1).end()));
    }
    List<String> parts = new ArrayList<>();
    list.forEach(r -> parts.add(r.start() + ".." + r.end()));
    if (nullBucket) {
      parts.add("null");
    }
    return String.join(",", parts);
  }

  /**
   * Parses {@link #format}'s form; {@code reason} is the reason of a full set.
   *
   * @throws IllegalArgumentException when {@code text} is not in that form
   */
  public static DirtyBuckets parse(String text, String reason) {
    if (text == null) {
      throw new IllegalArgumentException("No dirty buckets recorded");
    }
    if (text.equals("all")) {
      return all(reason);
    }
    List<BucketRange> list = new ArrayList<>();
    boolean nullBucket = false;
    for (String part : text.isEmpty() ? new String[0] : text.split(",")) {
      if (part.equals("null")) {
        nullBucket = true;
        continue;
      }
      int dots = part.indexOf("..");
      try {
        list.add(
            new BucketRange(
                Long.parseLong(part.substring(0, dots)), Long.parseLong(part.substring(dots + 2))));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("Not a bucket range: '" + part + "'", e);
      }
    }
    return of(BucketRangeSet.of(list), nullBucket);
  }

  @Override
  public String toString() {
    if (full) {
      return "all buckets (" + reason + ")";
    }
    return ranges + (nullBucket ? " + null bucket" : "");
  }
}
