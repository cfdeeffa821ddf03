package io.floe.topology.iceberg;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

/**
 * Conversions between the values of Iceberg's generic {@code Record}s and Floe's native values:
 * {@code Long} microseconds (nanoseconds for the {@code _ns} types) for timestamps and times,
 * {@code Integer} days for dates, {@code String} for strings, {@code ByteBuffer} for binary.
 */
public final class IcebergValues {

  private IcebergValues() {}

  /** The native value of a generic record value of {@code type}. */
  public static Object toNative(Type type, Object value) {
    if (value == null) {
      return null;
    }
    return switch (type.typeId()) {
      case DATE -> DateTimeUtil.daysFromDate((LocalDate) value);
      case TIME -> DateTimeUtil.microsFromTime((LocalTime) value);
      case TIMESTAMP ->
          ((Types.TimestampType) type).shouldAdjustToUTC()
              ? DateTimeUtil.microsFromTimestamptz((OffsetDateTime) value)
              : DateTimeUtil.microsFromTimestamp((LocalDateTime) value);
      case TIMESTAMP_NANO ->
          ((Types.TimestampNanoType) type).shouldAdjustToUTC()
              ? DateTimeUtil.nanosFromTimestamptz((OffsetDateTime) value)
              : DateTimeUtil.nanosFromTimestamp((LocalDateTime) value);
      case STRING -> value.toString();
      case FIXED -> value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : value;
      default -> value;
    };
  }

  /**
   * The value in Iceberg's internal representation (what {@code InternalWriter} and partition
   * transforms take) of a native value, for a column of {@code type}: the native value itself, in
   * the column's Java type.
   */
  public static Object toInternal(Type type, Object value) {
    if (value == null) {
      return null;
    }
    // A value already of its internal class is returned as it is, not unboxed and boxed again.
    return switch (type.typeId()) {
      case INTEGER, DATE -> value instanceof Integer ? value : ((Number) value).intValue();
      case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO ->
          value instanceof Long ? value : ((Number) value).longValue();
      case FLOAT -> value instanceof Float ? value : ((Number) value).floatValue();
      case DOUBLE -> value instanceof Double ? value : ((Number) value).doubleValue();
      case DECIMAL ->
          ((BigDecimal) value).setScale(((Types.DecimalType) type).scale(), RoundingMode.HALF_UP);
      case STRING -> value.toString();
      default -> value;
    };
  }

  /** The generic record value of a native value, for a column of {@code type}. */
  public static Object toIceberg(Type type, Object value) {
    if (value == null) {
      return null;
    }
    return switch (type.typeId()) {
      case INTEGER -> ((Number) value).intValue();
      case LONG -> ((Number) value).longValue();
      case FLOAT -> ((Number) value).floatValue();
      case DOUBLE -> ((Number) value).doubleValue();
      case DECIMAL ->
          ((BigDecimal) value).setScale(((Types.DecimalType) type).scale(), RoundingMode.HALF_UP);
      case DATE -> DateTimeUtil.dateFromDays(((Number) value).intValue());
      case TIME -> DateTimeUtil.timeFromMicros(((Number) value).longValue());
      case TIMESTAMP ->
          ((Types.TimestampType) type).shouldAdjustToUTC()
              ? DateTimeUtil.timestamptzFromMicros((Long) value)
              : DateTimeUtil.timestampFromMicros((Long) value);
      case TIMESTAMP_NANO ->
          ((Types.TimestampNanoType) type).shouldAdjustToUTC()
              ? DateTimeUtil.timestamptzFromNanos((Long) value)
              : DateTimeUtil.timestampFromNanos((Long) value);
      case STRING -> value.toString();
      case FIXED -> {
        ByteBuffer buffer = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        yield bytes;
      }
      default -> value;
    };
  }
}
