package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** A user's time range and the buckets of a view it covers ({@link Bucketing#covering}). */
class TimeRangeTest {

  private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  @Test
  void shouldCoverEveryBucketTheRangeOverlapsAndNoneBeyondItsExclusiveEnd() {
    // Given hour buckets and a range from inside one hour to the start of another
    Bucketing hour = Bucketing.utc(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ);
    TimeRange range = TimeRange.parse("2026-04-08T10:30:00Z", "2026-04-08T12:00:00Z", PARIS);

    // When
    BucketRange covered = hour.covering(range);

    // Then the 10:00 and 11:00 buckets, not the 12:00 one the range ends on
    assertThat(covered)
        .isEqualTo(new BucketRange(micros("2026-04-08T10:00:00Z"), micros("2026-04-08T12:00:00Z")));
  }

  @Test
  void shouldCoverTheOneBucketARangeInsideItOverlaps() {
    // Given
    Bucketing minute = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMP);
    TimeRange range = TimeRange.parse("2026-04-08T10:00:10Z", "2026-04-08T10:00:20Z", PARIS);

    // When
    BucketRange covered = minute.covering(range);

    // Then
    assertThat(covered)
        .isEqualTo(new BucketRange(micros("2026-04-08T10:00:00Z"), micros("2026-04-08T10:01:00Z")));
  }

  @Test
  void shouldReadADateAsTheStartOfThatDayInTheViewsZone() {
    // When
    TimeRange range = TimeRange.parse("2026-04-08", "2026-04-09", PARIS);

    // Then Paris is two hours ahead of UTC in April
    assertThat(range.from()).isEqualTo(Instant.parse("2026-04-07T22:00:00Z"));
    assertThat(range.to()).isEqualTo(Instant.parse("2026-04-08T22:00:00Z"));
  }

  @Test
  void shouldCoverTheLocalDaysOfAZonedViewAndOfADateColumn() {
    // Given a day in Paris, as dates say it
    TimeRange day = TimeRange.parse("2026-04-08", "2026-04-09", PARIS);

    // When
    BucketRange zoned =
        Bucketing.of(Granularity.DAY, BucketColumnType.TIMESTAMPTZ, PARIS).covering(day);
    BucketRange dates = Bucketing.of(Granularity.DAY, BucketColumnType.DATE, PARIS).covering(day);
    BucketRange utc = Bucketing.utc(Granularity.DAY, BucketColumnType.TIMESTAMPTZ).covering(day);

    // Then the Paris view recomputes that one local day; a UTC view the two UTC days it overlaps
    assertThat(zoned)
        .isEqualTo(new BucketRange(micros("2026-04-07T22:00:00Z"), micros("2026-04-08T22:00:00Z")));
    long april8 = LocalDate.of(2026, 4, 8).toEpochDay();
    assertThat(dates).isEqualTo(new BucketRange(april8, april8 + 1));
    assertThat(utc)
        .isEqualTo(new BucketRange(micros("2026-04-07T00:00:00Z"), micros("2026-04-09T00:00:00Z")));
  }

  @Test
  void shouldRefuseAnEmptyOrReversedRange() {
    assertThatThrownBy(
            () -> TimeRange.parse("2026-04-08T10:00:00Z", "2026-04-08T10:00:00Z", ZoneOffset.UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is empty: from must be before to");
    assertThatThrownBy(() -> TimeRange.parse("2026-04-09", "2026-04-08", ZoneOffset.UTC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is empty");
  }

  @Test
  void shouldSayWhichBoundIsMissingOrUnreadable() {
    assertThatThrownBy(() -> TimeRange.parse("2026-04-08", null, ZoneOffset.UTC))
        .hasMessage("'to' is required with a time range");
    assertThatThrownBy(() -> TimeRange.parse("yesterday", "2026-04-08", ZoneOffset.UTC))
        .hasMessageContaining("'from' is neither an ISO-8601 instant")
        .hasMessageContaining("'yesterday'");
  }
}
