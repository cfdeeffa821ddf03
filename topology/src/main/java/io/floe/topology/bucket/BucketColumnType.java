package io.floe.topology.bucket;

import java.time.Instant;
import java.util.Optional;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg types a bucket column may have, with the unit of the long each is stored as: days for
 * {@code date}, microseconds for {@code timestamp} and {@code timestamptz}, nanoseconds for {@code
 * timestamp_ns} and {@code timestamptz_ns}. Bucket arithmetic works directly on these stored values
 * so that ranges compare with Iceberg's column bounds without conversion.
 *
 * <p>A timestamp without time zone is taken to be UTC wall-clock time; that is the convention of
 * every writer that stores instants in such columns, and with the default UTC bucket zone it makes
 * buckets equal Trino's {@code date_trunc} on the local value.
 */
public enum BucketColumnType {
  DATE(0, false),
  TIMESTAMP(1_000_000L, false),
  TIMESTAMPTZ(1_000_000L, true),
  TIMESTAMP_NS(1_000_000_000L, false),
  TIMESTAMPTZ_NS(1_000_000_000L, true);

  private static final long MICROS_PER_DAY = 86_400_000_000L;

  private final long unitsPerSecond;
  private final boolean zoned;

  BucketColumnType(long unitsPerSecond, boolean zoned) {
    this.unitsPerSecond = unitsPerSecond;
    this.zoned = zoned;
  }

  /** The bucket column type of an Iceberg type, or empty if it cannot hold buckets. */
  public static Optional<BucketColumnType> of(Type type) {
    return switch (type.typeId()) {
      case DATE -> Optional.of(DATE);
      case TIMESTAMP ->
          Optional.of(((Types.TimestampType) type).shouldAdjustToUTC() ? TIMESTAMPTZ : TIMESTAMP);
      case TIMESTAMP_NANO ->
          Optional.of(
              ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? TIMESTAMPTZ_NS : TIMESTAMP_NS);
      default -> Optional.empty();
    };
  }

  /** True for {@code date}: values are calendar days, and only day or longer buckets apply. */
  public boolean isDate() {
    return this == DATE;
  }

  /** True when the column stores instants (with time zone) rather than wall-clock values. */
  public boolean isZoned() {
    return zoned;
  }

  /** Stored units per second; not defined for {@code date}. */
  long unitsPerSecond() {
    if (isDate()) {
      throw new IllegalStateException("date values are days");
    }
    return unitsPerSecond;
  }

  /** The instant of a stored timestamp value (UTC for timestamps without time zone). */
  public Instant toInstant(long value) {
    long perSecond = unitsPerSecond();
    return Instant.ofEpochSecond(
        Math.floorDiv(value, perSecond),
        Math.floorMod(value, perSecond) * (1_000_000_000L / perSecond));
  }

  /** The stored value of an instant, truncated to the column's precision. */
  public long fromInstant(Instant instant) {
    long perSecond = unitsPerSecond();
    return Math.addExact(
        Math.multiplyExact(instant.getEpochSecond(), perSecond),
        instant.getNano() / (1_000_000_000L / perSecond));
  }

  /**
   * A stored value in epoch microseconds UTC, the unit of bucket ranges on Floe's topics; a date is
   * its midnight UTC.
   */
  public long toEpochMicros(long value) {
    return switch (this) {
      case DATE -> Math.multiplyExact(value, MICROS_PER_DAY);
      case TIMESTAMP, TIMESTAMPTZ -> value;
      case TIMESTAMP_NS, TIMESTAMPTZ_NS -> Math.floorDiv(value, 1000L);
    };
  }

  /**
   * A stored value as the target's bucket column holds it: nanosecond buckets are kept in
   * microseconds there (buckets are whole minutes or longer, so nothing is lost).
   */
  public long toTargetValue(long value) {
    return this == TIMESTAMP_NS || this == TIMESTAMPTZ_NS ? Math.floorDiv(value, 1000L) : value;
  }

  /** The inverse of {@link #toTargetValue}. */
  public long fromTargetValue(long value) {
    return this == TIMESTAMP_NS || this == TIMESTAMPTZ_NS
        ? Math.multiplyExact(value, 1000L)
        : value;
  }

  /** The Iceberg type name as users write it. */
  public String typeName() {
    return switch (this) {
      case DATE -> "date";
      case TIMESTAMP -> "timestamp";
      case TIMESTAMPTZ -> "timestamptz";
      case TIMESTAMP_NS -> "timestamp_ns";
      case TIMESTAMPTZ_NS -> "timestamptz_ns";
    };
  }
}
