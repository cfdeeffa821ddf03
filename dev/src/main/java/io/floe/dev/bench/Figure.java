package io.floe.dev.bench;

/**
 * One measured figure of a scenario, beside its baseline from the same run.
 *
 * @param metric what was measured, such as {@code lag p99 (ohlcv_1m)}
 * @param unit the unit of both values, such as {@code s} or {@code rows/s}
 * @param floe Floe's value
 * @param baseline the baseline's value, or null where none exists
 * @param baselineName what the baseline is, such as {@code poll every 30 s (iceberg-ivm)}
 * @param lowerIsBetter whether a smaller value is the better one, for reading the ratio
 */
public record Figure(
    String metric,
    String unit,
    double floe,
    Double baseline,
    String baselineName,
    boolean lowerIsBetter) {

  /** Floe's value ÷ the baseline's, or null without a baseline. */
  public Double ratio() {
    return baseline == null || baseline == 0 ? null : floe / baseline;
  }

  public static Figure alone(String metric, String unit, double floe) {
    return new Figure(metric, unit, floe, null, null, true);
  }
}
