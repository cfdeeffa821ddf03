package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TableWrites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scans and commits through ManifestWork, on either side of its manifest limit. */
class ManifestWorkTest {

  @TempDir Path dir;
  private IcebergFixture lake;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReturnFromAReadAheadBeforeItsReadsCompleteAndLetTheWalkJoinThem() throws Exception {
    // Given a snapshot of three manifests, on a remote store that holds every manifest request
    Table trades = lake.createTrades("market", "trades");
    for (String day : List.of("2026-04-08", "2026-04-09", "2026-04-10")) {
      lake.append(trades, List.of(lake.trade("A", day + "T10:00:00Z", 1.0, 1L, "B")));
    }
    ExecutorService remoteReads = ManifestWork.newRemoteReadsPool();
    try (IcebergFixture floe = IcebergFixture.create(RemoteStore.gated(lake.catalogProperties()))) {
      Table table = RemoteStore.remote(floe.load("market", "trades"));
      List<ManifestFile> manifests = table.currentSnapshot().allManifests(table.io());
      GatedFileIO.hold(OpenCountingFileIO::isManifest);
      Thread readingAhead =
          new Thread(
              () ->
                  ManifestWork.overlappingRemoteReadsOn(remoteReads, remoteReads)
                      .readAhead(table, () -> manifests));
      try {
        // When detection reads them ahead
        readingAhead.start();
        readingAhead.join(TimeUnit.SECONDS.toMillis(10));

        // Then it returned with its reads still held in flight (on main it waited for them, in a
        // pool that also runs whole chunks' readers)
        assertThat(readingAhead.isAlive()).isFalse();
        assertThat(GatedFileIO.awaitOpened()).isTrue();
      } finally {
        GatedFileIO.release();
        readingAhead.join(TimeUnit.SECONDS.toMillis(30));
      }

      // And the walk that reads them next joins the reads in flight: each is read once
      for (ManifestFile manifest : manifests) {
        try (ManifestReader<DataFile> reader =
            ManifestFiles.read(manifest, table.io(), table.specs())) {
          reader.forEach(file -> {});
        }
      }
      assertThat(GatedFileIO.opensByFile())
          .hasSize(3)
          .allSatisfy((manifest, opens) -> assertThat(opens).as(manifest).isOne());
    } finally {
      remoteReads.shutdownNow();
    }
  }

