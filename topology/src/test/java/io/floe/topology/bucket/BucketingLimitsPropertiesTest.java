package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.ZoneId;
import java.time.ZoneOffset;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

/**
 * Bucket arithmetic at the edges of each column type's range: never an overflow, never a wrap. The
 * rule: the first bucket reaches down to {@code Long.MIN_VALUE} when its real start is not
 * representable, and the last bucket's end saturates at {@code Long.MAX_VALUE}, which then means
 * "no end" ({@link BucketRange#contains} includes {@code Long.MAX_VALUE} itself). {@code date}
 * values are Iceberg ints; the sentinels {@code Long.MIN_VALUE} and {@code Long.MAX_VALUE} that
 * open-ended ranges use are valid inputs of every type.
 */
class BucketingLimitsPropertiesTest {

  private static final ZoneId[] ZONES = {
    ZoneOffset.UTC,
    ZoneOffset.ofHoursMinutes(5, 30),
    ZoneId.of("Europe/Paris"),
    ZoneId.of("Australia/Lord_Howe"),
    ZoneId.of("Pacific/Auckland"),
  };

  record Case(Bucketing bucketing, long value) {}

  @Provide
  Arbitrary<Case> cases() {
    Arbitrary<Granularity> granularity = Arbitraries.of(Granularities.ALL);
    Arbitrary<BucketColumnType> type = Arbitraries.of(BucketColumnType.class);
    Arbitrary<ZoneId> zone = Arbitraries.of(ZONES);
    return Combinators.combine(granularity, type, zone)
        .as((g, t, z) -> t.isDate() && g.isTimeOfDay() ? null : Bucketing.of(g, t, z))
        .filter(b -> b != null)
        .flatMap(b -> nearTheLimits(b.columnType()).map(v -> new Case(b, v)));
  }

  /** Values near the limits, and values of today (where zones have the most transitions). */
  @Provide
  Arbitrary<Case> anywhere() {
    Arbitrary<Case> today =
        Combinators.combine(
                Arbitraries.of(Granularities.ALL),
                Arbitraries.of(BucketColumnType.class),
                Arbitraries.of(ZONES),
                Arbitraries.longs().between(1_700_000_000L, 1_900_000_000L))
            .as(
                (g, t, z, seconds) -> {
                  if (t.isDate()) {
                    return g.isTimeOfDay()
                        ? null
                        : new Case(Bucketing.of(g, t, z), Math.floorDiv(seconds, 86_400L));
                  }
                  return new Case(Bucketing.of(g, t, z), seconds * unitsPerSecond(t));
                })
            .filter(c -> c != null);
    return Arbitraries.frequencyOf(Tuple.of(1, today), Tuple.of(1, cases()));
  }

  /** Values at and near both ends of the long range, and for dates of the int range. */
  private static Arbitrary<Long> nearTheLimits(BucketColumnType type) {
    // About three years in the column's unit: several buckets of every granularity.
    long reach = type.isDate() ? 1200 : 100_000_000L * unitsPerSecond(type);
    Arbitrary<Long> low = Arbitraries.longs().between(0, reach).map(d -> Long.MIN_VALUE + d);
    Arbitrary<Long> high = Arbitraries.longs().between(0, reach).map(d -> Long.MAX_VALUE - d);
    Arbitrary<Long> edges = Arbitraries.of(Long.MIN_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1);
    Arbitrary<Long> max = Arbitraries.just(Long.MAX_VALUE);
    if (!type.isDate()) {
      return Arbitraries.frequencyOf(
          Tuple.of(4, low), Tuple.of(4, high), Tuple.of(1, edges), Tuple.of(1, max));
    }
    Arbitrary<Long> intLow =
        Arbitraries.longs().between(-reach, reach).map(d -> Integer.MIN_VALUE + d);
    Arbitrary<Long> intHigh =
        Arbitraries.longs().between(-reach, reach).map(d -> Integer.MAX_VALUE + d);
    return Arbitraries.frequencyOf(
        Tuple.of(3, intLow),
        Tuple.of(3, intHigh),
        Tuple.of(2, low),
        Tuple.of(2, high),
        Tuple.of(1, edges),
        Tuple.of(1, max));
  }

  private static long unitsPerSecond(BucketColumnType type) {
    return type == BucketColumnType.TIMESTAMP_NS || type == BucketColumnType.TIMESTAMPTZ_NS
        ? 1_000_000_000L
        : 1_000_000L;
  }

