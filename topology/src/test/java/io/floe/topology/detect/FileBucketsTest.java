package io.floe.topology.detect;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** DESIGN §3.2's rule "file bounds → bucket range", over real data files and their metrics. */
class FileBucketsTest {

  private static final Types.NestedField TS =
      Types.NestedField.optional(1, "ts", Types.TimestampType.withZone());
  private static final Types.NestedField TS_NS =
      Types.NestedField.optional(2, "ts_ns", Types.TimestampNanoType.withoutZone());
  private static final Types.NestedField DAY =
      Types.NestedField.optional(3, "day", Types.DateType.get());
  private static final Schema SCHEMA = new Schema(TS, TS_NS, DAY);

  private static final Bucketing MINUTES =
      Bucketing.of(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ, ZoneOffset.UTC);

  private int files;

  @Test
  void shouldCoverFromTheFloorOfTheMinimumToTheBucketAfterTheMaximum() {
    // Given a file whose timestamps run from 10:00:30 to 10:02:10, no nulls
    DataFile file = file(10, Map.of(TS, bounds(micros("10:00:30"), micros("10:02:10"))), 0L);

    // When its buckets are read through a minute bucketing
    FileBuckets buckets = FileBuckets.of(file, TS);

    // Then it covers the minutes 10:00, 10:01 and 10:02, and no null bucket
    assertThat(buckets.isKnown()).isTrue();
    assertThat(buckets.range(MINUTES))
        .isEqualTo(new BucketRange(micros("10:00:00"), micros("10:03:00")));
    assertThat(buckets.mayHoldNulls()).isFalse();
    assertThat(buckets.nullCount()).isZero();
  }

  @Test
  void shouldReadNanosecondBoundsAtTheirOwnPrecision() {
    // Given a timestamp_ns file whose values lie 1 ns either side of 11:00
    long eleven = Instant.parse("2026-04-06T11:00:00Z").getEpochSecond() * 1_000_000_000L;
    DataFile file = file(4, Map.of(TS_NS, bounds(eleven - 1, eleven + 1)), 1L);
    Bucketing hours = Bucketing.of(Granularity.HOUR, BucketColumnType.TIMESTAMP_NS, ZoneOffset.UTC);

    // When its buckets are read through an hour bucketing of the nanosecond column
    FileBuckets buckets = FileBuckets.of(file, TS_NS);

    // Then it covers the hours 10:00 and 11:00 in nanoseconds, and the null bucket
    long hour = 3_600_000_000_000L;
    assertThat(buckets.lower()).isEqualTo(eleven - 1);
    assertThat(buckets.upper()).isEqualTo(eleven + 1);
    assertThat(buckets.range(hours)).isEqualTo(new BucketRange(eleven - hour, eleven + hour));
    assertThat(buckets.mayHoldNulls()).isTrue();
  }

  @Test
  void shouldReadDateBoundsAsDays() {
    // Given a file of dates from 2026-04-06 to 2026-04-07
    int first = (int) LocalDate.parse("2026-04-06").toEpochDay();
    DataFile file = file(2, Map.of(DAY, new ByteBuffer[] {date(first), date(first + 1)}), 0L);
    Bucketing days = Bucketing.of(Granularity.DAY, BucketColumnType.DATE, ZoneOffset.UTC);

    // When its buckets are read by day, Then they are the two days
    assertThat(FileBuckets.of(file, DAY).range(days)).isEqualTo(new BucketRange(first, first + 2));
  }

  @Test
  void shouldNotKnowTheRangeOfAFileWithAMissingBound() {
    // Given a file with a lower bound and no upper bound for the column
    Map<Integer, ByteBuffer> lower = Map.of(TS.fieldId(), micros(micros("10:00:30")));
    DataFile file = file(10, lower, Map.of(), Map.of(TS.fieldId(), 0L));

    // When its buckets are read
    FileBuckets buckets = FileBuckets.of(file, TS);

    // Then its rows could be anywhere
    assertThat(buckets.isKnown()).isFalse();
    assertThat(buckets.hasBounds()).isFalse();
    assertThat(buckets.range(MINUTES)).isNull();
    assertThat(buckets.lower()).isNull();
  }

  @Test
  void shouldNotKnowTheRangeOfAFileWithABoundThatDoesNotDecode() {
    // Given a file whose bounds are cut short (three bytes of a timestamp's eight)
    ByteBuffer cut = ByteBuffer.wrap(new byte[] {1, 2, 3});
    DataFile file =
        file(10, Map.of(TS.fieldId(), cut), Map.of(TS.fieldId(), cut), Map.of(TS.fieldId(), 0L));

    // When its buckets are read, Then they are unknown
    assertThat(FileBuckets.of(file, TS).isKnown()).isFalse();
  }

  @Test
  void shouldKnowAFileWhoseRowsAreAllNullHoldsOnlyTheNullBucket() {
    // Given a file of three rows, all null in the column, so without bounds
    DataFile file = file(3, Map.of(), Map.of(), Map.of(TS.fieldId(), 3L));

    // When its buckets are read
    FileBuckets buckets = FileBuckets.of(file, TS);

    // Then it is known, has no range, and holds the null bucket
    assertThat(buckets.isKnown()).isTrue();
    assertThat(buckets.holdsOnlyNulls()).isTrue();
    assertThat(buckets.range(MINUTES)).isNull();
    assertThat(buckets.mayHoldNulls()).isTrue();
  }

