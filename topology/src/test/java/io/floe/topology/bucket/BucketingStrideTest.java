package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

/** Fixed-stride buckets: {@code date_bin} and Trino's n-minute idiom. */
class BucketingStrideTest {

  private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
  private static final ZoneId KATHMANDU = ZoneId.of("Asia/Kathmandu");

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  private static Instant instant(long micros) {
    return BucketColumnType.TIMESTAMPTZ.toInstant(micros);
  }

  private static Bucketing bin(Duration stride) {
    return Bucketing.utc(Granularity.bin(stride), BucketColumnType.TIMESTAMPTZ);
  }

  private static Bucketing bin(Duration stride, String origin) {
    return Bucketing.utc(
        Granularity.bin(stride, LocalDateTime.parse(origin)), BucketColumnType.TIMESTAMPTZ);
  }

  private static BucketRange bucketOf(Bucketing bucketing, String value) {
    return bucketing.bucketOf(micros(value));
  }

  private static void assertBucket(BucketRange range, String start, String end) {
    assertThat(instant(range.start())).isEqualTo(Instant.parse(start));
    assertThat(instant(range.end())).isEqualTo(Instant.parse(end));
  }

  @Test
  void shouldBinFiveMinutesFromTheEpoch() {
    Bucketing fiveMinutes = bin(Duration.ofMinutes(5));

    BucketRange bucket = bucketOf(fiveMinutes, "2026-04-08T10:17:42.123456Z");

    assertBucket(bucket, "2026-04-08T10:15:00Z", "2026-04-08T10:20:00Z");
  }

  @Test
  void shouldBinNinetyMinutesThatDivideADayFromTheEpoch() {
    Bucketing ninetyMinutes = bin(Duration.ofMinutes(90));

    BucketRange bucket = bucketOf(ninetyMinutes, "2026-04-08T10:17:42Z");

    assertBucket(bucket, "2026-04-08T09:00:00Z", "2026-04-08T10:30:00Z");
  }

  @Test
  void shouldBinSevenHoursThatDoNotDivideADayAcrossMidnight() {
    Bucketing sevenHours = bin(Duration.ofHours(7));

    // 2026-04-09 is day 20,552 of the epoch, 70,464 strides of 7 hours: only every seventh
    // midnight is a boundary, and the bucket before it starts at 17:00 the day before.
    BucketRange late = bucketOf(sevenHours, "2026-04-08T23:30:00Z");

    assertBucket(late, "2026-04-08T17:00:00Z", "2026-04-09T00:00:00Z");
    assertBucket(
        bucketOf(sevenHours, "2026-04-09T00:00:00Z"),
        "2026-04-09T00:00:00Z",
        "2026-04-09T07:00:00Z");
  }

  @Test
  void shouldFloorValuesBeforeTheEpochDownwards() {
    Bucketing sevenHours = bin(Duration.ofHours(7));

    BucketRange bucket = bucketOf(sevenHours, "1969-12-31T20:00:00Z");

    assertBucket(bucket, "1969-12-31T17:00:00Z", "1970-01-01T00:00:00Z");
  }

  @Test
  void shouldAlignBinsToTheOriginAfterIt() {
    Bucketing sixHours = bin(Duration.ofHours(6), "2024-01-01T03:00:00");

    assertBucket(
        bucketOf(sixHours, "2026-04-08T01:00:00Z"), "2026-04-07T21:00:00Z", "2026-04-08T03:00:00Z");
    assertBucket(
        bucketOf(sixHours, "2024-01-01T03:00:00Z"), "2024-01-01T03:00:00Z", "2024-01-01T09:00:00Z");
  }

  @Test
  void shouldFloorValuesBeforeTheOriginDownwards() {
    Bucketing sevenHours = bin(Duration.ofHours(7), "2024-01-01T03:00:00");

    // PostgreSQL: date_bin('7 hours', '2023-12-31 23:00', '2024-01-01 03:00') = '2023-12-31 20:00'.
    BucketRange bucket = bucketOf(sevenHours, "2023-12-31T23:00:00Z");

    assertBucket(bucket, "2023-12-31T20:00:00Z", "2024-01-01T03:00:00Z");
  }

