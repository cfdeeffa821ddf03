package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TableWrites;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.StorageKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guarded commit to a table on a remote store uploads its manifests and manifest list while it
 * goes on, and swaps in its metadata only once the store has them all: over a real catalog whose
 * uploads (the closing of a file's stream) are held, as an object store holds each request.
 */
class WriteBehindCommitTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private ExecutorService reads;
  private ExecutorService commits;
  private ManifestWork manifests;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    reads = ManifestWork.newRemoteReadsPool();
    commits = ManifestWork.newRemoteCommitsPool();
    manifests = ManifestWork.overlappingRemoteReadsOn(reads, commits);
  }

  @AfterEach
  void tearDown() throws Exception {
    reads.shutdownNow();
    commits.shutdownNow();
    lake.close();
  }

  @Test
  void shouldUploadACommitsManifestsAtOnceAndSwapOnlyOnceTheStoreHasThem() throws Exception {
    // Given a table of two manifests, a file of the first to replace and a new file replacing it
    Table table = lake.createTrades("market", "trades");
    Fixture given = twoManifestsAndAReplacement(table);
    HoldingFileIO store = new HoldingFileIO(operations(table).io(), 2, false);

    // When the replacement commits through the guard, the store holding each upload until two
    // are in flight at once (or 5 s passed)
    long start = System.nanoTime();
    overwrite(table, store, given);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    // Then the rewritten manifest, the new files' manifest and the manifest list (3 uploads)
    // overlapped: on main they went one after the other (at most 1 in flight, each held 5 s)
    assertThat(store.uploads()).isEqualTo(3);
    assertThat(store.mostInFlight()).isGreaterThanOrEqualTo(2);
    assertThat(millis).isLessThan(10_000);
    // and the table, read back from the store by a fresh catalog, holds exactly the files kept
    // and added
    assertThat(planned(lake.catalog().loadTable(TableIdentifier.of("market", "trades"))))
        .containsExactlyInAnyOrderElementsOf(given.expected());
  }

  @Test
  void shouldNotSwapInAMetadataFileWhoseManifestsTheStoreDidNotTake() {
    // Given a table and a store that fails every manifest upload
    Table table = lake.createTrades("market", "trades");
    Fixture given = twoManifestsAndAReplacement(table);
    long before = table.currentSnapshot().snapshotId();
    HoldingFileIO store = new HoldingFileIO(operations(table).io(), 1, true);

    // When the replacement commits through the guard
    // Then it fails before the swap: the table is as it was
    assertThatThrownBy(() -> overwrite(table, store, given))
        .hasRootCauseMessage("the store refused an upload");
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).isEqualTo(before);
  }

  private record Fixture(List<DataFile> replaced, List<DataFile> added, Set<String> expected) {}

  private Fixture twoManifestsAndAReplacement(Table table) {
    table.updateProperties().set(TableProperties.MANIFEST_MERGE_ENABLED, "false").commit();
    Random random = new Random(5);
    List<DataFile> replaced = new ArrayList<>();
    Set<String> expected = new HashSet<>();
    boolean first = true;
    for (String[] days :
        new String[][] {{"2026-04-01", "2026-04-03"}, {"2026-04-02", "2026-04-04"}}) {
      List<Record> rows = new ArrayList<>();
      for (String day : days) {
        rows.addAll(lake.randomTrades(random, 20, day, 8, 9));
      }
      List<DataFile> files = TableWrites.write(table, rows);
      AppendFiles append = table.newAppend();
      files.forEach(append::appendFile);
      append.commit();
      List<DataFile> kept = first ? files.subList(1, files.size()) : files;
      if (first) {
        replaced.add(files.get(0));
      }
      kept.forEach(file -> expected.add(file.location()));
      first = false;
    }
    List<DataFile> added =
        TableWrites.write(table, lake.randomTrades(random, 20, "2026-04-01", 8, 9));
    added.forEach(file -> expected.add(file.location()));
    table.refresh();
    assertThat(table.currentSnapshot().allManifests(table.io())).hasSize(2);
    return new Fixture(replaced, added, expected);
  }

  /** The overwrite, committed as GuardedCommit commits on a remote store, through {@code store}. */
  private void overwrite(Table table, FileIO store, Fixture given) {
    TableOperations operations = operations(table);
    Table guarded =
        new BaseTable(
            new GuardedTableOperations(
                operations,
                new CommitGuard(Map.of(), "v", 0, "1"),
                UnaryOperator.identity(),
                manifests.commitFiles(store, StorageKind.REMOTE)),
            table.name());
    OverwriteFiles overwrite =
        manifests.commit(guarded.newOverwrite(), guarded, guarded.currentSnapshot());
    given.replaced().forEach(overwrite::deleteFile);
    given.added().forEach(overwrite::addFile);
    overwrite.commit();
  }

  private static TableOperations operations(Table table) {
    return ((HasTableOperations) table).operations();
  }

  private static List<String> planned(Table table) throws IOException {
    List<String> planned = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(task -> planned.add(task.file().location()));
    }
    return planned;
  }

  /**
   * The table's FileIO, holding the upload of each Avro file (manifests, manifest lists: the
   * closing of its stream) until {@code together} are in flight at once or 5 s passed, or failing
   * it.
   */
  private static final class HoldingFileIO implements FileIO {
    private final FileIO delegate;
    private final int together;
    private final boolean failing;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger most = new AtomicInteger();
    private final AtomicInteger uploads = new AtomicInteger();

    HoldingFileIO(FileIO delegate, int together, boolean failing) {
      this.delegate = delegate;
      this.together = together;
      this.failing = failing;
    }

    int mostInFlight() {
      return most.get();
    }

    int uploads() {
      return uploads.get();
    }

    @Override
    public InputFile newInputFile(String path) {
      return delegate.newInputFile(path);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
      return delegate.newInputFile(path, length);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      OutputFile file = delegate.newOutputFile(path);
      return path.endsWith(".avro") ? new Held(file) : file;
    }

    @Override
    public void deleteFile(String path) {
      delegate.deleteFile(path);
    }

    private final class Held implements OutputFile {
      private final OutputFile file;

      Held(OutputFile file) {
        this.file = file;
      }

      @Override
      public PositionOutputStream create() {
        return new HeldStream(file.create());
      }

      @Override
      public PositionOutputStream createOrOverwrite() {
        return new HeldStream(file.createOrOverwrite());
      }

      @Override
      public String location() {
        return file.location();
      }

      @Override
      public InputFile toInputFile() {
        return file.toInputFile();
      }
    }

    private final class HeldStream extends PositionOutputStream {
      private final PositionOutputStream stream;

      HeldStream(PositionOutputStream stream) {
        this.stream = stream;
      }

      @Override
      public long getPos() throws IOException {
        return stream.getPos();
      }

      @Override
      public void write(int b) throws IOException {
        stream.write(b);
      }

      @Override
      public void write(byte[] bytes, int off, int len) throws IOException {
        stream.write(bytes, off, len);
      }

      @Override
      public void close() throws IOException {
        uploads.incrementAndGet();
        int now = inFlight.incrementAndGet();
        most.accumulateAndGet(now, Math::max);
        try {
          if (failing) {
            stream.close();
            throw new UncheckedIOException(new IOException("the store refused an upload"));
          }
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
          while (most.get() < together && System.nanoTime() < deadline) {
            Thread.onSpinWait();
          }
          stream.close();
        } finally {
          inFlight.decrementAndGet();
        }
      }
    }
  }
}
