package io.floe.topology.bucket;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;

/**
 * A half-open range {@code [fromMicros, toMicros)} of instants, in epoch microseconds UTC (the unit
 * of time on Floe's topics): what a user asks to be recomputed, before a view's {@link Bucketing}
 * turns it into the buckets covering it ({@link Bucketing#covering}).
 *
 * @param fromMicros the first instant of the range, inclusive
 * @param toMicros the end of the range, exclusive
 */
public record TimeRange(long fromMicros, long toMicros) {

  public TimeRange {
    if (fromMicros >= toMicros) {
      throw new IllegalArgumentException(
          "The range ["
              + instant(fromMicros)
              + ", "
              + instant(toMicros)
              + ") is empty: from must be before to");
    }
  }

  /** The range {@code [from, to)}, at microsecond precision. */
  public static TimeRange of(Instant from, Instant to) {
    return new TimeRange(micros(from), micros(to));
  }

  /**
   * The range between two bounds as users write them: ISO-8601 instants ({@code
   * 2026-04-08T10:00:00Z}) or dates ({@code 2026-04-08}), a date meaning the start of that day in
   * {@code zone} (the view's).
   *
   * @throws IllegalArgumentException saying which bound is missing or unreadable, or that the range
   *     is empty
   */
  public static TimeRange parse(String from, String to, ZoneId zone) {
    return of(bound("from", from, zone), bound("to", to, zone));
  }

  private static Instant bound(String name, String text, ZoneId zone) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("'" + name + "' is required with a time range");
    }
    try {
      return text.contains("T")
          ? Instant.parse(text.strip())
          : LocalDate.parse(text.strip()).atStartOfDay(zone).toInstant();
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "'"
              + name
              + "' is neither an ISO-8601 instant (2026-04-08T10:00:00Z) nor a date (2026-04-08): '"
              + text
              + "'",
          e);
    }
  }

  public Instant from() {
    return instant(fromMicros);
  }

  public Instant to() {
    return instant(toMicros);
  }

  @Override
  public String toString() {
    return "[" + from() + ", " + to() + ")";
  }

  private static long micros(Instant instant) {
    return Math.addExact(
        Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000L);
  }

  private static Instant instant(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }
}
