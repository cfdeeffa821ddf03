package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import java.time.Instant;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Bucket filters bound to real Iceberg column types and evaluated by Iceberg: literals are in the
 * column's own unit, and ranges reaching past the type's limits have no bound on that side.
 */
class BucketFiltersTest {

  private static final long NANOS_2026 =
      BucketColumnType.TIMESTAMP_NS.fromInstant(Instant.parse("2026-04-08T10:00:00Z"));
  private static final long MINUTE_NANOS = 60_000_000_000L;

  /** Whether Iceberg's evaluator selects a row whose column holds {@code value} (null allowed). */
  private static boolean selects(Type type, Expression filter, Object value) {
    Schema schema = new Schema(Types.NestedField.optional(1, "ts", type));
    GenericRecord row = GenericRecord.create(schema);
    row.set(0, value);
    return new Evaluator(schema.asStruct(), filter).eval(row);
  }

  private static Expression filter(BucketColumnType type, BucketRange... ranges) {
    return BucketFilters.of("ts", type, BucketRangeSet.of(ranges), false);
  }

  @Test
  void shouldBindANanosecondRangeInNanoseconds() {
    Type type = Types.TimestampNanoType.withoutZone();
    Expression filter =
        filter(
            BucketColumnType.TIMESTAMP_NS, new BucketRange(NANOS_2026, NANOS_2026 + MINUTE_NANOS));

    // Iceberg reads a plain long literal as microseconds: 2026 in nanoseconds overflowed.
    assertThat(selects(type, filter, NANOS_2026)).isTrue();
    assertThat(selects(type, filter, NANOS_2026 + MINUTE_NANOS - 1)).isTrue();
    assertThat(selects(type, filter, NANOS_2026 - 1)).isFalse();
    assertThat(selects(type, filter, NANOS_2026 + MINUTE_NANOS)).isFalse();
    assertThat(selects(type, filter, null)).isFalse();
  }

  @Test
  void shouldBindAZonedNanosecondRangeInNanoseconds() {
    Type type = Types.TimestampNanoType.withZone();
    Expression filter =
        filter(
            BucketColumnType.TIMESTAMPTZ_NS,
            new BucketRange(NANOS_2026, NANOS_2026 + MINUTE_NANOS));

    assertThat(selects(type, filter, NANOS_2026 + 1)).isTrue();
    assertThat(selects(type, filter, NANOS_2026 + MINUTE_NANOS)).isFalse();
  }

  @Test
  void shouldBindAMicrosecondRangeInMicroseconds() {
    Type type = Types.TimestampType.withZone();
    long start = NANOS_2026 / 1000;
    Expression filter =
        filter(BucketColumnType.TIMESTAMPTZ, new BucketRange(start, start + 60_000_000L));

    assertThat(selects(type, filter, start)).isTrue();
    assertThat(selects(type, filter, start + 60_000_000L)).isFalse();
  }

  @Test
  void shouldLeaveTheSidesOfARangeBeyondTheLimitsOfANanosecondColumnOpen() {
    Type type = Types.TimestampNanoType.withoutZone();
    // The first and last buckets saturate at the ends of the long range.
    Expression filter =
        filter(
            BucketColumnType.TIMESTAMP_NS,
            new BucketRange(Long.MIN_VALUE, Long.MIN_VALUE + MINUTE_NANOS),
            new BucketRange(Long.MAX_VALUE - MINUTE_NANOS, Long.MAX_VALUE));

    assertThat(selects(type, filter, Long.MIN_VALUE)).isTrue();
    assertThat(selects(type, filter, Long.MIN_VALUE + MINUTE_NANOS)).isFalse();
    assertThat(selects(type, filter, Long.MAX_VALUE - MINUTE_NANOS - 1)).isFalse();
    assertThat(selects(type, filter, Long.MAX_VALUE - 1)).isTrue();
    assertThat(selects(type, filter, Long.MAX_VALUE)).isTrue();
  }

  @Test
  void shouldClampDateRangesToTheIntRange() {
    Type type = Types.DateType.get();
    Expression filter =
        filter(
            BucketColumnType.DATE,
            new BucketRange(Integer.MIN_VALUE - 40L, Integer.MIN_VALUE + 10L),
            new BucketRange(Integer.MAX_VALUE - 10L, Integer.MAX_VALUE + 20L));

    assertThat(selects(type, filter, Integer.MIN_VALUE)).isTrue();
    assertThat(selects(type, filter, Integer.MIN_VALUE + 10)).isFalse();
    assertThat(selects(type, filter, 0)).isFalse();
    assertThat(selects(type, filter, Integer.MAX_VALUE - 11)).isFalse();
    assertThat(selects(type, filter, Integer.MAX_VALUE)).isTrue();
  }

  @Test
  void shouldSelectNothingOutsideADateRangeThatLiesWhollyBeyondTheIntRange() {
    Expression filter =
        filter(BucketColumnType.DATE, new BucketRange(Integer.MAX_VALUE + 1L, Long.MAX_VALUE));

    assertThat(selects(Types.DateType.get(), filter, Integer.MAX_VALUE)).isFalse();
  }

  @Test
  void shouldSelectTheNullBucketOnlyWhenAsked() {
    Type type = Types.TimestampNanoType.withoutZone();
    Expression nullsOnly =
        BucketFilters.of("ts", BucketColumnType.TIMESTAMP_NS, BucketRangeSet.empty(), true);

    assertThat(selects(type, nullsOnly, null)).isTrue();
    assertThat(selects(type, nullsOnly, NANOS_2026)).isFalse();
  }
}
