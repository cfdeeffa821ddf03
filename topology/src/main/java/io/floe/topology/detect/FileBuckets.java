package io.floe.topology.detect;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

/**
 * What a file's statistics say of its rows on a bucket column (DESIGN §3.2): the one implementation
 * of the rule "file bounds → bucket range". A file's non-null values lie in {@code [floor(min),
 * floor(max) + 1 bucket)}, and it holds rows of the null bucket when its null count is positive or
 * not recorded.
 *
 * <p>The range is unknown when a bound is missing (a removed entry in a new manifest carries no
 * statistics, a metrics mode of {@code counts} or {@code none} records none) or does not decode as
 * a value of the column: then the file's rows could be anywhere, unless its null count says every
 * row is null. Values are the column's stored longs: days, microseconds, or nanoseconds for a
 * {@code timestamp_ns} column.
 *
 * @param lower the lower bound of the column's values, or null without both bounds
 * @param upper the upper bound of the column's values, or null without both bounds
 * @param nullCount the recorded number of rows whose column is null, or null when none is recorded
 * @param records the file's rows
 */
public record FileBuckets(Long lower, Long upper, Long nullCount, long records) {

  public FileBuckets {
    // One bound without the other bounds nothing.
    if (lower == null || upper == null) {
      lower = null;
      upper = null;
    }
  }

  /** The statistics of {@code file} on {@code column}. */
  public static FileBuckets of(ContentFile<?> file, Types.NestedField column) {
    int id = column.fieldId();
    return new FileBuckets(
        decode(column, value(file.lowerBounds(), id)),
        decode(column, value(file.upperBounds(), id)),
        value(file.nullValueCounts(), id),
        file.recordCount());
  }

  private static Long decode(Types.NestedField column, ByteBuffer bound) {
    if (bound == null) {
      return null;
    }
    try {
      return Conversions.fromByteBuffer(column.type(), bound) instanceof Number number
          ? number.longValue()
          : null;
    } catch (RuntimeException e) {
      // A bound of another length than the type's (truncated, or of another type): unusable.
      return null;
    }
  }

  private static <T> T value(Map<Integer, T> map, int id) {
    return map == null ? null : map.get(id);
  }

  /** Whether both bounds of the column's non-null values are recorded. */
  public boolean hasBounds() {
    return lower != null;
  }

  /** Whether the statistics bound the file's rows: it has bounds, or every row is null. */
  public boolean isKnown() {
    return hasBounds() || holdsOnlyNulls();
  }

  /** Whether the recorded null count says every row of the file is null on the column. */
  public boolean holdsOnlyNulls() {
    return nullCount != null && nullCount == records;
  }

  /** Whether the file may hold rows whose column is null: a positive or unrecorded null count. */
  public boolean mayHoldNulls() {
    return nullCount == null || nullCount > 0;
  }

  /** The buckets of the file's non-null values, {@code [floor(min), floor(max) + 1 bucket)}. */
  public BucketRange range(Bucketing bucketing) {
    return hasBounds() ? bucketing.expand(lower, upper) : null;
  }

  /**
   * The range of the values themselves, {@code [min, max + 1)}, or null without bounds: the buckets
   * of a column that holds bucket starts, as a target's bucket column does.
   */
  public BucketRange valueRange() {
    return hasBounds() ? new BucketRange(lower, upper == Long.MAX_VALUE ? upper : upper + 1) : null;
  }

  /**
   * The buckets a set of changed files dirties, added one file at a time: the union of their
   * ranges, and the null bucket when one of them may hold nulls.
   */
  public static final class Union {
    private final Types.NestedField column;
    private final Bucketing bucketing;
    private final List<BucketRange> ranges = new ArrayList<>();
    private boolean nullBucket;

    /** An empty union of the buckets of {@code column}'s values, cut by {@code bucketing}. */
    public Union(Types.NestedField column, Bucketing bucketing) {
      this.column = column;
      this.bucketing = bucketing;
    }

    /**
     * Adds the buckets {@code file} may hold; false, adding nothing, when its statistics do not
     * bound them: the file could hold rows of any bucket.
     */
    public boolean add(ContentFile<?> file) {
      FileBuckets buckets = of(file, column);
      if (!buckets.hasBounds()) {
        nullBucket |= buckets.holdsOnlyNulls();
        return buckets.holdsOnlyNulls();
      }
      ranges.add(buckets.range(bucketing));
      // Unknown null counts must assume nulls: the null bucket is cheap to recompute.
      nullBucket |= buckets.mayHoldNulls();
      return true;
    }

    /** The buckets the files added so far dirty. */
    public DirtyBuckets dirty() {
      return DirtyBuckets.of(BucketRangeSet.of(ranges), nullBucket);
    }
  }
}
