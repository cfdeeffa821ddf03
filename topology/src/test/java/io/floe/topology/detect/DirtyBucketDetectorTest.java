package io.floe.topology.detect;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.iceberg.GatedFileIO;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.RemoteStore;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.OutputFileFactory;
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
    return DirtyBucketDetector.detect(trades, snapshot, List.of(view), ManifestWork.LOCAL_READS)
        .get(view.view());
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

    Map<String, DirtyBuckets> dirty =
        DirtyBucketDetector.detect(trades, s, List.of(MINUTE, WEEK), ManifestWork.LOCAL_READS);

    assertThat(dirty).containsOnlyKeys("m", "w");
  }

  @Test
  void shouldFullyRefreshWhenTheBucketColumnIsGone() {
    trades.updateSchema().renameColumn("ts", "event_ts").commit();
    long s = lake.append(trades, List.of());

    assertThat(detect(s, MINUTE).reason()).isEqualTo("the source schema has no column ts any more");
  }

  /** A view of a table whose file reads are recorded: which manifests did detection open? */
  private static final class RecordingTable {
    final List<String> opened = java.util.Collections.synchronizedList(new ArrayList<>());
    final Table table;

    RecordingTable(Table table) {
      TableOperations ops = ((HasTableOperations) table).operations();
      FileIO io = ops.io();
      FileIO recording =
          new FileIO() {
            @Override
            public InputFile newInputFile(String path) {
              opened.add(path);
              return io.newInputFile(path);
            }

            @Override
            public InputFile newInputFile(String path, long length) {
              opened.add(path);
              return io.newInputFile(path, length);
            }

            @Override
            public OutputFile newOutputFile(String path) {
              return io.newOutputFile(path);
            }

            @Override
            public void deleteFile(String path) {
              io.deleteFile(path);
            }
          };
      this.table =
          new BaseTable(
              new TableOperations() {
                @Override
                public TableMetadata current() {
                  return ops.current();
                }

                @Override
                public TableMetadata refresh() {
                  return ops.refresh();
                }

                @Override
                public void commit(TableMetadata base, TableMetadata metadata) {
                  ops.commit(base, metadata);
                }

                @Override
                public FileIO io() {
                  return recording;
                }

                @Override
                public String metadataFileLocation(String fileName) {
                  return ops.metadataFileLocation(fileName);
                }

                @Override
                public LocationProvider locationProvider() {
                  return ops.locationProvider();
                }
              },
              table.name());
    }

    /** The data manifests of {@code snapshot} that were opened. */
    Set<String> dataManifestsOpened(Snapshot snapshot, FileIO io) {
      Set<String> data = new HashSet<>();
      for (ManifestFile manifest : snapshot.dataManifests(io)) {
        data.add(manifest.path());
      }
      Set<String> read = new HashSet<>(opened);
      read.retainAll(data);
      return read;
    }
  }

  /** Twelve days of trades, one append (so one data manifest) a day, four minutes each. */
  private void appendTwelveDays(Table table) {
    for (int day = 1; day <= 12; day++) {
      List<Record> rows = new ArrayList<>();
      for (int minute = 0; minute < 4; minute++) {
        String ts = String.format("2026-04-%02dT10:%02d:00Z", day, minute * 10);
        rows.add(lake.trade(day == 7 && minute == 3 ? "X" : "A", ts, 1.0, 1L, "B"));
      }
      lake.append(table, rows);
    }
  }

  /** The data manifest that lists the data files of {@code day}'s partition. */
  private static String manifestOfDay(Table table, Snapshot snapshot, int day) {
    int epochDay = (int) java.time.LocalDate.of(2026, 4, day).toEpochDay();
    for (ManifestFile manifest : snapshot.dataManifests(table.io())) {
      try (ManifestReader<DataFile> reader =
          ManifestFiles.read(manifest, table.io(), table.specs())) {
        for (DataFile file : reader) {
          if (file.partition().get(0, Integer.class) == epochDay) {
            return manifest.path();
          }
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    throw new AssertionError("no manifest lists day " + day);
  }

  @Test
  void shouldReadTheManifestsOfAnOverwriteAtOnceOnARemoteStore() throws Exception {
    // Given an overwrite, by another writer, of rows of two days' files
    long overwrite = overwriteOfTwoDays();
    DirtyBuckets expected = detect(overwrite, MINUTE);

    // When Floe detects its dirty buckets on a remote store that holds each manifest's request
    try (IcebergFixture floe = IcebergFixture.create(RemoteStore.gated(lake.catalogProperties()))) {
      Map<String, Integer> opens =
          readsOfARemoteDetection(floe.load("market", "trades"), overwrite, expected);

      // Then the manifests of its changes and its parent's rewritten ones were in flight at once
      // (one after the other on main), each read once, and the dirty buckets are those of the
      // walk on local files
      assertThat(opens).hasSizeGreaterThanOrEqualTo(3);
    }
  }

  @Test
  void shouldLeaveTheReadsToTheWalkWhenThePoolOfRemoteReadsRejectsThem() throws Exception {
    // Given an overwrite, whose manifests a detection on a remote store reads ahead, and a pool of
    // remote reads shut down (with the service)
    long overwrite = overwriteOfTwoDays();
    DirtyBuckets expected = detect(overwrite, MINUTE);
    ExecutorService remoteReads = ManifestWork.newRemoteReadsPool();
    remoteReads.shutdown();

    // When Floe detects its dirty buckets on a remote store
    try (IcebergFixture floe = IcebergFixture.create(RemoteStore.gated(lake.catalogProperties()))) {
      DirtyBuckets dirty =
          DirtyBucketDetector.detect(
                  RemoteStore.remote(floe.load("market", "trades")),
                  overwrite,
                  List.of(MINUTE),
                  ManifestWork.overlappingRemoteReadsOn(remoteReads, remoteReads))
              .get(MINUTE.view());

      // Then the walk read the manifests itself: the dirty buckets are those on local files
      assertThat(dirty).isEqualTo(expected);
    }
  }

  /** Three days appended, then the rows of the first two overwritten by one row of the third. */
  private long overwriteOfTwoDays() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(trades, List.of(lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B")));
    return lake.overwrite(
        trades, r -> true, List.of(lake.trade("C", "2026-04-10T09:00:00Z", 1.0, 1L, "B")));
  }

  @Test
  void shouldReadTheDataManifestsAnEqualityDeleteMayApplyToAtOnceOnARemoteStore() throws Exception {
    // Given an unpartitioned table of three appends and an equality delete, global, whose id
    // bounds admit every file
    Table flat =
        lake.createTable("market", "flat", IcebergFixture.TRADES, PartitionSpec.unpartitioned());
    lake.append(flat, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(flat, List.of(lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B")));
    lake.append(flat, List.of(lake.trade("C", "2026-04-10T12:00:00Z", 1.0, 1L, "B")));
    long delete = lake.deleteByEquality(flat, List.of(0L, 999L));
    flat.refresh();
    DirtyBuckets expected =
        DirtyBucketDetector.detect(flat, delete, List.of(MINUTE), ManifestWork.LOCAL_READS)
            .get(MINUTE.view());

    // When Floe detects its dirty buckets on a remote store that holds each manifest's request,
    // the delete manifest already read
    try (IcebergFixture floe = IcebergFixture.create(RemoteStore.gated(lake.catalogProperties()))) {
      Table remote = floe.load("market", "flat");
      for (ManifestFile manifest : remote.snapshot(delete).deleteManifests(remote.io())) {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, remote.io(), remote.specs())) {
          reader.forEach(file -> {});
        }
      }
      Map<String, Integer> opens = readsOfARemoteDetection(remote, delete, expected);

      // Then the three data manifests were in flight at once (one after the other on main), each
      // read once, and the dirty buckets are those of the walk on local files
      assertThat(opens).hasSize(3);
      assertThat(expected.ranges().ranges()).hasSize(3);
    }
  }

  /**
   * Detects the snapshot's dirty buckets of {@link #MINUTE} with {@code table} on a remote store,
   * every manifest request held until two are in flight at once ({@link
   * RemoteStore#holdingManifests}), and checks what reading ahead promises: requests in flight at
   * once, each manifest read once, the dirty buckets {@code expected} of the walk on local files.
   *
   * @return the manifests read, with the times each was opened
   */
  private static Map<String, Integer> readsOfARemoteDetection(
      Table table, long snapshot, DirtyBuckets expected) throws InterruptedException {
    ExecutorService remoteReads = ManifestWork.newRemoteReadsPool();
    ManifestWork manifests = ManifestWork.overlappingRemoteReadsOn(remoteReads, remoteReads);
    RemoteStore.Held<DirtyBuckets> detection;
    try {
      detection =
          RemoteStore.holdingManifests(
              () ->
                  DirtyBucketDetector.detect(
                          RemoteStore.remote(table), snapshot, List.of(MINUTE), manifests)
                      .get(MINUTE.view()));
    } finally {
      remoteReads.shutdownNow();
    }
    assertThat(detection.inFlight()).isGreaterThanOrEqualTo(2);
    assertThat(detection.result()).isEqualTo(expected);
    Map<String, Integer> opens = GatedFileIO.opensByFile();
    assertThat(opens).allSatisfy((manifest, count) -> assertThat(count).as(manifest).isOne());
    return opens;
  }

  @Test
  void shouldReadOnlyTheManifestsOfThePartitionAPositionDeleteAppliesTo() {
    appendTwelveDays(trades);
    long delete = lake.deleteByPosition(trades, r -> "X".equals(r.getField("symbol")));
    trades.refresh();
    RecordingTable recorded = new RecordingTable(trades);

    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                recorded.table, delete, List.of(MINUTE), ManifestWork.LOCAL_READS)
            .get(MINUTE.view());

    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-07T10:00:00Z", "2026-04-07T10:31:00Z"));
    Snapshot snapshot = trades.snapshot(delete);
    assertThat(snapshot.dataManifests(trades.io())).hasSize(12);
    assertThat(recorded.dataManifestsOpened(snapshot, trades.io()))
        .containsExactly(manifestOfDay(trades, snapshot, 7));
  }

  @Test
  void shouldReadOnlyTheManifestsOfThePartitionAnEqualityDeleteAppliesTo() {
    appendTwelveDays(trades);
    trades.refresh();
    // Id 27 is the fourth trade of day 7; the delete file is scoped to day 7's partition.
    long delete = equalityDeleteInPartitionOf(trades, 27L);
    RecordingTable recorded = new RecordingTable(trades);

    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                recorded.table, delete, List.of(MINUTE), ManifestWork.LOCAL_READS)
            .get(MINUTE.view());

    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-07T10:00:00Z", "2026-04-07T10:31:00Z"));
    Snapshot snapshot = trades.snapshot(delete);
    assertThat(recorded.dataManifestsOpened(snapshot, trades.io()))
        .containsExactly(manifestOfDay(trades, snapshot, 7));
  }

  @Test
  void shouldApplyAnEqualityDeleteOfAnUnpartitionedSpecToEveryPartition() {
    Table flat =
        lake.createTable(
            "market",
            "flat",
            IcebergFixture.TRADES,
            org.apache.iceberg.PartitionSpec.unpartitioned());
    lake.append(flat, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    lake.append(flat, List.of(lake.trade("B", "2026-04-09T12:00:00Z", 1.0, 1L, "B")));
    long first = lake.append(flat, List.of(lake.trade("C", "2026-04-10T12:00:00Z", 1.0, 1L, "B")));
    long idOfC =
        (Long)
            IcebergFixture.readAll(flat, first).stream()
                .filter(r -> "C".equals(r.getField("symbol")))
                .findFirst()
                .orElseThrow()
                .getField("id");

    long delete = lake.deleteByEquality(flat, List.of(idOfC, 999L));
    flat.refresh();

    // The delete's id bounds [idOfC, 999] leave out the files of A and B (ids below), as Iceberg.
    assertThat(
            DirtyBucketDetector.detect(flat, delete, List.of(MINUTE), ManifestWork.LOCAL_READS)
                .get("m")
                .ranges()
                .ranges())
        .containsExactly(minutes("2026-04-10T12:00:00Z", "2026-04-10T12:01:00Z"));
  }

  @Test
  void shouldReadOnlyTheManifestOfTheDataFileADeletionVectorNames() throws Exception {
    Table v3 =
        lake.catalog()
            .createTable(
                org.apache.iceberg.catalog.TableIdentifier.of("market", "trades_v3"),
                IcebergFixture.TRADES,
                org.apache.iceberg.PartitionSpec.builderFor(IcebergFixture.TRADES)
                    .day("ts")
                    .build(),
                java.util.Map.of("format-version", "3"));
    appendTwelveDays(v3);
    v3.refresh();
    DataFile dayEight = null;
    for (ManifestFile manifest : v3.currentSnapshot().dataManifests(v3.io())) {
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, v3.io(), v3.specs())) {
        for (DataFile file : reader) {
          if (file.partition().get(0, Integer.class)
              == (int) java.time.LocalDate.of(2026, 4, 8).toEpochDay()) {
            dayEight = file.copy();
          }
        }
      }
    }
    assertThat(dayEight).isNotNull();
    OutputFileFactory files =
        OutputFileFactory.builderFor(v3, 1, 1).format(org.apache.iceberg.FileFormat.PUFFIN).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> null);
    writer.delete(dayEight.location(), 1, v3.spec(), dayEight.partition());
    writer.close();
    RowDelta rowDelta = v3.newRowDelta();
    writer.result().deleteFiles().forEach(rowDelta::addDeletes);
    rowDelta.commit();
    long delete = v3.currentSnapshot().snapshotId();
    RecordingTable recorded = new RecordingTable(v3);

    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                recorded.table, delete, List.of(MINUTE), ManifestWork.LOCAL_READS)
            .get(MINUTE.view());

    assertThat(dirty.ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:00:00Z", "2026-04-08T10:31:00Z"));
    Snapshot snapshot = v3.snapshot(delete);
    assertThat(recorded.dataManifestsOpened(snapshot, v3.io()))
        .containsExactly(manifestOfDay(v3, snapshot, 8));
  }

  @Test
  void shouldNotBringBackRowsOfDataFilesNewerThanARemovedEqualityDelete() {
    lake.append(trades, List.of(lake.trade("A", "2026-04-08T10:00:00Z", 1.0, 1L, "B")));
    long deleted = lake.deleteByEquality(trades, List.of(1L));
    DeleteFile equality = trades.snapshot(deleted).addedDeleteFiles(trades.io()).iterator().next();
    // Appended after the delete into the same partition: the delete never applied to it.
    lake.append(trades, List.of(lake.trade("B", "2026-04-08T11:00:00Z", 1.0, 1L, "B")));
    trades.newRowDelta().removeDeletes(equality).commit();
    trades.refresh();
    long restored = trades.currentSnapshot().snapshotId();

    assertThat(detect(restored, MINUTE).ranges().ranges())
        .containsExactly(minutes("2026-04-08T10:00:00Z", "2026-04-08T10:01:00Z"));
  }

  /**
   * One equality delete file of the ids, in the partition of the row with the first id, as a row
   * delta: the writes of a CDC sink that knows where a key lives.
   */
  private long equalityDeleteInPartitionOf(Table table, long id) {
    Record row =
        IcebergFixture.readAll(table, table.currentSnapshot().snapshotId()).stream()
            .filter(r -> r.getField("id").equals(id))
            .findFirst()
            .orElseThrow();
    Schema idSchema = table.schema().select("id");
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(table)
            .equalityFieldIds(new int[] {table.schema().findField("id").fieldId()})
            .equalityDeleteRowSchema(idSchema)
            .build();
    PartitionKey partition = new PartitionKey(table.spec(), table.schema());
    partition.partition(new InternalRecordWrapper(table.schema().asStruct()).wrap(row));
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 2)
            .format(org.apache.iceberg.FileFormat.PARQUET)
            .build();
    EqualityDeleteWriter<Record> writer =
        factory.newEqualityDeleteWriter(
            files.newOutputFile(table.spec(), partition), table.spec(), partition);
    try (writer) {
      GenericRecord deleted = GenericRecord.create(idSchema);
      deleted.setField("id", id);
      writer.write(deleted);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    table.newRowDelta().addDeletes(writer.toDeleteFile()).commit();
    return table.currentSnapshot().snapshotId();
  }
}
