package io.floe.topology.refresh.eval.expr;

import org.apache.calcite.linq4j.function.Strict;

/**
 * The arithmetic on timestamps counted in their own unit (microseconds, nanoseconds for precision
 * above 6) that {@link ExactTimestamps} has Calcite's generated code call: public only because
 * generated code lives outside this package. Each returns null when an argument is null ({@link
 * Strict}), as SQL functions do.
 */
@Strict
public final class TimestampFunctions {

  private TimestampFunctions() {}

  /**
   * {@code value * factor}, saturating: a microsecond value beyond the nanosecond range (years
   * before 1677 or after 2262) compares below or above every nanosecond value, as it is.
   */
  public static long scale(long value, long factor) {
    long high = Math.multiplyHigh(value, factor);
    long low = value * factor;
    // The product fits in a long when its high half is only the sign extension of its low half.
    if (high == (low >> 63)) {
      return low;
    }
    return (value < 0) == (factor < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
  }

  /**
   * {@code value} rounded to a multiple of {@code factor}, halves up, as Trino casts a timestamp to
   * a lower precision.
   */
  public static long round(long value, long factor) {
    return Math.floorDiv(value + factor / 2, factor) * factor;
  }

  /** {@code value} floored to a multiple of {@code factor}, then divided by it. */
  public static long floorDiv(long value, long factor) {
    return Math.floorDiv(value, factor);
  }

  /** What {@link #floorDiv} leaves: {@code value - floorDiv(value, factor) * factor}. */
  public static long floorMod(long value, long factor) {
    return Math.floorMod(value, factor);
  }
}
