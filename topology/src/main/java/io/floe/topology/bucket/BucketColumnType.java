package io.floe.topology.bucket;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg types a bucket column may have, with the unit of the long each is stored as: days for
 * {@code date}, microseconds for {@code timestamp} and {@code timestamptz}, nanoseconds for {@code
 * timestamp_ns} and {@code timestamptz_ns}. Bucket arithmetic works directly on these stored values
 * so that ranges compare with Iceberg's column bounds without conversion.
 *
 * <p>A timestamp without time zone is taken to be UTC wall-clock time; that is the convention of
 * every writer that stores instants in such columns, and with the default UTC bucket zone it makes
 * buckets equal Trino's {@code date_trunc} on the local value.
 */
public enum BucketColumnType {
  DATE(0, false),
  TIMESTAMP(1_000_000L, false),
  TIMESTAMPTZ(1_000_000L, true),
  TIMESTAMP_NS(1_000_000_000L, false),
  TIMESTAMPTZ_NS(1_000_000_000L, true);

  private static final long MICROS_PER_DAY = 86_400_000_000L;

  private final long unitsPerSecond;
  private final boolean zoned;

  BucketColumnType(long unitsPerSecond, boolean zoned) {
    this.unitsPerSecond = unitsPerSecond;
    this.zoned = zoned;
  }

  /** The bucket column type of an Iceberg type, or empty if it cannot hold buckets. */
  public static Optional<BucketColumnType> of(Type type) {
    return switch (type.typeId()) {
      case DATE -> Optional.of(DATE);
      case TIMESTAMP ->
          Optional.of(((Types.TimestampType) type).shouldAdjustToUTC() ? TIMESTAMPTZ : TIMESTAMP);
      case TIMESTAMP_NANO ->
          Optional.of(
              ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? TIMESTAMPTZ_NS : TIMESTAMP_NS);
      default -> Optional.empty();
    };
  }

  /** True for {@code date}: values are calendar days, and only day or longer buckets apply. */
  public boolean isDate() {
    return this == DATE;
  }

  /** True when the column stores instants (with time zone) rather than wall-clock values. */
  public boolean isZoned() {
    return zoned;
  }

  /** Stored units per second; not defined for {@code date}. */
  long unitsPerSecond() {
    if (isDate()) {
      throw new IllegalStateException("date values are days");
    }
    return unitsPerSecond;
  }

  /** The instant of a stored timestamp value (UTC for timestamps without time zone). */
  public Instant toInstant(long value) {
    long perSecond = unitsPerSecond();
    return Instant.ofEpochSecond(
        Math.floorDiv(value, perSecond),
        Math.floorMod(value, perSecond) * (1_000_000_000L / perSecond));
  }

  /**
   * The stored value of an instant, truncated to the column's precision. An instant beyond the
   * column's range saturates: before it, {@code Long.MIN_VALUE}; after it, {@code Long.MAX_VALUE}.
   * Bucket boundaries are computed through this, so that the first bucket of a column reaches down
   * to the smallest long and the last one up to the largest, never wrapping round.
   */
  public long fromInstant(Instant instant) {
    long perSecond = unitsPerSecond();
    long seconds = instant.getEpochSecond();
    long below = instant.getNano() / (1_000_000_000L / perSecond);
    try {
      return Math.addExact(Math.multiplyExact(seconds, perSecond), below);
    } catch (ArithmeticException beyond) {
      if (seconds >= 0) {
        return Long.MAX_VALUE;
      }
      // seconds * perSecond may underflow while the value itself does not.
      try {
        return Math.subtractExact(Math.multiplyExact(seconds + 1, perSecond), perSecond - below);
      } catch (ArithmeticException before) {
        return Long.MIN_VALUE;
      }
    }
  }

  /**
   * A stored value in epoch microseconds UTC, the unit of bucket ranges on Floe's topics; a date is
   * its midnight UTC. The open ends of ranges ({@code Long.MIN_VALUE}, {@code Long.MAX_VALUE}) stay
   * open, and a date beyond the microsecond range saturates.
   */
  public long toEpochMicros(long value) {
    if (value == Long.MIN_VALUE || value == Long.MAX_VALUE) {
      return value;
    }
    return switch (this) {
      case DATE -> saturatedMultiply(value, MICROS_PER_DAY);
      case TIMESTAMP, TIMESTAMPTZ -> value;
      case TIMESTAMP_NS, TIMESTAMPTZ_NS -> Math.floorDiv(value, 1000L);
    };
  }

  /**
   * The type of the view's bucket column in the target: nanosecond buckets are kept in microseconds
   * there (buckets are whole minutes or longer, so nothing is lost); every other type as it is.
   */
  public BucketColumnType targetType() {
    return switch (this) {
      case TIMESTAMP_NS -> TIMESTAMP;
      case TIMESTAMPTZ_NS -> TIMESTAMPTZ;
      default -> this;
    };
  }

  /** A stored bucket value as the target's bucket column holds it (see {@link #targetType}). */
  public long toTargetValue(long value) {
    return this == targetType() ? value : Math.floorDiv(value, 1000L);
  }

  /**
   * A range of stored values as a range of the target's bucket column: the smallest target range
   * holding every converted value of the range. Open ends stay open.
   */
  public BucketRange toTargetRange(BucketRange range) {
    if (this == targetType()) {
      return range;
    }
    long start = range.start() == Long.MIN_VALUE ? Long.MIN_VALUE : toTargetValue(range.start());
    long end = range.end() == Long.MAX_VALUE ? Long.MAX_VALUE : -Math.floorDiv(-range.end(), 1000L);
    return new BucketRange(start, end);
  }

  /** Ranges of stored values as ranges of the target's bucket column ({@link #toTargetRange}). */
  public BucketRangeSet toTargetRanges(BucketRangeSet ranges) {
    List<BucketRange> converted = new ArrayList<>();
    for (BucketRange range : ranges.ranges()) {
      converted.add(toTargetRange(range));
    }
    return BucketRangeSet.of(converted);
  }

  /** The inverse of {@link #toTargetValue}, saturating beyond the column's range. */
  public long fromTargetValue(long value) {
    return this == targetType() ? value : saturatedMultiply(value, 1000L);
  }

  private static long saturatedMultiply(long value, long factor) {
    long high = Math.multiplyHigh(value, factor);
    long low = value * factor;
    // The product fits in a long when its high half is only the sign extension of its low half.
    if (high == (low >> 63)) {
      return low;
    }
    return value < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
  }

  /** The Iceberg type name as users write it. */
  public String typeName() {
    return switch (this) {
      case DATE -> "date";
      case TIMESTAMP -> "timestamp";
      case TIMESTAMPTZ -> "timestamptz";
      case TIMESTAMP_NS -> "timestamp_ns";
      case TIMESTAMPTZ_NS -> "timestamptz_ns";
    };
  }
}