  @Test
  void shouldAssumeNullsWhenTheNullCountIsNotRecorded() {
    // Given a file with bounds but no null count for the column
    ByteBuffer[] bounds = bounds(micros("10:00:00"), micros("10:00:00"));
    DataFile file =
        file(5, Map.of(TS.fieldId(), bounds[0]), Map.of(TS.fieldId(), bounds[1]), Map.of());

    // When its buckets are read, Then it may hold the null bucket
    FileBuckets buckets = FileBuckets.of(file, TS);
    assertThat(buckets.nullCount()).isNull();
    assertThat(buckets.mayHoldNulls()).isTrue();
    assertThat(buckets.holdsOnlyNulls()).isFalse();
  }

  @Test
  void shouldTakeTheValuesThemselvesAsBucketsOfATargetsBucketColumn() {
    // Given a target file whose bucket column holds the starts 10:00 and 10:05, and one at the end
    // of the column's range
    DataFile file = file(2, Map.of(TS, bounds(micros("10:00:00"), micros("10:05:00"))), 0L);
    DataFile last = file(1, Map.of(TS, bounds(Long.MAX_VALUE - 1, Long.MAX_VALUE)), 0L);

    // When their value ranges are read, Then each runs to just after its largest value, saturating
    assertThat(FileBuckets.of(file, TS).valueRange())
        .isEqualTo(new BucketRange(micros("10:00:00"), micros("10:05:00") + 1));
    assertThat(FileBuckets.of(last, TS).valueRange())
        .isEqualTo(new BucketRange(Long.MAX_VALUE - 1, Long.MAX_VALUE));
  }

  @Test
  void shouldUniteTheBucketsOfFilesAndTheNullBucketOfAnAllNullFile() {
    // Given a file of 10:00:30 to 10:01:10 without nulls, one of 10:05:00 alone, and an all-null
    // one
    DataFile early = file(4, Map.of(TS, bounds(micros("10:00:30"), micros("10:01:10"))), 0L);
    DataFile late = file(1, Map.of(TS, bounds(micros("10:05:00"), micros("10:05:00"))), 0L);
    DataFile nulls = file(3, Map.of(), Map.of(), Map.of(TS.fieldId(), 3L));

    // When they are added to a union of minute buckets
    FileBuckets.Union union = new FileBuckets.Union(TS, MINUTES);
    boolean added = union.add(early) && union.add(late) && union.add(nulls);

    // Then the union is the minutes 10:00, 10:01 and 10:05, and the null bucket
    assertThat(added).isTrue();
    assertThat(union.dirty())
        .isEqualTo(
            DirtyBuckets.of(
                BucketRangeSet.of(
                    List.of(
                        new BucketRange(micros("10:00:00"), micros("10:02:00")),
                        new BucketRange(micros("10:05:00"), micros("10:06:00")))),
                true));
  }

  @Test
  void shouldRefuseToUniteAFileWhoseBucketsAreUnknown() {
    // Given a file with a lower bound and no upper bound for the column, and nulls
    Map<Integer, ByteBuffer> lower = Map.of(TS.fieldId(), micros(micros("10:00:30")));
    DataFile file = file(10, lower, Map.of(), Map.of(TS.fieldId(), 2L));

    // When it is added to a union, Then it is refused and adds nothing
    FileBuckets.Union union = new FileBuckets.Union(TS, MINUTES);
    assertThat(union.add(file)).isFalse();
    assertThat(union.dirty()).isEqualTo(DirtyBuckets.none());
  }

  private static long micros(String time) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse("2026-04-06T" + time + "Z"));
  }

  private static ByteBuffer micros(long value) {
    return Conversions.toByteBuffer(TS.type(), value);
  }

  private static ByteBuffer date(int day) {
    return Conversions.toByteBuffer(Types.DateType.get(), day);
  }

  private static ByteBuffer[] bounds(long lower, long upper) {
    return new ByteBuffer[] {
      Conversions.toByteBuffer(Types.LongType.get(), lower),
      Conversions.toByteBuffer(Types.LongType.get(), upper)
    };
  }

  /** A file of {@code records} rows with both bounds of each column given, and its null count. */
  private DataFile file(long records, Map<Types.NestedField, ByteBuffer[]> bounds, Long nulls) {
    Map<Integer, ByteBuffer> lower = new HashMap<>();
    Map<Integer, ByteBuffer> upper = new HashMap<>();
    Map<Integer, Long> nullCounts = new HashMap<>();
    bounds.forEach(
        (field, pair) -> {
          lower.put(field.fieldId(), pair[0]);
          upper.put(field.fieldId(), pair[1]);
          nullCounts.put(field.fieldId(), nulls);
        });
    return file(records, lower, upper, nullCounts);
  }

  private DataFile file(
      long records,
      Map<Integer, ByteBuffer> lower,
      Map<Integer, ByteBuffer> upper,
      Map<Integer, Long> nulls) {
    Map<Integer, Long> values = new HashMap<>();
    for (Types.NestedField field : SCHEMA.columns()) {
      values.put(field.fieldId(), records);
    }
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath("/tmp/floe-file-buckets/" + (files++) + ".parquet")
        .withFormat("parquet")
        .withFileSizeInBytes(1024)
        .withRecordCount(records)
        .withMetrics(new Metrics(records, null, values, nulls, null, lower, upper))
        .build();
  }
}