  @Test
  void shouldCommitAndPlanTheSameFilesOnTheCallingThreadAndInTheWorkerPool() {
    Table table = lake.createTrades("market", "trades");
    table.updateProperties().set(TableProperties.MANIFEST_MERGE_ENABLED, "false").commit();
    Random random = new Random(7);
    Set<String> appended = new HashSet<>();
    int appends = ManifestWork.CALLING_THREAD_MAX_MANIFESTS + 2;
    for (int i = 0; i < appends; i++) {
      List<DataFile> files =
          TableWrites.write(table, lake.randomTrades(random, 20, "2026-04-0" + (1 + i % 9), 8, 9));
      table.refresh();
      AppendFiles append =
          ManifestWork.LOCAL_READS.commit(table.newAppend(), table, table.currentSnapshot());
      files.forEach(append::appendFile);
      append.commit();
      files.forEach(file -> appended.add(file.location()));
      table.refresh();
      int manifests = table.currentSnapshot().allManifests(table.io()).size();
      assertThat(manifests).isEqualTo(i + 1);
      assertThat(ManifestWork.isLarge(table, table.currentSnapshot()))
          .as("%d manifests", manifests)
          .isEqualTo(manifests > ManifestWork.CALLING_THREAD_MAX_MANIFESTS);

      List<String> planned = new ArrayList<>();
      try (CloseableIterable<FileScanTask> tasks =
          ManifestWork.LOCAL_READS
              .scan(table.newScan(), table, table.currentSnapshot())
              .planFiles()) {
        tasks.forEach(task -> planned.add(task.file().location()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      assertThat(planned).containsExactlyInAnyOrderElementsOf(appended);
    }
    assertThat(ManifestWork.isLarge(table, null)).isFalse();
  }

  @Test
  void shouldDoTheManifestWorkOfLargeScansCommitsAndExpiriesOnTheWorkerPoolItIsGiven()
      throws Exception {
    // Given a table of more manifests than the calling thread reads, and a worker pool of the
    // service's that tells which of its threads ran a task
    Table table = lake.createTrades("market", "trades");
    table.updateProperties().set(TableProperties.MANIFEST_MERGE_ENABLED, "false").commit();
    Random random = new Random(5);
    for (int i = 0; i <= ManifestWork.CALLING_THREAD_MAX_MANIFESTS; i++) {
      lake.append(table, lake.randomTrades(random, 5, "2026-04-0" + (1 + i % 9), 8, 9));
    }
    table.refresh();
    assertThat(ManifestWork.isLarge(table, table.currentSnapshot())).isTrue();
    Set<String> ran = java.util.concurrent.ConcurrentHashMap.newKeySet();
    ExecutorService pool =
        new java.util.concurrent.ThreadPoolExecutor(
            2,
            2,
            0,
            TimeUnit.SECONDS,
            new java.util.concurrent.LinkedBlockingQueue<>(),
            runnable -> {
              Thread thread = new Thread(runnable, "service-pool");
              thread.setDaemon(true);
              return thread;
            }) {
          @Override
          protected void beforeExecute(Thread thread, Runnable task) {
            ran.add(stage);
          }
        };
    ManifestWork manifests = ManifestWork.LOCAL_READS.withWorkerPool(pool);
    try {
      // When a scan plans, a commit commits and an expiry expires through it
      stage = "scan";
      try (CloseableIterable<FileScanTask> tasks =
          manifests.scan(table.newScan(), table, table.currentSnapshot()).planFiles()) {
        assertThat(tasks).hasSize(ManifestWork.CALLING_THREAD_MAX_MANIFESTS + 1);
      }
      stage = "commit";
      List<DataFile> files =
          TableWrites.write(table, lake.randomTrades(random, 5, "2026-04-02", 8, 9));
      AppendFiles append = manifests.commit(table.newAppend(), table, table.currentSnapshot());
      files.forEach(append::appendFile);
      append.commit();
      stage = "expiry";
      table.refresh();
      manifests
          .expiry(table.expireSnapshots())
          .expireOlderThan(table.currentSnapshot().timestampMillis() + 1)
          .retainLast(1)
          .commit();

      // Then each ran its manifest work on that pool, not on Iceberg's shared worker pool, which
      // its own JVM shutdown hook shuts down while the service still closes its refreshes
      assertThat(ran).containsExactlyInAnyOrder("scan", "commit", "expiry");
      table.refresh();
      assertThat(table.snapshots()).hasSize(1);
    } finally {
      pool.shutdownNow();
    }
  }

  private volatile String stage;

  @Test
  void shouldCountTheRequestsOfACommitInTheWorkerPoolUnderTheCommitsStage() throws Exception {
    // Given a table of more manifests than the calling thread reads, on a counting FileIO
    java.util.Map<String, String> properties = new java.util.HashMap<>();
    properties.put("type", "jdbc");
    properties.put("uri", "jdbc:sqlite:" + dir.resolve("counted.db"));
    properties.put("warehouse", dir.resolve("counted").toUri().toString());
    properties.put("jdbc.schema-version", "V1");
    try (IcebergFixture counted = IcebergFixture.create(CountingFileIO.install(properties))) {
      Table table = counted.createTrades("market", "trades");
      table.updateProperties().set(TableProperties.MANIFEST_MERGE_ENABLED, "false").commit();
      Random random = new Random(7);
      for (int i = 0; i <= ManifestWork.CALLING_THREAD_MAX_MANIFESTS; i++) {
        counted.append(table, counted.randomTrades(random, 5, "2026-04-01", 8, 9));
      }
      table.refresh();
      assertThat(ManifestWork.isLarge(table, table.currentSnapshot())).isTrue();
      List<DataFile> files =
          TableWrites.write(table, counted.randomTrades(random, 20, "2026-04-02", 8, 9));
      RequestTally tally = new RequestTally();
      RequestCounts before = RequestTally.process().counts();

      // When a commit through ManifestWork writes its manifest in the worker pool
      try (RequestStage.Scope counting = tally.open();
          RequestStage.Scope committing = RequestStage.COMMIT.enter()) {
        AppendFiles append =
            ManifestWork.LOCAL_READS.commit(table.newAppend(), table, table.currentSnapshot());
        files.forEach(append::appendFile);
        append.commit();
      }

      // Then its requests, the new manifest's PUT among them, count for the commit, none outside
      RequestCounts counts = tally.counts();
      RequestCounts meanwhile = RequestTally.process().counts().minus(before);
      assertThat(meanwhile.count(RequestStage.OTHER)).as(meanwhile.toString()).isZero();
      // The manifest, the manifest list, the metadata file
      assertThat(counts.count(RequestKind.PUT, RequestStage.COMMIT))
          .as(counts.toString())
          .isEqualTo(3);
    }
  }

  @Test
  void shouldCommitToARemoteStoreWhileEveryThreadOfThePoolOfRemoteReadsIsBusy() throws Exception {
    // Given a table of two manifests, one file of each to replace, and a pool of remote reads
    // whose every thread is held by a read of another refresh
    Table table = lake.createTrades("market", "trades");
    table.updateProperties().set(TableProperties.MANIFEST_MERGE_ENABLED, "false").commit();
    Random random = new Random(11);
    List<DataFile> replaced = new ArrayList<>();
    Set<String> expected = new HashSet<>();
    for (String[] days :
        new String[][] {{"2026-04-01", "2026-04-03"}, {"2026-04-02", "2026-04-04"}}) {
      List<org.apache.iceberg.data.Record> rows = new ArrayList<>();
      for (String day : days) {
        rows.addAll(lake.randomTrades(random, 20, day, 8, 9));
      }
      List<DataFile> files = TableWrites.write(table, rows);
      assertThat(files).hasSize(2);
      AppendFiles append = table.newAppend();
      files.forEach(append::appendFile);
      append.commit();
      replaced.add(files.get(0));
      files.subList(1, files.size()).forEach(file -> expected.add(file.location()));
    }
    List<DataFile> added =
        TableWrites.write(table, lake.randomTrades(random, 20, "2026-04-01", 8, 9));
    added.forEach(file -> expected.add(file.location()));
    table.refresh();
    assertThat(table.currentSnapshot().allManifests(table.io())).hasSize(2);
    ExecutorService reads = ManifestWork.newRemoteReadsPool();
    ExecutorService commits = ManifestWork.newRemoteCommitsPool();
    ExecutorService committing = java.util.concurrent.Executors.newSingleThreadExecutor();
    CountDownLatch held = new CountDownLatch(1);
    Set<String> commitThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    try {
      for (int i = 0; i < StorageKind.REMOTE_READS; i++) {
        reads.execute(
            () -> {
              try {
                held.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
      }
      ManifestWork manifests =
          ManifestWork.overlappingRemoteReadsOn(
              reads,
              task ->
                  commits.execute(
                      () -> {
                        commitThreads.add(Thread.currentThread().getName());
                        task.run();
                      }));

      // When the refresh commits the replacement of those files on the remote store
      CompletableFuture<Void> commit =
          CompletableFuture.runAsync(
              () -> {
                OverwriteFiles overwrite =
                    manifests.commit(
                        table.newOverwrite(), StorageKind.REMOTE, table, table.currentSnapshot());
                replaced.forEach(overwrite::deleteFile);
                added.forEach(overwrite::addFile);
                overwrite.commit();
              },
              committing);

      // Then it commits while the reads still hold every thread of their pool (on main its
      // manifest work waited behind them), its manifests read and written on the commits' pool,
      // and the table holds exactly the files kept and added
      commit.get(30, TimeUnit.SECONDS);
      assertThat(held.getCount()).isEqualTo(1);
      assertThat(commitThreads)
          .isNotEmpty()
          .allMatch(name -> name.startsWith("floe-remote-commits"));
    } finally {
      held.countDown();
      reads.shutdownNow();
      commits.shutdownNow();
      committing.shutdownNow();
    }
    table.refresh();
    List<String> planned = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(task -> planned.add(task.file().location()));
    }
    assertThat(planned).containsExactlyInAnyOrderElementsOf(expected);
  }
}
