package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of bucket arithmetic over every granularity, column type and a set of zones chosen for
 * their transitions: UTC, whole-hour DST (Paris, New York), a half-hour offset (Kolkata), a
 * half-hour DST shift (Lord Howe) and a zone east of the date line (Auckland).
 */
class BucketingPropertiesTest {

  private static final ZoneId[] ZONES = {
    ZoneOffset.UTC,
    ZoneId.of("Europe/Paris"),
    ZoneId.of("America/New_York"),
    ZoneId.of("Asia/Kolkata"),
    ZoneId.of("Australia/Lord_Howe"),
    ZoneId.of("Pacific/Auckland"),
  };

  // Years 1 to 9999, Trino's range, in each column's stored unit.
  private static final long MIN_MICROS = -62_135_596_800_000_000L;
  private static final long MAX_MICROS = 253_402_300_799_999_999L;
  private static final long MIN_DAYS = -719_162L;
  private static final long MAX_DAYS = 2_932_896L;

  record Case(Bucketing bucketing, long value) {}

  @Provide
  Arbitrary<Case> cases() {
    Arbitrary<Granularity> granularity = Arbitraries.of(Granularities.ALL);
    Arbitrary<BucketColumnType> type = Arbitraries.of(BucketColumnType.class);
    Arbitrary<ZoneId> zone = Arbitraries.of(ZONES);
    return Combinators.combine(granularity, type, zone)
        .as((g, t, z) -> t.isDate() && g.isTimeOfDay() ? null : Bucketing.of(g, t, z))
        .filter(b -> b != null)
        .flatMap(b -> valuesOf(b.columnType()).map(v -> new Case(b, v)));
  }

