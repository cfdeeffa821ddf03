package io.floe.topology.bucket;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Objects;

/**
 * Bucket arithmetic of one view: Trino's {@code date_trunc(granularity, column)} evaluated in the
 * view's time zone, and its inverse, the expansion of a value range to the whole buckets it touches
 * (DESIGN §3.2, §3.7). All values are the column's stored longs ({@link BucketColumnType}).
 *
 * <p>Day and longer buckets follow the calendar of the zone: a bucket starts at the first instant
 * of its first local day, so a day in {@code Europe/Paris} lasts 23 or 25 hours twice a year.
 * Minute and hour buckets are fixed durations aligned to the local clock under the offset in force;
 * a change of offset (a DST transition) always starts a new bucket, so that in zones whose offset
 * moves by half an hour every value still lies in exactly one bucket. In whole-hour DST zones this
 * agrees with Trino, which keeps the two repeated local hours of an autumn night apart.
 *
 * <p>{@code date} columns are calendar days with no zone: the zone does not apply to them, and
 * minute and hour buckets are refused.
 */
public final class Bucketing {

  private final Granularity granularity;
  private final BucketColumnType columnType;
  private final ZoneId zone;
  private final ZoneRules rules;
  // Set when the zone never changes offset: pure arithmetic, no zone rules on the hot path.
  private final Long fixedOffsetSeconds;

  private Bucketing(Granularity granularity, BucketColumnType columnType, ZoneId zone) {
    this.granularity = Objects.requireNonNull(granularity, "granularity");
    this.columnType = Objects.requireNonNull(columnType, "columnType");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.rules = zone.getRules();
    this.fixedOffsetSeconds =
        rules.isFixedOffset() ? (long) rules.getOffset(Instant.EPOCH).getTotalSeconds() : null;
  }

  /**
   * Bucketing of {@code columnType} values by {@code granularity} in {@code zone}.
   *
   * @throws IllegalArgumentException for minute or hour buckets of a {@code date} column
   */
  public static Bucketing of(Granularity granularity, BucketColumnType columnType, ZoneId zone) {
    if (columnType.isDate() && granularity.isTimeOfDay()) {
      throw new IllegalArgumentException(
          "A date column has no " + granularity.unit() + " buckets: use day or longer");
    }
    return new Bucketing(granularity, columnType, zone);
  }

  /** UTC bucketing, Trino's default. */
  public static Bucketing utc(Granularity granularity, BucketColumnType columnType) {
    return of(granularity, columnType, ZoneOffset.UTC);
  }

  public Granularity granularity() {
    return granularity;
  }

  public BucketColumnType columnType() {
    return columnType;
  }

  public ZoneId zone() {
    return zone;
  }

  /** The start of the bucket that contains {@code value}: {@code date_trunc}. */
  public long floor(long value) {
    if (columnType.isDate()) {
      return granularity.floor(LocalDate.ofEpochDay(value)).toEpochDay();
    }
    if (granularity.isTimeOfDay()) {
      return floorTimeOfDay(value);
    }
    LocalDate localDay = LocalDate.ofInstant(columnType.toInstant(value), zone);
    return startOf(granularity.floor(localDay));
  }

  /** The start of the bucket that follows the bucket starting at {@code bucketStart}. */
  public long next(long bucketStart) {
    if (columnType.isDate()) {
      return granularity.next(LocalDate.ofEpochDay(bucketStart)).toEpochDay();
    }
    if (granularity.isTimeOfDay()) {
      return nextTimeOfDay(bucketStart);
    }
    LocalDate localDay = LocalDate.ofInstant(columnType.toInstant(bucketStart), zone);
    return startOf(granularity.next(granularity.floor(localDay)));
  }

  /** The bucket containing {@code value}. */
  public BucketRange bucketOf(long value) {
    long start = floor(value);
    return new BucketRange(start, next(start));
  }

  /**
   * The whole buckets touched by values in {@code [min, max]}: {@code [floor(min), floor(max) + 1
   * bucket)}, so a max exactly on a boundary opens the next bucket.
   */
  public BucketRange expand(long min, long max) {
    if (min > max) {
      throw new IllegalArgumentException("min " + min + " is after max " + max);
    }
    return new BucketRange(floor(min), next(floor(max)));
  }

  private long startOf(LocalDate localDay) {
    // atStartOfDay(zone) resolves a midnight that falls in a DST gap to the first valid instant.
    return columnType.fromInstant(localDay.atStartOfDay(zone).toInstant());
  }

  private long floorTimeOfDay(long value) {
    long unit = granularity.seconds() * columnType.unitsPerSecond();
    if (fixedOffsetSeconds != null) {
      long offset = fixedOffsetSeconds * columnType.unitsPerSecond();
      return value - Math.floorMod(value + offset, unit);
    }
    Instant instant = columnType.toInstant(value);
    long offset = rules.getOffset(instant).getTotalSeconds() * columnType.unitsPerSecond();
    long aligned = value - Math.floorMod(value + offset, unit);
    // A transition inside the aligned bucket cuts it: the bucket starts at the transition.
    ZoneOffsetTransition previous = rules.previousTransition(instant.plusNanos(1));
    if (previous != null) {
      long transition = columnType.fromInstant(previous.getInstant());
      return Math.max(aligned, transition);
    }
    return aligned;
  }

  private long nextTimeOfDay(long bucketStart) {
    long unit = granularity.seconds() * columnType.unitsPerSecond();
    if (fixedOffsetSeconds != null) {
      long offset = fixedOffsetSeconds * columnType.unitsPerSecond();
      return bucketStart - Math.floorMod(bucketStart + offset, unit) + unit;
    }
    Instant instant = columnType.toInstant(bucketStart);
    long offset = rules.getOffset(instant).getTotalSeconds() * columnType.unitsPerSecond();
    long alignedNext = bucketStart - Math.floorMod(bucketStart + offset, unit) + unit;
    ZoneOffsetTransition following = rules.nextTransition(instant);
    if (following != null) {
      return Math.min(alignedNext, columnType.fromInstant(following.getInstant()));
    }
    return alignedNext;
  }

  @Override
  public String toString() {
    return "date_trunc('" + granularity.unit() + "') in " + zone + " on " + columnType.typeName();
  }
}
