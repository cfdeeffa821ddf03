package io.floe.topology.bucket;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The size of a view's buckets: a unit of Trino's {@code date_trunc(unit, x)}, or a fixed stride of
 * whole minutes, hours or days. One type, so that every caller of {@link Bucketing} treats both
 * alike.
 *
 * <ul>
 *   <li>{@code date_trunc} units: weeks are ISO weeks (starting Monday); quarters start in January,
 *       April, July and October.
 *   <li>Clock strides, Trino's n-minute idiom {@code date_trunc('hour', ts) + (minute(ts) / N) *
 *       INTERVAL 'N' MINUTE} and its hour form {@code date_trunc('day', ts) + (hour(ts) / N) *
 *       INTERVAL 'N' HOUR}: N divides the hour (or the day), and buckets are aligned to the local
 *       clock like {@code date_trunc('minute')} and {@code date_trunc('hour')} are. A minute or an
 *       hour is the clock stride of one.
 *   <li>Binned strides, {@code date_bin(stride, ts[, origin])}: buckets of exactly {@code stride}
 *       on the instant timeline, aligned to the origin (PostgreSQL's semantics); without one, to
 *       the Unix epoch (DataFusion's and Materialize's default). An origin is a wall-clock literal,
 *       read in the view's time zone.
 * </ul>
 */
public final class Granularity {

  /** The units of {@code date_trunc}. */
  public enum Unit {
    MINUTE(ChronoUnit.MINUTES),
    HOUR(ChronoUnit.HOURS),
    DAY(ChronoUnit.DAYS),
    WEEK(ChronoUnit.WEEKS),
    MONTH(ChronoUnit.MONTHS),
    QUARTER(null),
    YEAR(ChronoUnit.YEARS);

    private final ChronoUnit chronoUnit;

    Unit(ChronoUnit chronoUnit) {
      this.chronoUnit = chronoUnit;
    }

    /** The unit as written in {@code date_trunc}: {@code minute}. */
    public String sqlName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public static final Granularity MINUTE = new Granularity(Unit.MINUTE, 1, false, null);
  public static final Granularity HOUR = new Granularity(Unit.HOUR, 1, false, null);
  public static final Granularity DAY = new Granularity(Unit.DAY, 1, false, null);
  public static final Granularity WEEK = new Granularity(Unit.WEEK, 1, false, null);
  public static final Granularity MONTH = new Granularity(Unit.MONTH, 1, false, null);
  public static final Granularity QUARTER = new Granularity(Unit.QUARTER, 1, false, null);
  public static final Granularity YEAR = new Granularity(Unit.YEAR, 1, false, null);

  /** Every {@code date_trunc} unit, smallest first. */
  public static final List<Granularity> UNITS =
      List.of(MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR);

  private static final long SECONDS_PER_DAY = 86_400L;

  /**
   * The longest stride, in days: its length in nanoseconds stays far inside a long, so that stride
   * arithmetic on {@code timestamp_ns} values cannot overflow.
   */
  public static final long MAX_STRIDE_DAYS = 36_500;

  private static final DateTimeFormatter ORIGIN_FORMAT =
      new DateTimeFormatterBuilder()
          .appendPattern("yyyy-MM-dd HH:mm:ss")
          .appendFraction(ChronoField.NANO_OF_SECOND, 0, 6, true)
          .toFormatter(Locale.ROOT);

  private final Unit unit;
  // Units per bucket: 1 for date_trunc, N for a stride written in minutes, hours or days.
  private final long count;
  private final boolean binned;
  // A date_bin origin as written (wall-clock); null for the Unix epoch.
  private final LocalDateTime origin;

  private Granularity(Unit unit, long count, boolean binned, LocalDateTime origin) {
    this.unit = unit;
    this.count = count;
    this.binned = binned;
    this.origin = origin;
  }

  /** The granularity named by a {@code date_trunc} unit, case-insensitively. */
  public static Optional<Granularity> fromUnit(String unit) {
    for (Granularity g : UNITS) {
      if (g.unit.sqlName().equalsIgnoreCase(unit)) {
        return Optional.of(g);
      }
    }
    return Optional.empty();
  }

  /** The supported units, for error messages: {@code minute, hour, ...}. */
  public static String supportedUnits() {
    return Arrays.stream(Unit.values()).map(Unit::sqlName).collect(Collectors.joining(", "));
  }

  /**
   * The stride of Trino's n-minute idiom: {@code n} minutes within the hour, or {@code n} hours
   * within the day.
   *
   * @throws IllegalArgumentException naming why, when {@code n} does not divide the hour (the day)
   */
  public static Granularity clockStride(Unit unit, long n) {
    long whole =
        switch (unit) {
          case MINUTE -> 60;
          case HOUR -> 24;
          default ->
              throw new IllegalArgumentException(
                  "the n-minute idiom counts minutes within the hour or hours within the day, not "
                      + unit.sqlName()
                      + "s");
        };
    if (n < 1 || whole % n != 0) {
      throw new IllegalArgumentException(
          n
              + " does not divide "
              + (unit == Unit.MINUTE ? "the hour (60 minutes)" : "the day (24 hours)")
              + ", so the last bucket of each "
              + (unit == Unit.MINUTE ? "hour" : "day")
              + " would be short; a divisor of "
              + whole
              + " keeps every bucket "
              + n
              + " "
              + unit.sqlName()
              + "s long, and date_bin(INTERVAL '"
              + n
              + "' "
              + unit.name()
              + ", ts) gives buckets that cross it");
    }
    return n == 1 ? (unit == Unit.MINUTE ? MINUTE : HOUR) : new Granularity(unit, n, false, null);
  }

  /**
   * The stride of {@code date_bin(stride, ts)}, aligned to the Unix epoch.
   *
   * @throws IllegalArgumentException when the stride is not whole minutes, at least one, up to
   *     {@value #MAX_STRIDE_DAYS} days
   */
  public static Granularity bin(Duration stride) {
    return binned(stride, null);
  }

  /**
   * The stride of {@code date_bin(stride, ts, origin)}: buckets aligned to {@code origin}, a
   * wall-clock time read in the view's zone.
   *
   * @throws IllegalArgumentException as {@link #bin(Duration)}, or for an origin finer than
   *     microseconds
   */
  public static Granularity bin(Duration stride, LocalDateTime origin) {
    Objects.requireNonNull(origin, "origin");
    if (origin.getNano() % 1000 != 0) {
      throw new IllegalArgumentException(
          "the origin " + origin + " is finer than microseconds, the precision of a bucket");
    }
    return binned(stride, origin);
  }

  private static Granularity binned(Duration stride, LocalDateTime origin) {
    if (stride.isNegative()
        || stride.isZero()
        || stride.toSeconds() % 60 != 0
        || stride.getNano() != 0) {
      throw new IllegalArgumentException(
          "a stride must be a positive whole number of minutes, hours or days, not " + stride);
    }
    if (stride.toDays() > MAX_STRIDE_DAYS) {
      throw new IllegalArgumentException(
          "a stride may be at most " + MAX_STRIDE_DAYS + " days, not " + stride.toDays());
    }
    long seconds = stride.toSeconds();
    Unit unit =
        seconds % SECONDS_PER_DAY == 0 ? Unit.DAY : seconds % 3600 == 0 ? Unit.HOUR : Unit.MINUTE;
    return new Granularity(unit, seconds / unitSeconds(unit), true, origin);
  }

  private static long unitSeconds(Unit unit) {
    return unit.chronoUnit.getDuration().getSeconds();
  }

  /**
   * The unit as written in {@code date_trunc} ({@code minute}), or a stride's length ({@code 15
   * minutes}); a binned stride with an origin says so ({@code 6 hours from 2024-01-01 03:00:00}).
   */
  public String unit() {
    if (!isStride()) {
      return unit.sqlName();
    }
    String length = count + " " + unit.sqlName() + (count == 1 ? "" : "s");
    return origin == null ? length : length + " from " + ORIGIN_FORMAT.format(origin);
  }

  /** The {@code date_trunc} unit, or the unit a stride is counted in. */
  public Unit timeUnit() {
    return unit;
  }

  /** True for a stride of the n-minute idiom (n > 1) or of {@code date_bin}. */
  public boolean isStride() {
    return binned || count > 1;
  }

  /** True for {@code date_bin}: buckets aligned to an origin instant, not to the local clock. */
  public boolean isBinned() {
    return binned;
  }

  /** A {@code date_bin} origin as written; empty for the Unix epoch and for other granularities. */
  public Optional<LocalDateTime> origin() {
    return Optional.ofNullable(origin);
  }

  /**
   * True for buckets of a fixed length cut on the instant timeline: minute and hour, the idiom's
   * strides and every {@code date_bin} stride. Day and longer {@code date_trunc} buckets follow the
   * calendar of the view's time zone instead.
   */
  public boolean isTimeOfDay() {
    return binned || unit == Unit.MINUTE || unit == Unit.HOUR;
  }

  /** The fixed length of a bucket ({@link #isTimeOfDay}), in seconds. */
  public long seconds() {
    if (!isTimeOfDay()) {
      throw new IllegalStateException(this + " has no fixed length");
    }
    return count * unitSeconds(unit);
  }

  /** The bucket as a view query writes it, over {@code column}. */
  public String expression(String column) {
    if (binned) {
      String stride = "INTERVAL '" + count + "' " + unit.name();
      return "date_bin("
          + stride
          + ", "
          + column
          + (origin == null ? "" : ", TIMESTAMP '" + ORIGIN_FORMAT.format(origin) + "'")
          + ")";
    }
    if (count > 1) {
      Unit within = unit == Unit.MINUTE ? Unit.HOUR : Unit.DAY;
      return "date_trunc('"
          + within.sqlName()
          + "', "
          + column
          + ") + ("
          + unit.sqlName()
          + "("
          + column
          + ") / "
          + count
          + ") * INTERVAL '"
          + count
          + "' "
          + unit.name();
    }
    return "date_trunc('" + unit.sqlName() + "', " + column + ")";
  }

  /** The first day of the calendar bucket (day or longer) that contains {@code date}. */
  LocalDate floor(LocalDate date) {
    return switch (calendarUnit()) {
      case DAY -> date;
      case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
      case MONTH -> date.withDayOfMonth(1);
      case QUARTER -> date.withMonth(((date.getMonthValue() - 1) / 3) * 3 + 1).withDayOfMonth(1);
      case YEAR -> date.withDayOfYear(1);
      default -> throw new IllegalStateException(this + " is not a calendar granularity");
    };
  }

  /** The first day of the calendar bucket after the one starting on {@code bucketStart}. */
  LocalDate next(LocalDate bucketStart) {
    return switch (calendarUnit()) {
      case DAY -> bucketStart.plusDays(1);
      case WEEK -> bucketStart.plusWeeks(1);
      case MONTH -> bucketStart.plusMonths(1);
      case QUARTER -> bucketStart.plusMonths(3);
      case YEAR -> bucketStart.plusYears(1);
      default -> throw new IllegalStateException(this + " is not a calendar granularity");
    };
  }

  /** The {@code date_trunc} unit of a calendar granularity (day or longer). */
  Unit calendarUnit() {
    if (isTimeOfDay()) {
      throw new IllegalStateException(this + " is not a calendar granularity");
    }
    return unit;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Granularity other
        && unit == other.unit
        && count == other.count
        && binned == other.binned
        && Objects.equals(origin, other.origin);
  }

  @Override
  public int hashCode() {
    return Objects.hash(unit, count, binned, origin);
  }

  @Override
  public String toString() {
    return unit();
  }
}