  private static Arbitrary<Long> valuesOf(BucketColumnType type) {
    Arbitrary<Long> anywhere =
        switch (type) {
          case DATE -> Arbitraries.longs().between(MIN_DAYS, MAX_DAYS);
          case TIMESTAMP, TIMESTAMPTZ -> Arbitraries.longs().between(MIN_MICROS, MAX_MICROS);
          // Nanoseconds in a long reach from 1677 to 2262; stay within 1827 to 2112 so that
          // value + width cannot overflow.
          case TIMESTAMP_NS, TIMESTAMPTZ_NS ->
              Arbitraries.longs().between(-4_500_000_000_000_000_000L, 4_500_000_000_000_000_000L);
        };
    if (type.isDate()) {
      return anywhere;
    }
    // Half the values near today, where zone rules have the most transitions.
    long perSecond =
        type == BucketColumnType.TIMESTAMP || type == BucketColumnType.TIMESTAMPTZ
            ? 1_000_000L
            : 1_000_000_000L;
    Arbitrary<Long> recent =
        Arbitraries.longs().between(1_500_000_000L, 1_900_000_000L).map(s -> s * perSecond);
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(1, anywhere), net.jqwik.api.Tuple.of(1, recent));
  }

  @Property(tries = 3000)
  void everyValueLiesInTheBucketItsFloorStarts(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());
    long end = b.next(start);

    assertThat(start).isLessThanOrEqualTo(c.value());
    assertThat(end).isGreaterThan(c.value());
  }

  @Property(tries = 3000)
  void bucketsAreDisjointSoEveryValueIsInExactlyOne(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    long start = b.floor(c.value());
    long end = b.next(start);

    // Every value of [start, end) has the same floor, and the next bucket starts at end.
    assertThat(b.floor(end - 1)).isEqualTo(start);
    assertThat(b.floor(end)).isEqualTo(end);
    assertThat(b.floor(start - 1)).isLessThan(start);
    assertThat(b.next(b.floor(start - 1))).isEqualTo(start);
  }

  @Property(tries = 3000)
  void floorIsIdempotent(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();

    assertThat(b.floor(b.floor(c.value()))).isEqualTo(b.floor(c.value()));
  }

  @Property(tries = 3000)
  void floorIsMonotone(
      @ForAll("cases") Case c,
      @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 100_000_000_000L) long step) {
    Bucketing b = c.bucketing();
    long later = c.value() + Math.min(step, maxOf(b.columnType()) - c.value());

    assertThat(b.floor(c.value())).isLessThanOrEqualTo(b.floor(later));
  }

  @Property(tries = 3000)
  void expansionCoversEveryValueBetweenMinAndMax(
      @ForAll("cases") Case c,
      @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 10_000_000_000_000L) long width,
      @ForAll @net.jqwik.api.constraints.DoubleRange(min = 0, max = 1) double at) {
    Bucketing b = c.bucketing();
    long min = c.value();
    long max = min + Math.min(width, maxOf(b.columnType()) - min);
    long between = min + (long) ((max - min) * at);

    BucketRange range = b.expand(min, max);

    assertThat(range.contains(min)).isTrue();
    assertThat(range.contains(max)).isTrue();
    assertThat(range.contains(between)).isTrue();
    assertThat(range.start()).isEqualTo(b.floor(min));
    assertThat(range.end()).isEqualTo(b.next(b.floor(max)));
  }

  @Property(tries = 3000)
  void calendarBoundariesAgreeWithJavaTime(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    if (b.granularity().isTimeOfDay()) {
      return;
    }
    ZoneId zone = b.columnType().isDate() ? ZoneOffset.UTC : b.zone();
    LocalDate day =
        b.columnType().isDate()
            ? LocalDate.ofEpochDay(c.value())
            : ZonedDateTime.ofInstant(b.columnType().toInstant(c.value()), zone).toLocalDate();
    LocalDate first =
        switch (b.granularity().timeUnit()) {
          case DAY -> day;
          case WEEK -> day.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
          case MONTH -> day.with(TemporalAdjusters.firstDayOfMonth());
          case QUARTER -> day.withDayOfMonth(1).minusMonths((day.getMonthValue() - 1) % 3);
          case YEAR -> day.with(TemporalAdjusters.firstDayOfYear());
          default -> throw new AssertionError();
        };
    LocalDate following =
        switch (b.granularity().timeUnit()) {
          case DAY -> first.plusDays(1);
          case WEEK -> first.plusDays(7);
          case MONTH -> first.plusMonths(1);
          case QUARTER -> first.plusMonths(3);
          case YEAR -> first.plusYears(1);
          default -> throw new AssertionError();
        };

    long start = b.floor(c.value());
    if (b.columnType().isDate()) {
      assertThat(start).isEqualTo(first.toEpochDay());
      assertThat(b.next(start)).isEqualTo(following.toEpochDay());
    } else {
      assertThat(b.columnType().toInstant(start)).isEqualTo(first.atStartOfDay(zone).toInstant());
      assertThat(b.columnType().toInstant(b.next(start)))
          .isEqualTo(following.atStartOfDay(zone).toInstant());
    }
  }

  @Property(tries = 3000)
  void hourAndMinuteBoundariesAgreeWithJavaTimeInWholeHourZones(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    String zone = b.zone().getId();
    if (!b.granularity().isTimeOfDay()
        || b.granularity().isStride()
        || zone.equals("Australia/Lord_Howe")
        || zone.equals("Asia/Kolkata")) {
      return;
    }
    ChronoUnit unit = b.granularity() == Granularity.HOUR ? ChronoUnit.HOURS : ChronoUnit.MINUTES;
    Instant instant = b.columnType().toInstant(c.value());
    // ZonedDateTime.truncatedTo keeps the offset in force, as Trino's date_trunc does.
    Instant expected = ZonedDateTime.ofInstant(instant, b.zone()).truncatedTo(unit).toInstant();
    if (instant.isBefore(Instant.parse("1970-01-01T00:00:00Z"))) {
      // Local mean time offsets of the 19th century are not whole minutes; skip them.
      return;
    }

    assertThat(b.columnType().toInstant(b.floor(c.value()))).isEqualTo(expected);
  }

  @Property(tries = 3000)
  void binsStartAWholeNumberOfStridesFromTheirOriginInEveryZone(@ForAll("cases") Case c) {
    Bucketing b = c.bucketing();
    if (!b.granularity().isBinned()) {
      return;
    }
    Instant origin =
        b.granularity().origin().map(o -> o.atZone(b.zone()).toInstant()).orElse(Instant.EPOCH);
    Instant value = b.columnType().toInstant(c.value());
    Instant start = b.columnType().toInstant(b.floor(c.value()));
    if (start.equals(b.columnType().toInstant(Long.MIN_VALUE))) {
      // The first bucket of the column's range saturates.
      return;
    }
    BigInteger stride = BigInteger.valueOf(b.granularity().seconds()).multiply(NANOS_PER_SECOND);
    BigInteger sinceOrigin = nanosBetween(origin, start);

    assertThat(sinceOrigin.mod(stride)).isEqualTo(BigInteger.ZERO);
    assertThat(nanosBetween(start, value))
        .isBetween(BigInteger.ZERO, stride.subtract(BigInteger.ONE));
  }

  private static final BigInteger NANOS_PER_SECOND = BigInteger.valueOf(1_000_000_000L);

  private static BigInteger nanosBetween(Instant from, Instant to) {
    return BigInteger.valueOf(to.getEpochSecond())
        .subtract(BigInteger.valueOf(from.getEpochSecond()))
        .multiply(NANOS_PER_SECOND)
        .add(BigInteger.valueOf(to.getNano() - from.getNano()));
  }

  private static long maxOf(BucketColumnType type) {
    return switch (type) {
      case DATE -> MAX_DAYS;
      case TIMESTAMP, TIMESTAMPTZ -> MAX_MICROS;
      case TIMESTAMP_NS, TIMESTAMPTZ_NS -> 4_500_000_000_000_000_000L;
    };
  }
}