  @Test
  void shouldAlignToAnOriginWithMicroseconds() {
    Bucketing fiveMinutes = bin(Duration.ofMinutes(5), "2026-01-01T00:02:30.000001");

    BucketRange bucket = bucketOf(fiveMinutes, "2026-04-08T10:17:30Z");

    assertBucket(bucket, "2026-04-08T10:12:30.000001Z", "2026-04-08T10:17:30.000001Z");
  }

  @Test
  void shouldExpandFileBoundsToWholeStridesOpeningTheNextOnABoundary() {
    Bucketing fifteenMinutes = bin(Duration.ofMinutes(15));

    BucketRange range =
        fifteenMinutes.expand(micros("2026-04-08T09:59:59Z"), micros("2026-04-08T10:30:00Z"));

    assertBucket(range, "2026-04-08T09:45:00Z", "2026-04-08T10:45:00Z");
  }

  @Test
  void shouldCountAndAdvanceStridesWithoutWalkingThem() {
    Bucketing fiveMinutes = bin(Duration.ofMinutes(5), "2026-01-01T00:02:00");
    long from = fiveMinutes.floor(micros("2026-04-08T00:02:00Z"));
    long to = fiveMinutes.floor(micros("2026-04-09T00:02:00Z"));

    assertThat(fiveMinutes.countBuckets(from, to)).isEqualTo(288);
    assertThat(fiveMinutes.advance(from, 288)).isEqualTo(to);
    assertThat(instant(fiveMinutes.advance(from, 1)))
        .isEqualTo(Instant.parse("2026-04-08T00:07:00Z"));
  }

  @Test
  void shouldBinOnAbsoluteTimeInAZoneReadingTheOriginThere() {
    // Midnight of 2024-01-01 in Paris is 23:00 UTC (CET); six-hour bins keep that alignment in
    // summer, when they start at 01:00, 07:00, ... Paris time (CEST): PostgreSQL's timestamptz.
    Bucketing sixHours =
        Bucketing.of(
            Granularity.bin(Duration.ofHours(6), LocalDateTime.parse("2024-01-01T00:00:00")),
            BucketColumnType.TIMESTAMPTZ,
            PARIS);

    BucketRange bucket = bucketOf(sixHours, "2026-07-01T06:00:00Z");

    assertBucket(bucket, "2026-07-01T05:00:00Z", "2026-07-01T11:00:00Z");
  }

  @Test
  void shouldBinFromTheUnixEpochWhateverTheZone() {
    Bucketing thirtyMinutes =
        Bucketing.of(
            Granularity.bin(Duration.ofMinutes(30)), BucketColumnType.TIMESTAMPTZ, KATHMANDU);

    // 16:05 in Kathmandu (+05:45): the bin of absolute time starts at 10:00 UTC (15:45 there).
    BucketRange bucket = bucketOf(thirtyMinutes, "2026-04-08T10:20:00Z");

    assertBucket(bucket, "2026-04-08T10:00:00Z", "2026-04-08T10:30:00Z");
  }

  @Test
  void shouldCutTheIdiomsStridesOnTheLocalClock() {
    Bucketing thirtyMinutes =
        Bucketing.of(
            Granularity.clockStride(Granularity.Unit.MINUTE, 30),
            BucketColumnType.TIMESTAMPTZ,
            KATHMANDU);

    // date_trunc('hour', ts) + (minute(ts) / 30) * INTERVAL '30' MINUTE at 16:05 local is 16:00.
    BucketRange bucket = bucketOf(thirtyMinutes, "2026-04-08T10:20:00Z");

    assertBucket(bucket, "2026-04-08T10:15:00Z", "2026-04-08T10:45:00Z");
  }

  @Test
  void shouldCutSixHourIdiomBucketsAtLocalMidnightAndAtTheDstTransition() {
    Bucketing sixHours =
        Bucketing.of(
            Granularity.clockStride(Granularity.Unit.HOUR, 6), BucketColumnType.TIMESTAMPTZ, PARIS);

    // 2026-03-29: Paris moves from 02:00 CET to 03:00 CEST at 01:00 UTC; a new offset starts a
    // new bucket, and the next one starts at 06:00 CEST.
    assertBucket(
        bucketOf(sixHours, "2026-03-29T00:30:00Z"), "2026-03-28T23:00:00Z", "2026-03-29T01:00:00Z");
    assertBucket(
        bucketOf(sixHours, "2026-03-29T02:00:00Z"), "2026-03-29T01:00:00Z", "2026-03-29T04:00:00Z");
  }

