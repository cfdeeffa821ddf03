package io.floe.topology.refresh.eval.expr;

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
 * Calcite keeps times in milliseconds and binary as {@code ByteString}; only those differ.
 * Timestamps never cross: generated code sees them as the native counts of their unit ({@link
 * ExactTimestamps}), since Calcite's own timestamps are milliseconds.
 */
final class CalciteValues {

  private CalciteValues() {}

  /** How a value of one SQL type crosses between the two representations. */
  enum Conversion {
    NONE,
    TIME_MICROS,
    BINARY;

    static Conversion of(RelDataType type) {
      return switch (type.getSqlTypeName()) {
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
        case TIME_MICROS -> ((Number) calciteValue).longValue() * 1_000L;
        case BINARY -> ByteBuffer.wrap(((ByteString) calciteValue).getBytes());
      };
    }
  }
}
