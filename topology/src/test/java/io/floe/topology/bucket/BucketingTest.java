package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class BucketingTest {

  private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  private static Instant instant(long micros) {
    return BucketColumnType.TIMESTAMPTZ.toInstant(micros);
  }

  @Test
  void shouldTruncateToTheMinuteInUtc() {
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMP);

    assertThat(instant(minute.floor(micros("2026-04-08T10:15:42.123456Z"))))
        .isEqualTo(Instant.parse("2026-04-08T10:15:00Z"));
  }

  @Test
  void shouldOpenTheNextBucketWhenMaxLiesExactlyOnABoundary() {
    Bucketing hour = Bucketing.utc(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ);

    BucketRange range = hour.expand(micros("2026-04-08T09:15:00Z"), micros("2026-04-08T11:00:00Z"));

    assertThat(instant(range.start())).isEqualTo(Instant.parse("2026-04-08T09:00:00Z"));
    assertThat(instant(range.end())).isEqualTo(Instant.parse("2026-04-08T12:00:00Z"));
  }

  @Test
  void shouldStartIsoWeeksOnMonday() {
    Bucketing week = Bucketing.utc(Granularity.WEEK, BucketColumnType.TIMESTAMP);

    // 2026-04-12 is a Sunday: its week began on Monday 2026-04-06.
    BucketRange range = week.bucketOf(micros("2026-04-12T23:59:59Z"));

    assertThat(instant(range.start())).isEqualTo(Instant.parse("2026-04-06T00:00:00Z"));
    assertThat(instant(range.end())).isEqualTo(Instant.parse("2026-04-13T00:00:00Z"));
  }

  @Test
  void shouldStartQuartersInJanuaryAprilJulyAndOctober() {
    Bucketing quarter = Bucketing.utc(Granularity.QUARTER, BucketColumnType.DATE);

    assertThat(LocalDate.ofEpochDay(quarter.floor(LocalDate.parse("2026-03-31").toEpochDay())))
        .isEqualTo(LocalDate.parse("2026-01-01"));
    assertThat(LocalDate.ofEpochDay(quarter.floor(LocalDate.parse("2026-05-17").toEpochDay())))
        .isEqualTo(LocalDate.parse("2026-04-01"));
    assertThat(LocalDate.ofEpochDay(quarter.next(LocalDate.parse("2026-10-01").toEpochDay())))
        .isEqualTo(LocalDate.parse("2027-01-01"));
  }

  @Test
  void shouldMakeParisDaysLast23And25HoursAcrossDst() {
    Bucketing day = Bucketing.of(Granularity.DAY, BucketColumnType.TIMESTAMPTZ, PARIS);

    BucketRange spring = day.bucketOf(micros("2026-03-29T12:00:00Z"));
    BucketRange autumn = day.bucketOf(micros("2026-10-25T12:00:00Z"));

    assertThat(Duration.between(instant(spring.start()), instant(spring.end())))
        .isEqualTo(Duration.ofHours(23));
    assertThat(instant(spring.start())).isEqualTo(Instant.parse("2026-03-28T23:00:00Z"));
    assertThat(Duration.between(instant(autumn.start()), instant(autumn.end())))
        .isEqualTo(Duration.ofHours(25));
  }

  @Test
  void shouldPutAParisTimestampJustAfterLocalMidnightIntoThatLocalDay() {
    Bucketing day = Bucketing.of(Granularity.DAY, BucketColumnType.TIMESTAMPTZ, PARIS);

    // 22:30 UTC on April 7th is 00:30 on April 8th in Paris (CEST, +02:00).
    long start = day.floor(micros("2026-04-07T22:30:00Z"));

    assertThat(instant(start)).isEqualTo(Instant.parse("2026-04-07T22:00:00Z"));
  }

  @Test
  void shouldKeepTheTwoRepeatedAutumnHoursApart() {
    Bucketing hour = Bucketing.of(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ, PARIS);

    // 02:30 local happens twice on 2026-10-25: at 00:30Z (CEST) and at 01:30Z (CET).
    long first = hour.floor(micros("2026-10-25T00:30:00Z"));
    long second = hour.floor(micros("2026-10-25T01:30:00Z"));

    assertThat(instant(first)).isEqualTo(Instant.parse("2026-10-25T00:00:00Z"));
    assertThat(instant(second)).isEqualTo(Instant.parse("2026-10-25T01:00:00Z"));
    assertThat(hour.next(first)).isEqualTo(second);
  }

  @Test
  void shouldCutHourBucketsAtAHalfHourDstTransition() {
    ZoneId lordHowe = ZoneId.of("Australia/Lord_Howe");
    Bucketing hour = Bucketing.of(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ, lordHowe);

    // On 2026-10-04 clocks go from 02:00 (+10:30) to 02:30 (+11:00), at 15:30Z on the 3rd.
    long before = hour.floor(micros("2026-10-03T15:20:00Z"));
    long after = hour.floor(micros("2026-10-03T15:40:00Z"));

    assertThat(instant(before)).isEqualTo(Instant.parse("2026-10-03T14:30:00Z"));
    assertThat(instant(hour.next(before))).isEqualTo(Instant.parse("2026-10-03T15:30:00Z"));
    assertThat(instant(after)).isEqualTo(Instant.parse("2026-10-03T15:30:00Z"));
    assertThat(instant(hour.next(after))).isEqualTo(Instant.parse("2026-10-03T16:00:00Z"));
  }

  @Test
  void shouldBucketNanosecondTimestamps() {
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMP_NS);
    long value =
        BucketColumnType.TIMESTAMP_NS.fromInstant(Instant.parse("2026-04-08T10:15:42.123456789Z"));

    long start = minute.floor(value);

    assertThat(BucketColumnType.TIMESTAMP_NS.toInstant(start))
        .isEqualTo(Instant.parse("2026-04-08T10:15:00Z"));
    assertThat(minute.next(start) - start).isEqualTo(60_000_000_000L);
  }

  @Test
  void shouldIgnoreTheZoneForDateColumns() {
    Bucketing utc = Bucketing.utc(Granularity.WEEK, BucketColumnType.DATE);
    Bucketing tokyo =
        Bucketing.of(Granularity.WEEK, BucketColumnType.DATE, ZoneId.of("Asia/Tokyo"));
    long day = LocalDate.parse("2026-04-09").toEpochDay();

    assertThat(tokyo.floor(day)).isEqualTo(utc.floor(day));
    assertThat(LocalDate.ofEpochDay(utc.floor(day))).isEqualTo(LocalDate.parse("2026-04-06"));
  }

  @Test
  void shouldRefuseMinuteBucketsOfADateColumn() {
    assertThatThrownBy(() -> Bucketing.utc(Granularity.MINUTE, BucketColumnType.DATE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("A date column has no minute buckets: use day or longer");
  }

  @Test
  void shouldTruncateValuesBeforeTheEpoch() {
    Bucketing hour = Bucketing.utc(Granularity.HOUR, BucketColumnType.TIMESTAMP);

    assertThat(instant(hour.floor(micros("1969-12-31T23:59:59.999999Z"))))
        .isEqualTo(Instant.parse("1969-12-31T23:00:00Z"));
  }

  @Test
  void shouldConvertStoredValuesToEpochMicros() {
    assertThat(BucketColumnType.DATE.toEpochMicros(1)).isEqualTo(86_400_000_000L);
    assertThat(BucketColumnType.TIMESTAMP_NS.toEpochMicros(-1)).isEqualTo(-1);
    assertThat(BucketColumnType.TIMESTAMPTZ.toEpochMicros(42)).isEqualTo(42);
  }

  @Test
  void shouldSaturateTheLastBucketOfAColumnAtTheLargestLong() {
    Bucketing year = Bucketing.utc(Granularity.YEAR, BucketColumnType.TIMESTAMP);

    BucketRange last = year.bucketOf(Long.MAX_VALUE);

    // Long.MAX_VALUE microseconds fall in the year 294247, whose end is not representable.
    assertThat(instant(last.start())).isEqualTo(Instant.parse("+294247-01-01T00:00:00Z"));
    assertThat(last.end()).isEqualTo(Long.MAX_VALUE);
    assertThat(last.contains(Long.MAX_VALUE)).isTrue();
    assertThat(year.next(Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldStartTheFirstBucketOfAColumnAtTheSmallestLong() {
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMP_NS);

    // Long.MIN_VALUE nanoseconds is 1677-09-21T00:12:43.145224192Z: its minute began earlier.
    assertThat(minute.floor(Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
    assertThat(BucketColumnType.TIMESTAMP_NS.toInstant(minute.next(Long.MIN_VALUE)))
        .isEqualTo(Instant.parse("1677-09-21T00:13:00Z"));
    // The target holds buckets in microseconds, which reach that minute's real start.
    assertThat(instant(minute.toTargetValue(Long.MIN_VALUE)))
        .isEqualTo(Instant.parse("1677-09-21T00:12:00Z"));
    assertThat(instant(minute.toTargetValue(minute.next(Long.MIN_VALUE))))
        .isEqualTo(Instant.parse("1677-09-21T00:13:00Z"));
  }

  @Test
  void shouldNotWrapTheLastMinuteOfNanosecondTimestamps() {
    Bucketing minute =
        Bucketing.of(
            Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ_NS, ZoneId.of("Asia/Kolkata"));

    BucketRange range = minute.expand(Long.MAX_VALUE - 1, Long.MAX_VALUE);

    assertThat(BucketColumnType.TIMESTAMPTZ_NS.toInstant(range.start()))
        .isEqualTo(Instant.parse("2262-04-11T23:47:00Z"));
    assertThat(range.end()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldBucketDatesAtTheEndsOfTheIntRange() {
    Bucketing month = Bucketing.utc(Granularity.MONTH, BucketColumnType.DATE);

    BucketRange last = month.bucketOf(Integer.MAX_VALUE);
    BucketRange first = month.bucketOf(Integer.MIN_VALUE);

    assertThat(LocalDate.ofEpochDay(last.start()).getDayOfMonth()).isEqualTo(1);
    assertThat(last.end()).isGreaterThan(Integer.MAX_VALUE);
    assertThat(LocalDate.ofEpochDay(first.start()).getDayOfMonth()).isEqualTo(1);
    assertThat(first.start()).isLessThanOrEqualTo(Integer.MIN_VALUE);
    // Far beyond the microsecond range: refresh events carry a saturated bound.
    assertThat(BucketColumnType.DATE.toEpochMicros(Integer.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
    assertThat(BucketColumnType.DATE.toEpochMicros(Integer.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void shouldCountAndSkipMinutesFromYearOneToYear9999WithoutWalkingThem() {
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ);
    long yearOne = micros("0001-01-01T00:00:00Z");
    long year9999 = micros("9999-12-31T23:59:00Z");

    long minutes = minute.countBuckets(yearOne, year9999);

    assertThat(minutes)
        .isEqualTo(Duration.between(instant(yearOne), instant(year9999)).toMinutes());
    assertThat(minute.advance(yearOne, minutes)).isEqualTo(year9999);
  }

  @Test
  void shouldCountParisHoursAcrossDstTransitions() {
    Bucketing hour = Bucketing.of(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ, PARIS);
    long start = micros("2026-01-01T00:00:00Z");
    long end = micros("2027-01-01T00:00:00Z");

    // A year of hours: the spring and autumn transitions fall on whole hours and cut none.
    assertThat(hour.countBuckets(start, end)).isEqualTo(365 * 24);
    assertThat(hour.advance(start, 365 * 24)).isEqualTo(end);
  }

  @Test
  void shouldSaturateInstantsBeyondTheColumnsRange() {
    BucketColumnType nanos = BucketColumnType.TIMESTAMP_NS;
    Instant smallest = Instant.parse("1677-09-21T00:12:43.145224192Z");

    assertThat(nanos.fromInstant(smallest)).isEqualTo(Long.MIN_VALUE);
    assertThat(nanos.fromInstant(smallest.plusNanos(1))).isEqualTo(Long.MIN_VALUE + 1);
    assertThat(nanos.fromInstant(smallest.minusNanos(1))).isEqualTo(Long.MIN_VALUE);
    assertThat(nanos.fromInstant(Instant.parse("2262-04-11T23:47:16.854775807Z")))
        .isEqualTo(Long.MAX_VALUE);
    assertThat(nanos.fromInstant(Instant.parse("2262-04-11T23:47:17Z"))).isEqualTo(Long.MAX_VALUE);
    assertThat(BucketColumnType.TIMESTAMP.fromInstant(Instant.MIN)).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void shouldCutDayAndLongerBucketsIntoHoursOfTheViewsZoneAndDateBucketsIntoDays() {
    // Given buckets of several granularities, column types and zones
    ZoneId kolkata = ZoneId.of("Asia/Kolkata");
    Bucketing weekly = Bucketing.of(Granularity.WEEK, BucketColumnType.TIMESTAMPTZ, kolkata);

    // When their sub-buckets are asked for
    Bucketing hours = weekly.subBuckets().orElseThrow();

    // Then a week of timestamps is cut into local hours, which nest in its buckets (a half-hour
    // offset included), weeks of dates into days, and hours, days of dates and strides not at all
    assertThat(hours.granularity()).isEqualTo(Granularity.HOUR);
    assertThat(hours.zone()).isEqualTo(kolkata);
    long start = weekly.floor(1_775_000_000_000_000L);
    assertThat(hours.floor(start)).isEqualTo(start);
    assertThat(hours.floor(weekly.next(start) - 1)).isGreaterThanOrEqualTo(start);
    assertThat(
            Bucketing.utc(Granularity.MONTH, BucketColumnType.DATE)
                .subBuckets()
                .orElseThrow()
                .granularity())
        .isEqualTo(Granularity.DAY);
    assertThat(Bucketing.utc(Granularity.DAY, BucketColumnType.DATE).subBuckets()).isEmpty();
    assertThat(Bucketing.utc(Granularity.HOUR, BucketColumnType.TIMESTAMP).subBuckets()).isEmpty();
    assertThat(
            Bucketing.utc(Granularity.bin(Duration.ofDays(2)), BucketColumnType.TIMESTAMP)
                .subBuckets())
        .isEmpty();
  }
}
