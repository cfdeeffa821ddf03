package io.floe.topology.detect;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.testing.IcebergFixture;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Dirty buckets from the statistics of real snapshots of a real table. */
class DirtyBucketDetectorTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;

  private static final BucketedView MINUTE =
      new BucketedView("m", "ts", Granularity.MINUTE, ZoneId.of("UTC"));
  private static final BucketedView WEEK =
      new BucketedView("w", "ts", Granularity.WEEK, ZoneId.of("UTC"));

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  private static BucketRange minutes(String from, String to) {
    return new BucketRange(micros(from), micros(to));
  }

  private DirtyBuckets detect(long snapshot, BucketedView view) {
    trades.refresh();
    return DirtyBucketDetector.detect(trades, snapshot, List.of(view)).get(view.view());
  }

  @Test
  void shouldDirtyTheBucketsOfAnAppendedFileFromItsBounds() {
    long s =
        lake.append(
            trades,
            List.of(
                lake.trade("A", "2026-04-08T10:00:15Z", 1.0, 1L, "B"),
                lake.trade("A", "2026-04-08T10:02:00Z", 1.0, 1L, "B")));

    DirtyBuckets dirty = detect(s, MINUTE);

    // [floor(min), floor(max) + 1 bucket): a max exactly on a boundary opens the next bucket.
    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:00:00Z", "2026-04-08T10:03:00Z"));
    assertThat(dirty.nullBucket()).isFalse();
    assertThat(dirty.full()).isFalse();
  }

  @Test
  void shouldKeepALateAndAFreshFileApart() {
    long s =
        lake.append(
            trades,
            List.of(
                lake.trade("A", "2026-04-01T08:00:10Z", 1.0, 1L, "B"),
                lake.trade("A", "2026-04-08T10:00:15Z", 1.0, 1L, "B")));

    DirtyBuckets dirty = detect(s, MINUTE);

    assertThat(dirty.ranges().ranges())
        .containsExactly(
            minutes("2026-04-01T08:00:00Z", "2026-04-01T08:01:00Z"),
            minutes("2026-04-08T10:00:00Z", "2026-04-08T10:01:00Z"));
  }

  @Test
  void shouldDirtyTheWholeIsoWeekOfADailyFile() {
    long s = lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));

    assertThat(detect(s, WEEK).ranges().ranges())
        .containsExactly(minutes("2026-04-06T00:00:00Z", "2026-04-13T00:00:00Z"));
  }

  @Test
  void shouldDirtyNothingForACompaction() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:05:00Z", 1.0, 1L, "B")));
    long compaction = lake.compact(trades);

    DirtyBuckets dirty = detect(compaction, MINUTE);

    assertThat(dirty.isEmpty()).isTrue();
  }

  @Test
  void shouldDirtyTheBucketsARowLeftAndTheBucketsItMovedTo() {
    lake.append(
        trades,
        List.of(
            lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B"),
            lake.trade("B", "2026-04-08T10:30:00Z", 1.0, 1L, "B")));
    long overwrite =
        lake.overwrite(
            trades,
            r -> "B".equals(r.getField("symbol")),
            List.of(lake.trade("B", "2026-04-08T11:45:00Z", 1.0, 1L, "B")));

    DirtyBuckets dirty = detect(overwrite, MINUTE);

    // The removed file held 10:00 and 10:30; the new file holds the kept 10:00 row and the moved
    // row at 11:45. Bounds are per file, so the new file dirties 10:00 to 11:45.
    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:00:00Z", "2026-04-08T11:46:00Z"));
  }

  @Test
  void shouldDirtyTheBucketsOfDataFilesRemovedByADelete() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(trades, List.of(lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B")));
    long delete = lake.deleteFiles(trades, r -> "B".equals(r.getField("symbol")));

    assertThat(detect(delete, MINUTE).ranges().ranges())
        .containsExactly(minutes("2026-04-09T12:00:00Z", "2026-04-09T12:01:00Z"));
  }

  @Test
  void shouldDirtyTheFilesPositionDeletesApplyTo() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(
        trades,
        List.of(
            lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B"),
            lake.trade("C", "2026-04-09T12:10:00Z", 1.0, 1L, "B")));
    long delete = lake.deleteByPosition(trades, r -> "C".equals(r.getField("symbol")));

    assertThat(detect(delete, MINUTE).ranges().ranges())
        .containsExactly(minutes("2026-04-09T12:00:00Z", "2026-04-09T12:11:00Z"));
  }

  @Test
  void shouldDirtyTheFilesAnEqualityDeleteMayApplyTo() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(
        trades,
        List.of(
            lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B"),
            lake.trade("C", "2026-04-09T14:00:00Z", 1.0, 1L, "B")));
    long delete = lake.deleteByEquality(trades, List.of(2L));

    // Equality deletes carry no bounds on ts: every data file they may apply to is dirty. Iceberg
    // matches them by partition and by the bounds of the equality column (id 2 is not in the
    // first file, whose ids are [1, 1]).
    assertThat(detect(delete, MINUTE).ranges().ranges())
        .containsExactly(minutes("2026-04-09T12:00:00Z", "2026-04-09T14:01:00Z"));
  }

  @Test
  void shouldDirtyTheNullBucketWhenAFileHasNullsInTheBucketColumn() {
    long s =
        lake.append(
            trades,
            List.of(
                lake.trade("A", null, 1.0, 1L, "B"),
                lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));

    DirtyBuckets dirty = detect(s, MINUTE);

    assertThat(dirty.nullBucket()).isTrue();
    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:00:00Z", "2026-04-08T10:01:00Z"));
  }

  @Test
  void shouldFallBackToAFullRefreshWhenBoundsAreMissing() {
    trades.updateProperties().set("write.metadata.metrics.default", "none").commit();
    long s = lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));

    DirtyBuckets dirty = detect(s, MINUTE);

    assertThat(dirty.full()).isTrue();
    assertThat(dirty.reason()).contains("has no bounds for bucket column ts");
  }

  @Test
  void shouldDetectForEveryViewOfTheTableAtOnce() {
    long s = lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));

    Map<String, DirtyBuckets> dirty = DirtyBucketDetector.detect(trades, s, List.of(MINUTE, WEEK));

    assertThat(dirty).containsOnlyKeys("m", "w");
  }

  @Test
  void shouldFullyRefreshWhenTheBucketColumnIsGone() {
    trades.updateSchema().renameColumn("ts", "event_ts").commit();
    long s = lake.append(trades, List.of());

    assertThat(detect(s, MINUTE).reason()).isEqualTo("the source schema has no column ts any more");
  }
}
