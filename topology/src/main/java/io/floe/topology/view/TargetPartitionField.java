package io.floe.topology.view;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.PartitionSpec;

/**
 * One partition field of a target table, written as in Iceberg and Trino: {@code minute_ts}
 * (identity), {@code day(minute_ts)}, {@code bucket(16, symbol)}, {@code truncate(4, symbol)}.
 *
 * @param transform identity, year, month, day, hour, bucket or truncate
 * @param column the output column it partitions by
 * @param width the bucket count or truncation width; 0 for other transforms
 */
public record TargetPartitionField(String transform, String column, int width) {

  private static final Pattern IDENTITY = Pattern.compile("\"?([A-Za-z_][A-Za-z0-9_]*)\"?");
  private static final Pattern TIME =
      Pattern.compile(
          "(identity|years?|months?|days?|hours?)\\s*\\(\\s*\"?([A-Za-z_][A-Za-z0-9_]*)\"?\\s*\\)",
          Pattern.CASE_INSENSITIVE);
  private static final Pattern WIDTH =
      Pattern.compile(
          "(bucket|truncate)\\s*\\(\\s*(\\d+)\\s*,\\s*\"?([A-Za-z_][A-Za-z0-9_]*)\"?\\s*\\)",
          Pattern.CASE_INSENSITIVE);

  /**
   * Parses one field.
   *
   * @throws IllegalArgumentException with the accepted forms when the text is none of them
   */
  public static TargetPartitionField parse(String text) {
    String trimmed = text.trim();
    Matcher m = IDENTITY.matcher(trimmed);
    if (m.matches()) {
      return new TargetPartitionField("identity", m.group(1), 0);
    }
    m = TIME.matcher(trimmed);
    if (m.matches()) {
      String transform = m.group(1).toLowerCase(Locale.ROOT);
      if (transform.endsWith("s")) {
        transform = transform.substring(0, transform.length() - 1);
      }
      return new TargetPartitionField(transform, m.group(2), 0);
    }
    m = WIDTH.matcher(trimmed);
    if (m.matches()) {
      int width = Integer.parseInt(m.group(2));
      if (width < 1) {
        throw new IllegalArgumentException("'" + text + "': width must be at least 1");
      }
      return new TargetPartitionField(m.group(1).toLowerCase(Locale.ROOT), m.group(3), width);
    }
    throw new IllegalArgumentException(
        "'"
            + text
            + "' is not a partition field; use column, year(column), month(column),"
            + " day(column), hour(column), bucket(N, column) or truncate(N, column)");
  }

  /** Adds this field to a partition spec under construction. */
  public PartitionSpec.Builder addTo(PartitionSpec.Builder spec) {
    return switch (transform) {
      case "identity" -> spec.identity(column);
      case "year" -> spec.year(column);
      case "month" -> spec.month(column);
      case "day" -> spec.day(column);
      case "hour" -> spec.hour(column);
      case "bucket" -> spec.bucket(column, width);
      case "truncate" -> spec.truncate(column, width);
      default -> throw new IllegalStateException("Unknown transform " + transform);
    };
  }

  /** The field as an Iceberg transform term, for partition spec evolution. */
  public org.apache.iceberg.expressions.Term toTerm() {
    return switch (transform) {
      case "identity" -> org.apache.iceberg.expressions.Expressions.ref(column);
      case "year" -> org.apache.iceberg.expressions.Expressions.year(column);
      case "month" -> org.apache.iceberg.expressions.Expressions.month(column);
      case "day" -> org.apache.iceberg.expressions.Expressions.day(column);
      case "hour" -> org.apache.iceberg.expressions.Expressions.hour(column);
      case "bucket" -> org.apache.iceberg.expressions.Expressions.bucket(column, width);
      case "truncate" -> org.apache.iceberg.expressions.Expressions.truncate(column, width);
      default -> throw new IllegalStateException("Unknown transform " + transform);
    };
  }

  @Override
  public String toString() {
    return switch (transform) {
      case "identity" -> column;
      case "bucket", "truncate" -> transform + "(" + width + ", " + column + ")";
      default -> transform + "(" + column + ")";
    };
  }
}
