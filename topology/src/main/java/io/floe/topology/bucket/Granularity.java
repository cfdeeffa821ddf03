package io.floe.topology.bucket;

import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The bucket sizes a view can group by, named as the unit argument of Trino's {@code
 * date_trunc(unit, x)}. Weeks are ISO weeks (starting Monday); quarters start in January, April,
 * July and October.
 */
public enum Granularity {
  MINUTE(ChronoUnit.MINUTES),
  HOUR(ChronoUnit.HOURS),
  DAY(ChronoUnit.DAYS),
  WEEK(ChronoUnit.WEEKS),
  MONTH(ChronoUnit.MONTHS),
  QUARTER(null),
  YEAR(ChronoUnit.YEARS);

  private final ChronoUnit timeUnit;

  Granularity(ChronoUnit timeUnit) {
    this.timeUnit = timeUnit;
  }

  /** The granularity named by a {@code date_trunc} unit, case-insensitively. */
  public static Optional<Granularity> fromUnit(String unit) {
    for (Granularity g : values()) {
      if (g.unit().equalsIgnoreCase(unit)) {
        return Optional.of(g);
      }
    }
    return Optional.empty();
  }

  /** The supported units, for error messages: {@code minute, hour, ...}. */
  public static String supportedUnits() {
    return Arrays.stream(values()).map(Granularity::unit).collect(Collectors.joining(", "));
  }

  /** The unit as written in {@code date_trunc}. */
  public String unit() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * True for minute and hour: buckets of a fixed duration cut on the instant timeline. Day and
   * longer buckets follow the calendar of the view's time zone instead.
   */
  public boolean isTimeOfDay() {
    return this == MINUTE || this == HOUR;
  }

  /** The fixed length of a minute or hour bucket, in seconds. */
  long seconds() {
    if (!isTimeOfDay()) {
      throw new IllegalStateException(this + " has no fixed length");
    }
    return timeUnit.getDuration().getSeconds();
  }

  /** The first day of the calendar bucket (day or longer) that contains {@code date}. */
  LocalDate floor(LocalDate date) {
    return switch (this) {
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
    return switch (this) {
      case DAY -> bucketStart.plusDays(1);
      case WEEK -> bucketStart.plusWeeks(1);
      case MONTH -> bucketStart.plusMonths(1);
      case QUARTER -> bucketStart.plusMonths(3);
      case YEAR -> bucketStart.plusYears(1);
      default -> throw new IllegalStateException(this + " is not a calendar granularity");
    };
  }
}
