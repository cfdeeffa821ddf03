package io.floe.topology.bucket;

/**
 * A half-open range {@code [start, end)} of stored bucket-column values (see {@link
 * BucketColumnType} for the unit). Ranges built by {@link Bucketing} start and end on bucket
 * boundaries.
 */
public record BucketRange(long start, long end) implements Comparable<BucketRange> {

  public BucketRange {
    if (start >= end) {
      throw new IllegalArgumentException(
          "Empty or inverted bucket range [" + start + ", " + end + ")");
    }
  }

  /** True if {@code value} lies in this range. */
  public boolean contains(long value) {
    return start <= value && value < end;
  }

  /** True if the two ranges share at least one value. */
  public boolean overlaps(BucketRange other) {
    return start < other.end && other.start < end;
  }

  @Override
  public int compareTo(BucketRange other) {
    int byStart = Long.compare(start, other.start);
    return byStart != 0 ? byStart : Long.compare(end, other.end);
  }

  @Override
  public String toString() {
    return "[" + start + ", " + end + ")";
  }
}