  @Test
  void shouldMatchTheEpochBinInUtcForTheIdiom() {
    Bucketing idiom =
        Bucketing.utc(
            Granularity.clockStride(Granularity.Unit.MINUTE, 15), BucketColumnType.TIMESTAMPTZ);
    Bucketing binned = bin(Duration.ofMinutes(15));

    long value = micros("2026-04-08T10:44:59.999999Z");

    assertThat(idiom.bucketOf(value)).isEqualTo(binned.bucketOf(value));
  }

  @Test
  void shouldBinNanosecondTimestampsAndKeepBucketStartsInMicros() {
    Bucketing fiveMinutes =
        Bucketing.utc(
            Granularity.bin(Duration.ofMinutes(5), LocalDateTime.parse("2026-01-01T00:01:00")),
            BucketColumnType.TIMESTAMP_NS);
    long nanos =
        BucketColumnType.TIMESTAMP_NS.fromInstant(Instant.parse("2026-04-08T10:05:59.999999999Z"));

    long start = fiveMinutes.floor(nanos);

    assertThat(BucketColumnType.TIMESTAMP_NS.toInstant(start))
        .isEqualTo(Instant.parse("2026-04-08T10:01:00Z"));
    assertThat(instant(fiveMinutes.toTargetValue(start)))
        .isEqualTo(Instant.parse("2026-04-08T10:01:00Z"));
  }

  @Test
  void shouldAlignToAnOriginBeyondTheNanosecondRange() {
    Bucketing sevenMinutes =
        Bucketing.utc(
            Granularity.bin(Duration.ofMinutes(7), LocalDateTime.parse("1000-01-01T00:00:00")),
            BucketColumnType.TIMESTAMP_NS);
    Bucketing sameInMicros =
        Bucketing.utc(
            Granularity.bin(Duration.ofMinutes(7), LocalDateTime.parse("1000-01-01T00:00:00")),
            BucketColumnType.TIMESTAMP);
    Instant value = Instant.parse("2026-04-08T10:17:42Z");

    long nanos = sevenMinutes.floor(BucketColumnType.TIMESTAMP_NS.fromInstant(value));
    long micros = sameInMicros.floor(BucketColumnType.TIMESTAMP.fromInstant(value));

    assertThat(BucketColumnType.TIMESTAMP_NS.toInstant(nanos))
        .isEqualTo(BucketColumnType.TIMESTAMP.toInstant(micros));
  }

  @Test
  void shouldDescribeUnitsAsBeforeAndStridesWithTheirOriginForChunkPlanFingerprints() {
    // Chunk plans fingerprint the bucketing: a unit's description must stay what it was, and two
    // strides that cut different buckets must differ.
    assertThat(Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ))
        .hasToString("date_trunc('minute') in Z on timestamptz");
    assertThat(bin(Duration.ofMinutes(5), "2024-01-01T00:02:00"))
        .hasToString(
            "date_bin(INTERVAL '5' MINUTE, value, TIMESTAMP '2024-01-01 00:02:00') in Z on"
                + " timestamptz");
    assertThat(bin(Duration.ofMinutes(5)).toString())
        .isNotEqualTo(bin(Duration.ofMinutes(5), "2024-01-01T00:02:00").toString())
        .isNotEqualTo(
            Bucketing.utc(
                    Granularity.clockStride(Granularity.Unit.MINUTE, 5),
                    BucketColumnType.TIMESTAMPTZ)
                .toString());
  }

  @Test
  void shouldRefuseStridesOfADateColumn() {
    assertThatThrownBy(
            () -> Bucketing.utc(Granularity.bin(Duration.ofDays(1)), BucketColumnType.DATE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("A date column has no buckets of 1 day");
  }

  @Test
  void shouldRefuseAnIdiomDivisorThatDoesNotDivideTheHour() {
    assertThatThrownBy(() -> Granularity.clockStride(Granularity.Unit.MINUTE, 7))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("7 does not divide the hour (60 minutes)")
        .hasMessageContaining("date_bin(INTERVAL '7' MINUTE, ts)");
  }

  @Test
  void shouldRefuseStridesThatAreNotWholeMinutes() {
    assertThatThrownBy(() -> Granularity.bin(Duration.ofSeconds(90)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole number of minutes");
  }
}
