package io.floe.topology.bucket;

/**
 * A half-open range {@code [start, end)} of stored bucket-column values (see {@link
 * BucketColumnType} for the unit). Ranges built by {@link Bucketing} start and end on bucket
 * boundaries.
 *
 * <p>An end of {@code Long.MAX_VALUE} means "no end": the last bucket of a column saturates there
 * (its real end is not representable), so such a range also holds {@code Long.MAX_VALUE} itself. A
 * start of {@code Long.MIN_VALUE} likewise means "no start".
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
    return start <= value && (value < end || end == Long.MAX_VALUE);
  }

  /** True if the range has no end: it holds every value from its start on. */
  public boolean isOpenEnded() {
    return end == Long.MAX_VALUE;
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
