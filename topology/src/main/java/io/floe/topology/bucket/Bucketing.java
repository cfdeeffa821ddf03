package io.floe.topology.bucket;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Objects;
import java.util.Optional;

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
 * agrees with Trino, which keeps the two repeated local hours of an autumn night apart. The strides
 * of Trino's n-minute idiom ({@link Granularity#clockStride}) are cut the same way, N minutes (or
 * hours) of the local clock.
 *
 * <p>{@code date_bin} strides ({@link Granularity#bin}) work on absolute time, as PostgreSQL's
 * {@code date_bin} on {@code timestamptz} does: every bucket lasts exactly the stride and the
 * boundaries lie a whole number of strides from the origin, before it as after it. The zone only
 * says which instant an origin literal names; without an origin it is the Unix epoch.
 *
 * <p>{@code date} columns are calendar days with no zone: the zone does not apply to them, and
 * minute and hour buckets are refused.
 *
 * <p>Near the limits of a column's range nothing overflows or wraps: a bucket whose real start lies
 * before the range starts at {@code Long.MIN_VALUE}, and one whose real end lies beyond it ends at
 * {@code Long.MAX_VALUE} (an end that {@link BucketRange} reads as "no end"). So every long, the
 * open-ended sentinels included, lies in exactly one bucket.
 */
public final class Bucketing {

  /**
   * Offset transitions {@link #countBuckets} and {@link #advance} walk before they estimate: two a
   * year for ten thousand years (java.time caches the transitions of each year it computes).
   */
  private static final int MAX_TRANSITIONS = 20_000;

  // Date arithmetic is exact between two days that start a bucket of every granularity (Mondays
  // that are January 1st) near the ends of java.time's range, far beyond Iceberg's int dates. The
  // first bucket reaches down to Long.MIN_VALUE below the first, the last saturates from the last.
  private static final long FIRST_DATE = mondayJanuaryFirst(LocalDate.MIN.getYear() + 1, 1);
  private static final long LAST_DATE = mondayJanuaryFirst(LocalDate.MAX.getYear() - 1, -1);

  private final Granularity granularity;
  private final BucketColumnType columnType;
  private final ZoneId zone;
  private final ZoneRules rules;
  // Set when buckets follow one offset throughout, in stored units: a zone that never changes
  // offset, or a date_bin stride (minus its origin). Pure arithmetic, no zone rules on the hot
  // path.
  private final Long fixedOffset;
  // The length of a fixed-length bucket in stored units; 0 for calendar and date buckets.
  private final long stride;

  private Bucketing(Granularity granularity, BucketColumnType columnType, ZoneId zone) {
    this.granularity = Objects.requireNonNull(granularity, "granularity");
    this.columnType = Objects.requireNonNull(columnType, "columnType");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.rules = zone.getRules();
    this.stride =
        granularity.isTimeOfDay() ? granularity.seconds() * columnType.unitsPerSecond() : 0;
    if (granularity.isBinned()) {
      this.fixedOffset = -originPastBoundary();
    } else if (rules.isFixedOffset() && !columnType.isDate()) {
      this.fixedOffset =
          rules.getOffset(Instant.EPOCH).getTotalSeconds() * columnType.unitsPerSecond();
    } else {
      this.fixedOffset = null;
    }
  }

  /**
   * How far a date_bin origin lies past the stride boundary below it, counted from the epoch, in
   * stored units: computed from the origin's seconds modulo the stride, so that an origin beyond
   * the column's range (year 1000 in nanoseconds) still aligns the buckets exactly.
   */
  private long originPastBoundary() {
    Instant origin =
        granularity.origin().map(local -> local.atZone(zone).toInstant()).orElse(Instant.EPOCH);
    long perSecond = columnType.unitsPerSecond();
    long seconds = Math.floorMod(origin.getEpochSecond(), granularity.seconds());
    return seconds * perSecond + origin.getNano() / (1_000_000_000L / perSecond);
  }

  private static long mondayJanuaryFirst(int fromYear, int step) {
    for (int year = fromYear; ; year += step) {
      LocalDate day = LocalDate.of(year, 1, 1);
      if (day.getDayOfWeek() == java.time.DayOfWeek.MONDAY) {
        return day.toEpochDay();
      }
    }
  }

  /**
   * Bucketing of {@code columnType} values by {@code granularity} in {@code zone}.
   *
   * @throws IllegalArgumentException for minute or hour buckets of a {@code date} column
   */
  public static Bucketing of(Granularity granularity, BucketColumnType columnType, ZoneId zone) {
    if (columnType.isDate() && granularity.isTimeOfDay()) {
      throw new IllegalArgumentException(
          "A date column has no "
              + (granularity.isStride()
                  ? "buckets of " + granularity.unit()
                  : granularity.unit() + " buckets")
              + ": use day or longer");
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

  /**
   * The start of the bucket that contains {@code value}: {@code date_trunc}. When that start lies
   * before the column's range, the first bucket saturates: {@code Long.MIN_VALUE}.
   */
  public long floor(long value) {
    if (columnType.isDate()) {
      if (value < FIRST_DATE) {
        return Long.MIN_VALUE;
      }
      if (value >= LAST_DATE) {
        return LAST_DATE;
      }
      return granularity.floor(LocalDate.ofEpochDay(value)).toEpochDay();
    }
    if (granularity.isTimeOfDay()) {
      return floorTimeOfDay(value);
    }
    return startOf(granularity.floor(localDay(value)));
  }

  /**
   * The start of the bucket that follows the bucket starting at (or containing) {@code
   * bucketStart}. When that start lies beyond the column's range, the last bucket saturates: {@code
   * Long.MAX_VALUE}, which is also the next of {@code Long.MAX_VALUE}.
   */
  public long next(long bucketStart) {
    if (columnType.isDate()) {
      if (bucketStart < FIRST_DATE) {
        return FIRST_DATE;
      }
      if (bucketStart >= LAST_DATE) {
        return Long.MAX_VALUE;
      }
      return granularity.next(granularity.floor(LocalDate.ofEpochDay(bucketStart))).toEpochDay();
    }
    if (granularity.isTimeOfDay()) {
      return nextTimeOfDay(bucketStart);
    }
    return startOf(granularity.next(granularity.floor(localDay(bucketStart))));
  }

  /**
   * The finer buckets a view's partial states are kept per (DESIGN §5), so that a late row or a
   * delete recomputes one of them and merges the others: the hour (in the view's zone) of a day,
   * week, month, quarter or year bucket of a timestamp column, the day of a week or longer bucket
   * of a {@code date} column; empty when the bucket is itself that fine, or a stride (whose
   * boundaries need not fall on whole hours). Every sub-bucket lies in exactly one bucket: local
   * hours start at each local midnight, and a change of offset starts a new hour.
   */
  public Optional<Bucketing> subBuckets() {
    if (granularity.isTimeOfDay() || granularity.isStride()) {
      return Optional.empty();
    }
    if (columnType.isDate()) {
      return granularity.equals(Granularity.DAY)
          ? Optional.empty()
          : Optional.of(new Bucketing(Granularity.DAY, columnType, zone));
    }
    return Optional.of(new Bucketing(Granularity.HOUR, columnType, zone));
  }

  /**
   * A bucket start as the target's bucket column holds it ({@link BucketColumnType#targetType}).
   * The first bucket of a nanosecond column starts before 1677-09-21T00:12:43.145224192Z, where
   * nanoseconds saturate at {@code Long.MIN_VALUE}; microseconds hold its real start, which it
   * gets.
   */
  public long toTargetValue(long bucketStart) {
    long value = columnType.toTargetValue(bucketStart);
    if (bucketStart == Long.MIN_VALUE && columnType.targetType() != columnType) {
      return of(granularity, columnType.targetType(), zone).floor(value);
    }
    return value;
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

  /**
   * The whole buckets that overlap the instants of {@code range}: from the bucket holding its first
   * instant to the one holding its last (the instant before its exclusive end), so that a range
   * inside one bucket covers that bucket and an end on a boundary opens no further bucket. A {@code
   * date} column holds the local date of an instant in the view's zone.
   */
  public BucketRange covering(TimeRange range) {
    return expand(valueAt(range.from()), valueAt(range.to().minusNanos(1)));
  }

  private long valueAt(Instant instant) {
    return columnType.isDate()
        ? LocalDate.ofInstant(instant, zone).toEpochDay()
        : columnType.fromInstant(instant);
  }

  /**
   * The number of buckets in {@code [from, to)}, both bucket boundaries, computed without visiting
   * each bucket: exact for {@code date} columns, calendar buckets and zones of a fixed offset. For
   * minute and hour buckets in a zone that changes offset it walks the transitions in between (two
   * a year), and estimates the rest beyond {@value #MAX_TRANSITIONS} transitions.
   */
  public long countBuckets(long from, long to) {
    if (from >= to) {
      return 0;
    }
    if (columnType.isDate() || !granularity.isTimeOfDay()) {
      return calendarIndex(to - 1) - calendarIndex(from) + 1;
    }
    if (fixedOffset != null) {
      return alignedIndex(to - 1, fixedOffset) - alignedIndex(from, fixedOffset) + 1;
    }
    long count = 0;
    long cursor = from;
    for (int i = 0; cursor < to; i++) {
      Instant at = columnType.toInstant(cursor);
      long offset = rules.getOffset(at).getTotalSeconds() * columnType.unitsPerSecond();
      ZoneOffsetTransition transition = i < MAX_TRANSITIONS ? rules.nextTransition(at) : null;
      long pieceEnd =
          transition == null ? to : Math.min(to, columnType.fromInstant(transition.getInstant()));
      // Within one offset, buckets are aligned; the piece's first bucket starts at its start.
      count += alignedIndex(pieceEnd - 1, offset) - alignedIndex(cursor, offset) + 1;
      cursor = pieceEnd;
    }
    return count;
  }

  /**
   * The bucket boundary {@code n} buckets after the bucket boundary {@code from} (n ≥ 0),
   * saturating at {@code Long.MAX_VALUE}; computed without visiting each bucket, and exactly where
   * {@link #countBuckets} is exact.
   */
  public long advance(long from, long n) {
    if (n < 0) {
      throw new IllegalArgumentException("Cannot advance by " + n + " buckets");
    }
    if (columnType.isDate() || !granularity.isTimeOfDay()) {
      if (n == 0) {
        return from;
      }
      long index = calendarIndex(from);
      // The last bucket (index `last`) ends at Long.MAX_VALUE.
      long last = calendarIndex(Long.MAX_VALUE - 1);
      return n > last - index ? Long.MAX_VALUE : calendarStart(index + n);
    }
    long unit = stride;
    long cursor = from;
    long remaining = n;
    // Piece by piece of one offset: a transition starts a new bucket.
    for (int i = 0; remaining > 0 && cursor != Long.MAX_VALUE; i++) {
      long offset = offsetAt(cursor);
      ZoneOffsetTransition transition =
          fixedOffset != null || i >= MAX_TRANSITIONS
              ? null
              : rules.nextTransition(columnType.toInstant(cursor));
      long pieceEnd =
          transition == null ? Long.MAX_VALUE : columnType.fromInstant(transition.getInstant());
      long inPiece = alignedIndex(pieceEnd - 1, offset) - alignedIndex(cursor, offset) + 1;
      if (remaining < inPiece) {
        // The piece's first bucket may be short (saturated, or starting at a transition).
        long firstEnd = saturatedAdd(cursor, unit - pastBoundary(cursor, offset, unit));
        long target = plusUnits(firstEnd, remaining - 1, unit);
        // Past MAX_TRANSITIONS the offset is assumed to hold: an estimate, but still a boundary.
        return fixedOffset != null || transition != null ? target : floor(target);
      }
      remaining -= inPiece;
      cursor = pieceEnd;
    }
    return cursor;
  }

  private LocalDate localDay(long value) {
    return LocalDate.ofInstant(columnType.toInstant(value), zone);
  }

  private long startOf(LocalDate localDay) {
    // atStartOfDay(zone) resolves a midnight that falls in a DST gap to the first valid instant.
    return columnType.fromInstant(localDay.atStartOfDay(zone).toInstant());
  }

  /** The index of the calendar bucket (or date bucket) holding {@code value}, in buckets. */
  private long calendarIndex(long value) {
    LocalDate start;
    if (columnType.isDate()) {
      if (value < FIRST_DATE) {
        return calendarIndexOf(LocalDate.ofEpochDay(FIRST_DATE)) - 1;
      }
      start = LocalDate.ofEpochDay(floor(value));
    } else {
      start = granularity.floor(localDay(value));
    }
    return calendarIndexOf(start);
  }

  private long calendarIndexOf(LocalDate start) {
    return switch (granularity.calendarUnit()) {
      case DAY -> start.toEpochDay();
      // 1969-12-29, three days before the epoch, is a Monday.
      case WEEK -> Math.floorDiv(start.toEpochDay() + 3, 7);
      case MONTH -> start.getYear() * 12L + start.getMonthValue() - 1;
      case QUARTER -> start.getYear() * 4L + (start.getMonthValue() - 1) / 3;
      case YEAR -> start.getYear();
      default -> throw new IllegalStateException(granularity + " is not a calendar granularity");
    };
  }

  /** The start of the calendar bucket of index {@code index}, saturating at the range's end. */
  private long calendarStart(long index) {
    LocalDate start =
        switch (granularity.calendarUnit()) {
          case DAY -> LocalDate.ofEpochDay(index);
          case WEEK -> LocalDate.ofEpochDay(index * 7 - 3);
          case MONTH ->
              LocalDate.of(
                  Math.toIntExact(Math.floorDiv(index, 12)), (int) Math.floorMod(index, 12) + 1, 1);
          case QUARTER ->
              LocalDate.of(
                  Math.toIntExact(Math.floorDiv(index, 4)),
                  (int) Math.floorMod(index, 4) * 3 + 1,
                  1);
          case YEAR -> LocalDate.of(Math.toIntExact(index), 1, 1);
          default ->
              throw new IllegalStateException(granularity + " is not a calendar granularity");
        };
    return columnType.isDate() ? start.toEpochDay() : startOf(start);
  }

  /**
   * The index of the aligned bucket (of one offset) holding {@code value}, up to a constant: {@code
   * floor((value + offset) / unit)} without overflowing.
   */
  private long alignedIndex(long value, long offset) {
    long unit = stride;
    return Math.floorDiv(value, unit)
        + Math.floorDiv(Math.floorMod(value, unit) + Math.floorMod(offset, unit), unit);
  }

  /** How far {@code value} lies past the aligned boundary below it, under {@code offset}. */
  private long pastBoundary(long value, long offset, long unit) {
    return Math.floorMod(Math.floorMod(value, unit) + Math.floorMod(offset, unit), unit);
  }

  private long offsetAt(long value) {
    if (fixedOffset != null) {
      return fixedOffset;
    }
    return rules.getOffset(columnType.toInstant(value)).getTotalSeconds()
        * columnType.unitsPerSecond();
  }

  private long floorTimeOfDay(long value) {
    long unit = stride;
    long past = pastBoundary(value, offsetAt(value), unit);
    // The aligned start may lie before the smallest long: the first bucket then starts there.
    long aligned = value < Long.MIN_VALUE + past ? Long.MIN_VALUE : value - past;
    if (fixedOffset != null) {
      return aligned;
    }
    // A transition inside the aligned bucket cuts it: the bucket starts at the transition.
    ZoneOffsetTransition previous =
        rules.previousTransition(columnType.toInstant(value).plusNanos(1));
    if (previous != null) {
      return Math.max(aligned, columnType.fromInstant(previous.getInstant()));
    }
    return aligned;
  }

  private long nextTimeOfDay(long bucketStart) {
    long unit = stride;
    long toNext = unit - pastBoundary(bucketStart, offsetAt(bucketStart), unit);
    long alignedNext = saturatedAdd(bucketStart, toNext);
    if (fixedOffset != null) {
      return alignedNext;
    }
    ZoneOffsetTransition following = rules.nextTransition(columnType.toInstant(bucketStart));
    if (following != null) {
      return Math.min(alignedNext, columnType.fromInstant(following.getInstant()));
    }
    return alignedNext;
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    // Overflow only when both have the sign the sum lacks.
    if (((a ^ sum) & (b ^ sum)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return sum;
  }

  /**
   * {@code base + count * unit}, saturating. From a base near the smallest long the product alone
   * may exceed a long while the sum does not, so the sum is formed in 128 bits.
   */
  private static long plusUnits(long base, long count, long unit) {
    long productHigh = Math.multiplyHigh(count, unit);
    long productLow = count * unit;
    long low = productLow + base;
    long carry = Long.compareUnsigned(low, productLow) < 0 ? 1 : 0;
    long high = productHigh + (base >> 63) + carry;
    if (high == (low >> 63)) {
      return low;
    }
    return high < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
  }

  /**
   * The bucketing as chunk plans fingerprint it ({@code floe.progress}): the form of {@code
   * date_trunc} units must not change, or a chunked refresh in progress across an upgrade would no
   * longer recognise its plan; a stride says its length and origin.
   */
  @Override
  public String toString() {
    String bucket =
        granularity.isStride()
            ? granularity.expression("value")
            : "date_trunc('" + granularity.unit() + "')";
    return bucket + " in " + zone + " on " + columnType.typeName();
  }
}
