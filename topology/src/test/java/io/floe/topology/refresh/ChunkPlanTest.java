package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.SourceColumns;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Chunk plans from file extents alone: sized by rows, cut only where data is, deterministic. */
class ChunkPlanTest {

  private static final Bucketing MINUTE =
      Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ);
  private static final DirtyBuckets FULL = DirtyBuckets.all("first refresh of the view");
  private static final OptionalInt NO_CAP = OptionalInt.empty();
  private static final SourceColumns READS = SourceColumns.parse("q=5:long ts=3:timestamptz");

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  private static BucketRange minutes(String from, String to) {
    return new BucketRange(micros(from), micros(to));
  }

  private static DataExtent.FileRange file(String from, String to, long rows) {
    return new DataExtent.FileRange(minutes(from, to), rows);
  }

  private static DataExtent extent(DataExtent.FileRange... files) {
    return DataExtent.of(List.of(files), 0);
  }

  private static final DataExtent.FileRange YEAR_ONE =
      file("0001-01-01T00:00:00Z", "0001-01-01T00:01:00Z", 1);
  private static final DataExtent.FileRange YEAR_9999 =
      file("9999-12-31T23:59:00Z", "+10000-01-01T00:00:00Z", 1);
  private static final DataExtent.FileRange TODAY =
      file("2026-04-08T10:00:00Z", "2026-04-08T10:30:00Z", 300);

  @Test
  @Timeout(5)
  void shouldCutOneChunkOverOutliersInYearOneAnd9999() {
    ChunkPlan plan =
        ChunkPlan.of(
            FULL, MINUTE, extent(YEAR_ONE, TODAY, YEAR_9999), ChunkPlan.DEFAULT_CHUNK_ROWS, NO_CAP);

    assertThat(plan.chunks()).hasSize(1);
    ChunkPlan.Chunk chunk = plan.chunks().get(0);
    // The chunk covers everything, so that stale target rows anywhere go, and counts 32 buckets.
    assertThat(chunk.ranges().ranges())
        .containsExactly(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE));
    assertThat(chunk.nullBucket()).isTrue();
    assertThat(chunk.buckets()).isEqualTo(32);
    assertThat(chunk.rows()).isEqualTo(302);
  }

  @Test
  @Timeout(5)
  void shouldCapBucketsHoldingDataNotTheYearsBetweenThem() {
    ChunkPlan plan =
        ChunkPlan.of(
            FULL,
            MINUTE,
            extent(YEAR_ONE, TODAY, YEAR_9999),
            ChunkPlan.DEFAULT_CHUNK_ROWS,
            OptionalInt.of(7));

    // 1 + 30 + 1 buckets hold data: 7, 7, 7, 7 and 4.
    assertThat(plan.chunks())
        .extracting(ChunkPlan.Chunk::buckets)
        .containsExactly(7L, 7L, 7L, 7L, 4L);
    assertThat(plan.chunks().get(0).ranges().ranges())
        .containsExactly(new BucketRange(Long.MIN_VALUE, micros("2026-04-08T10:06:00Z")));
    assertThat(plan.chunks().get(4).ranges().ranges())
        .containsExactly(new BucketRange(micros("2026-04-08T10:27:00Z"), Long.MAX_VALUE));
    assertCoversEverythingOnce(plan);
  }

  @Test
  void shouldSizeChunksByRowsAndSplitAFileOnABucketBoundary() {
    // 1,000 rows over 100 minutes: ten rows a minute.
    DataExtent extent = extent(file("2026-04-08T10:00:00Z", "2026-04-08T11:40:00Z", 1000));

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent, 250, NO_CAP);

    assertThat(plan.chunks())
        .extracting(ChunkPlan.Chunk::rows)
        .containsExactly(250L, 250L, 250L, 250L);
    assertThat(plan.chunks())
        .extracting(ChunkPlan.Chunk::buckets)
        .containsExactly(25L, 25L, 25L, 25L);
    assertThat(plan.chunks().get(1).ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:25:00Z", "2026-04-08T10:50:00Z"));
    assertCoversEverythingOnce(plan);
  }

  @Test
  void shouldAddUpTheRowsOfOverlappingFiles() {
    // A late file overlapping the first half of a day's file doubles the rows there.
    DataExtent extent =
        extent(
            file("2026-04-08T10:00:00Z", "2026-04-08T10:40:00Z", 400),
            file("2026-04-08T10:00:00Z", "2026-04-08T10:20:00Z", 200));

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent, 200, NO_CAP);

    // 20 rows a minute for 20 minutes, then 10: chunks of 10, 10 and 20 minutes.
    assertThat(plan.chunks()).extracting(ChunkPlan.Chunk::buckets).containsExactly(10L, 10L, 20L);
    assertThat(plan.chunks()).extracting(ChunkPlan.Chunk::rows).containsExactly(200L, 200L, 200L);
  }

  @Test
  void shouldNeverCutAChunkOverARangeWithoutData() {
    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent(YEAR_ONE, TODAY, YEAR_9999), 1, NO_CAP);

    // One row a chunk: every chunk holds a bucket with data, the gaps ride along.
    assertThat(plan.chunks()).hasSize(32);
    assertThat(plan.chunks()).allSatisfy(chunk -> assertThat(chunk.buckets()).isEqualTo(1));
    assertThat(plan.chunks().get(0).ranges().ranges())
        .containsExactly(new BucketRange(Long.MIN_VALUE, micros("2026-04-08T10:00:00Z")));
    assertThat(plan.chunks().get(31).ranges().ranges())
        .containsExactly(new BucketRange(micros("9999-12-31T23:59:00Z"), Long.MAX_VALUE));
    assertCoversEverythingOnce(plan);
  }

  @Test
  void shouldGiveABucketLargerThanAChunkAChunkOfItsOwn() {
    DataExtent extent = extent(file("2026-04-08T10:00:00Z", "2026-04-08T10:01:00Z", 5000));

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent, 100, NO_CAP);

    assertThat(plan.chunks()).hasSize(1);
    assertThat(plan.chunks().get(0).rows()).isEqualTo(5000);
  }

  @Test
  void shouldPutTheNullBucketInTheLastChunkOrAfterItWhenItWouldOverfillIt() {
    DataExtent fewNulls = DataExtent.of(List.of(TODAY), 10);
    DataExtent manyNulls = DataExtent.of(List.of(TODAY), 1000);

    ChunkPlan few = ChunkPlan.of(FULL, MINUTE, fewNulls, 1000, NO_CAP);
    ChunkPlan many = ChunkPlan.of(FULL, MINUTE, manyNulls, 1000, NO_CAP);

    assertThat(few.chunks()).hasSize(1);
    assertThat(few.chunks().get(0).nullBucket()).isTrue();
    assertThat(many.chunks()).hasSize(2);
    assertThat(many.chunks().get(0).nullBucket()).isFalse();
    assertThat(many.chunks().get(1).nullBucket()).isTrue();
    assertThat(many.chunks().get(1).ranges().isEmpty()).isTrue();
    assertThat(many.chunks().get(1).rows()).isEqualTo(1000);
  }

  @Test
  void shouldCoverEverythingInOneChunkWhenTheExtentIsUnknown() {
    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, DataExtent.unknown(), 1, OptionalInt.of(1));

    assertThat(plan.chunks()).hasSize(1);
    assertThat(plan.chunks().get(0).ranges().ranges())
        .containsExactly(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE));
    assertThat(plan.chunks().get(0).nullBucket()).isTrue();
  }

  @Test
  void shouldCoverAnEmptySourceWithOneChunk() {
    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent(), 1, OptionalInt.of(1));

    assertThat(plan.chunks()).hasSize(1);
    assertThat(plan.chunks().get(0).ranges().ranges())
        .containsExactly(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE));
    assertThat(plan.chunks().get(0).buckets()).isZero();
  }

  @Test
  void shouldChunkDirtyRangesByTheRowsOfTheFilesOverlappingThem() {
    // Dirty: a deleted minute with no rows left, and two hours of a day's file.
    BucketRange emptied = minutes("2026-04-07T08:00:00Z", "2026-04-07T08:01:00Z");
    BucketRange hours = minutes("2026-04-08T10:00:00Z", "2026-04-08T12:00:00Z");
    DirtyBuckets dirty = DirtyBuckets.of(BucketRangeSet.of(emptied, hours), true);
    // 1,440 rows a day: one a minute.
    DataExtent extent =
        DataExtent.of(List.of(file("2026-04-08T00:00:00Z", "2026-04-09T00:00:00Z", 1440)), 3);

    ChunkPlan plan = ChunkPlan.of(dirty, MINUTE, extent, 62, NO_CAP);

    // The emptied minute rides with the first 62 minutes; the null bucket with the rest.
    assertThat(plan.chunks()).hasSize(2);
    assertThat(plan.chunks().get(0).ranges().ranges())
        .containsExactly(emptied, minutes("2026-04-08T10:00:00Z", "2026-04-08T11:02:00Z"));
    assertThat(plan.chunks().get(0).buckets()).isEqualTo(63);
    assertThat(plan.chunks().get(0).rows()).isEqualTo(62);
    assertThat(plan.chunks().get(0).nullBucket()).isFalse();
    assertThat(plan.chunks().get(1).ranges().ranges())
        .containsExactly(minutes("2026-04-08T11:02:00Z", "2026-04-08T12:00:00Z"));
    assertThat(plan.chunks().get(1).nullBucket()).isTrue();
    assertThat(plan.chunks().get(1).rows()).isEqualTo(61);
  }

  @Test
  void shouldKeepDirtyRangesWithoutDataInOneChunk() {
    DirtyBuckets dirty =
        DirtyBuckets.of(
            BucketRangeSet.of(minutes("2026-04-07T08:00:00Z", "2026-04-07T09:00:00Z")), false);

    ChunkPlan plan = ChunkPlan.of(dirty, MINUTE, extent(), 1, OptionalInt.of(1));

    assertThat(plan.chunks()).hasSize(1);
    assertThat(plan.chunks().get(0).ranges()).isEqualTo(dirty.ranges());
    assertThat(plan.chunks().get(0).buckets()).isEqualTo(60);
  }

  @Test
  @Timeout(5)
  void shouldCountTheBucketsOfHugeSparseFilesArithmetically() {
    // Two files spanning year 1 to 9999 each (an outlier in each): billions of minutes.
    DataExtent extent =
        extent(
            file("0001-01-01T00:00:00Z", "9999-12-31T23:59:00Z", 3_000_000),
            file("0001-01-01T00:00:00Z", "9999-12-31T23:59:00Z", 3_000_000));

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent, ChunkPlan.DEFAULT_CHUNK_ROWS, NO_CAP);

    long minutes =
        Duration.between(
                Instant.parse("0001-01-01T00:00:00Z"), Instant.parse("9999-12-31T23:59:00Z"))
            .toMinutes();
    assertThat(plan.chunks()).hasSize(3);
    assertThat(plan.buckets()).isEqualTo(minutes);
    assertThat(plan.chunks())
        .allSatisfy(c -> assertThat(c.rows()).isBetween(1_999_000L, 2_001_000L));
  }

  @Test
  void shouldPlanTheSameChunksWithTheSameFingerprintWhateverTheOrderOfFiles() {
    List<DataExtent.FileRange> files = new ArrayList<>();
    for (int day = 1; day <= 28; day++) {
      String date = String.format("2026-02-%02d", day);
      files.add(file(date + "T00:00:00Z", date + "T23:59:00Z", 1000 + day));
      files.add(file(date + "T12:00:00Z", date + "T13:00:00Z", 77));
    }
    List<DataExtent.FileRange> reversed = new ArrayList<>(files);
    java.util.Collections.reverse(reversed);

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, DataExtent.of(files, 5), 3000, NO_CAP);
    ChunkPlan again = ChunkPlan.of(FULL, MINUTE, DataExtent.of(reversed, 5), 3000, NO_CAP);

    assertThat(again).isEqualTo(plan);
    assertThat(plan.chunks()).hasSizeGreaterThan(5);
    assertCoversEverythingOnce(plan);
  }

  @Test
  void shouldKeepTheFingerprintStableAndChangeItWithThePlanOrItsSettings() {
    DataExtent extent = extent(YEAR_ONE, TODAY, YEAR_9999);

    ChunkPlan plan = ChunkPlan.of(FULL, MINUTE, extent, 100, NO_CAP);
    ChunkPlan capped = ChunkPlan.of(FULL, MINUTE, extent, 100, OptionalInt.of(1000));
    ChunkPlan smaller = ChunkPlan.of(FULL, MINUTE, extent, 50, NO_CAP);
    ChunkPlan hourly =
        ChunkPlan.of(
            FULL,
            Bucketing.utc(Granularity.HOUR, BucketColumnType.TIMESTAMPTZ),
            extent,
            100,
            NO_CAP);

    // Recorded in the target by a chunked refresh in progress: it must not change across
    // releases for the same plan, or resumed refreshes would start over.
    assertThat(plan.fingerprint()).isEqualTo("952b1366b91d295a");
    assertThat(capped.chunks()).isEqualTo(plan.chunks());
    assertThat(capped.fingerprint()).isNotEqualTo(plan.fingerprint());
    assertThat(smaller.fingerprint()).isNotEqualTo(plan.fingerprint());
    assertThat(hourly.fingerprint()).isNotEqualTo(plan.fingerprint());
    // What a chunked refresh records: the plan and how its chunks are computed.
    assertThat(plan.fingerprint(RefreshOutcome.Mode.FULL, null, READS))
        .isEqualTo(plan.fingerprint(RefreshOutcome.Mode.FULL, null, READS))
        .isNotEqualTo(plan.fingerprint(RefreshOutcome.Mode.INCREMENTAL, null, READS))
        .isNotEqualTo(capped.fingerprint(RefreshOutcome.Mode.FULL, null, READS))
        .doesNotContain(";");
    assertThat(plan.fingerprint(RefreshOutcome.Mode.DELTA, 41L, READS))
        .isNotEqualTo(plan.fingerprint(RefreshOutcome.Mode.DELTA, 42L, READS));
    // Chunks computed before a schema change are not resumed after it.
    assertThat(plan.fingerprint(RefreshOutcome.Mode.FULL, null, READS))
        .isNotEqualTo(
            plan.fingerprint(
                RefreshOutcome.Mode.FULL, null, SourceColumns.parse("q=7:long ts=3:timestamptz")));
  }

  @Test
  void shouldRefuseChunksOfNoRowsOrNoBuckets() {
    assertThatThrownBy(() -> ChunkPlan.of(FULL, MINUTE, extent(), 0, NO_CAP))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Chunks must hold at least one row, not 0");
    assertThatThrownBy(() -> ChunkPlan.of(FULL, MINUTE, extent(), 1, OptionalInt.of(0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Chunks must hold at least one bucket, not 0");
  }

  /** The chunks of a full plan partition the whole value range, in order. */
  private static void assertCoversEverythingOnce(ChunkPlan plan) {
    long next = Long.MIN_VALUE;
    for (ChunkPlan.Chunk chunk : plan.chunks()) {
      if (chunk.ranges().isEmpty()) {
        continue;
      }
      assertThat(chunk.ranges().ranges()).hasSize(1);
      assertThat(chunk.ranges().ranges().get(0).start()).isEqualTo(next);
      next = chunk.ranges().ranges().get(0).end();
    }
    assertThat(next).isEqualTo(Long.MAX_VALUE);
    assertThat(plan.chunks().get(plan.chunks().size() - 1).nullBucket()).isTrue();
  }
}
