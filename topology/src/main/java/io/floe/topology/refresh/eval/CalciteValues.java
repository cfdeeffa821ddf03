package io.floe.topology.refresh.eval;

import java.nio.ByteBuffer;
import org.apache.calcite.avatica.util.ByteString;
import org.apache.calcite.rel.type.RelDataType;

/**
 * Conversions between Floe's native row values and Calcite's internal representation, for the
 * expressions that Calcite's code generator evaluates.
 *
 * <p>Native values are what Floe reads from Iceberg and writes back: {@code Long} microseconds (or
 * nanoseconds for precision 9) for timestamps, {@code Integer} days for dates, {@code Long}
 * microseconds for times, {@code ByteBuffer} for binary, and the plain Java types otherwise.
 * Calcite keeps timestamps and times in milliseconds and binary as {@code ByteString}; only those
 * differ. Calcite's millisecond timestamps are why computed timestamp expressions (not column
 * references, not buckets, not aggregates of columns) carry millisecond precision.
 */
final class CalciteValues {

  private CalciteValues() {}

  /** How a value of one SQL type crosses between the two representations. */
  enum Conversion {
    NONE,
    TIMESTAMP_MICROS,
    TIMESTAMP_NANOS,
    TIME_MICROS,
    BINARY;

    static Conversion of(RelDataType type) {
      return switch (type.getSqlTypeName()) {
        case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE ->
            type.getPrecision() > 6 ? TIMESTAMP_NANOS : TIMESTAMP_MICROS;
        case TIME -> TIME_MICROS;
        case BINARY, VARBINARY -> BINARY;
        default -> NONE;
      };
    }

    Object toCalcite(Object nativeValue) {
      if (nativeValue == null) {
        return null;
      }
      return switch (this) {
        case NONE -> nativeValue;
        case TIMESTAMP_MICROS -> Math.floorDiv((Long) nativeValue, 1_000L);
        case TIMESTAMP_NANOS -> Math.floorDiv((Long) nativeValue, 1_000_000L);
        case TIME_MICROS -> (int) Math.floorDiv((Long) nativeValue, 1_000L);
        case BINARY -> {
          ByteBuffer buffer = ((ByteBuffer) nativeValue).duplicate();
          byte[] bytes = new byte[buffer.remaining()];
          buffer.get(bytes);
          yield new ByteString(bytes);
        }
      };
    }

    Object toNative(Object calciteValue) {
      if (calciteValue == null) {
        return null;
      }
      return switch (this) {
        case NONE -> calciteValue;
        case TIMESTAMP_MICROS -> ((Number) calciteValue).longValue() * 1_000L;
        case TIMESTAMP_NANOS -> ((Number) calciteValue).longValue() * 1_000_000L;
        case TIME_MICROS -> ((Number) calciteValue).longValue() * 1_000L;
        case BINARY -> ByteBuffer.wrap(((ByteString) calciteValue).getBytes());
      };
    }
  }
}