  @Property(tries = 4000)
  void everyValueNearTheLimitsLiesInTheBucketItsFloorStarts(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());
    long end = b.next(start);

    assertThat(start).isLessThanOrEqualTo(c.value());
    assertThat(end).isGreaterThan(start);
    assertThat(end > c.value() || end == Long.MAX_VALUE).isTrue();
    assertThat(b.bucketOf(c.value()).contains(c.value())).isTrue();
  }

  @Property(tries = 4000)
  void bucketsNearTheLimitsAreDisjoint(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());
    long end = b.next(start);

    if (end != Long.MAX_VALUE) {
      assertThat(b.floor(end)).isEqualTo(end);
      assertThat(b.floor(end - 1)).isEqualTo(start);
    }
    if (start != Long.MIN_VALUE) {
      assertThat(b.floor(start - 1)).isLessThan(start);
      assertThat(b.next(b.floor(start - 1))).isEqualTo(start);
    }
  }

  @Property(tries = 4000)
  void floorIsMonotoneAcrossTheLimits(
      @ForAll("cases") Case c, @ForAll @LongRange(min = 0, max = 1L << 62) long step) {
    Bucketing b = c.bucketing();
    long later = c.value() > Long.MAX_VALUE - step ? Long.MAX_VALUE : c.value() + step;

    assertThat(b.floor(c.value())).isLessThanOrEqualTo(b.floor(later));
    assertThat(b.floor(b.floor(c.value()))).isEqualTo(b.floor(c.value()));
  }

  @Property(tries = 4000)
  void expansionNearTheLimitsCoversItsMinAndMax(
      @ForAll("cases") Case c, @ForAll @LongRange(min = 0, max = 1L << 40) long width) {
    Bucketing b = c.bucketing();
    long max = c.value();
    long min = max < Long.MIN_VALUE + width ? Long.MIN_VALUE : max - width;

    BucketRange range = b.expand(min, max);

    assertThat(range.contains(min)).isTrue();
    assertThat(range.contains(max)).isTrue();
  }

  @Property(tries = 2000)
  void epochMicrosOfStoredValuesAreMonotoneAndKeepTheOpenEnds(
      @ForAll("cases") Case c, @ForAll @LongRange(min = 0, max = 1L << 62) long step) {
    BucketColumnType type = c.bucketing().columnType();
    long later = c.value() > Long.MAX_VALUE - step ? Long.MAX_VALUE : c.value() + step;

    assertThat(type.toEpochMicros(c.value())).isLessThanOrEqualTo(type.toEpochMicros(later));
    assertThat(type.toEpochMicros(Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
    assertThat(type.toEpochMicros(Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
  }

  @Property(tries = 3000)
  void advancingByOneBucketIsNext(@ForAll("anywhere") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());

    assertThat(b.advance(start, 0)).isEqualTo(start);
    assertThat(b.advance(start, 1)).isEqualTo(b.next(start));
    assertThat(b.countBuckets(start, b.next(start))).isEqualTo(1);
  }

  @Property(tries = 1000)
  void advancingAndCountingAgreeWithWalkingBucketByBucket(
      @ForAll("anywhere") Case c, @ForAll @LongRange(min = 0, max = 3000) long n) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());
    long walked = start;
    long steps = 0;
    while (steps < n && walked != Long.MAX_VALUE) {
      walked = b.next(walked);
      steps++;
    }

    long end = b.advance(start, n);

    assertThat(end).isEqualTo(walked);
    assertThat(b.countBuckets(start, end)).isEqualTo(steps);
  }

  @Property(tries = 300)
  void countingAcrossTheWholeRangeNeverOverflows(@ForAll("anywhere") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());

    long before = b.countBuckets(Long.MIN_VALUE, start);
    long after = b.countBuckets(start, Long.MAX_VALUE);

    assertThat(before).isGreaterThanOrEqualTo(0);
    assertThat(after).isGreaterThanOrEqualTo(1);
    long back = b.advance(Long.MIN_VALUE, before);
    long forth = b.advance(start, after);
    if (b.granularity().isTimeOfDay() && !b.zone().getRules().isFixedOffset()) {
      // Across hundreds of thousands of years of DST transitions both are estimates (off by the
      // buckets that transitions cut), but still boundaries.
      assertThat(back == Long.MAX_VALUE || b.floor(back) == back).isTrue();
      assertThat(forth == Long.MAX_VALUE || b.floor(forth) == forth).isTrue();
    } else {
      assertThat(back).isEqualTo(start);
      assertThat(forth).isEqualTo(Long.MAX_VALUE);
    }
  }
}
