package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The counting FileIO over a real HadoopFileIO on local files. */
class CountingFileIOTest {

  private static final int LENGTH = 10_000;

  @TempDir Path dir;
  private FileIO io;
  private RequestTally tally;
  private RequestStage.Scope counting;

  @BeforeEach
  void setUp() {
    Map<String, String> properties =
        CountingFileIO.install(Map.of(CatalogUtil.ICEBERG_CATALOG_TYPE, "jdbc"));
    io =
        CatalogUtil.loadFileIO(
            properties.get(CatalogProperties.FILE_IO_IMPL),
            properties,
            HadoopConfigurations.forCatalogs());
    tally = new RequestTally();
    counting = tally.open();
  }

  @AfterEach
  void tearDown() {
    counting.close();
    io.close();
  }

  @Test
  void shouldClassifyReadsByTheFileTheyRead() {
    String table = "s3://bucket/warehouse/db/t/";

    assertThat(RequestKind.ofRead(table + "metadata/00003-ab.metadata.json", 0, 10, -1))
        .isEqualTo(RequestKind.TABLE_METADATA);
    assertThat(RequestKind.ofRead(table + "metadata/00003-ab.gz.metadata.json", 0, 10, -1))
        .isEqualTo(RequestKind.TABLE_METADATA);
    assertThat(RequestKind.ofRead(table + "metadata/version-hint.text", 0, 1, -1))
        .isEqualTo(RequestKind.TABLE_METADATA);
    assertThat(RequestKind.ofRead(table + "metadata/snap-1234-1-ab.avro", 0, 10, -1))
        .isEqualTo(RequestKind.MANIFEST_LIST);
    assertThat(RequestKind.ofRead(table + "metadata/ab-m0.avro", 0, 10, 500))
        .isEqualTo(RequestKind.MANIFEST);
    assertThat(RequestKind.ofRead(table + "metadata/1234-1-ab.stats", 0, 10, 500))
        .isEqualTo(RequestKind.OTHER);
    // A Parquet footer: the footer length and magic in the last 8 bytes, then the footer before.
    assertThat(RequestKind.ofRead(table + "data/day=1/00000-0-ab.parquet", 992, 1000, 1000))
        .isEqualTo(RequestKind.DATA_FOOTER);
    assertThat(RequestKind.ofRead(table + "data/day=1/00000-0-ab.parquet", 900, 992, 1000))
        .isEqualTo(RequestKind.DATA_FOOTER);
    assertThat(RequestKind.ofRead(table + "data/day=1/00000-0-ab.parquet", 4, 900, 1000))
        .isEqualTo(RequestKind.DATA_RANGE);
    // Without the length no read is known to reach the footer.
    assertThat(RequestKind.ofRead(table + "data/00000-0-ab.parquet", 992, 1000, -1))
        .isEqualTo(RequestKind.DATA_RANGE);
  }

  @Test
  void shouldCountAPutPerFileWrittenAndItsBytes() throws IOException {
    try (RequestStage.Scope writing = RequestStage.WRITE.enter()) {
      write("data/a.parquet");
    }

    RequestCounts counts = tally.counts();
    assertThat(counts.count(RequestKind.PUT, RequestStage.WRITE)).isEqualTo(1);
    assertThat(counts.total()).isEqualTo(1);
    assertThat(counts.bytesWritten()).isEqualTo(LENGTH);
  }

  @Test
  void shouldCountAHeadOnlyWhenTheLengthIsNotGiven() throws IOException {
    String location = write("data/a.parquet");

    InputFile unknown = io.newInputFile(location);
    assertThat(unknown.getLength()).isEqualTo(LENGTH);
    assertThat(unknown.getLength()).isEqualTo(LENGTH);
    InputFile known = io.newInputFile(location, LENGTH);
    assertThat(known.getLength()).isEqualTo(LENGTH);

    assertThat(tally.counts().count(RequestKind.HEAD)).isEqualTo(1);
  }

  @Test
  void shouldKnowTheLengthOfAManifestListItWroteWithoutAHead() throws IOException {
    String location = write("metadata/snap-1-1-ab.avro");

    InputFile list = io.newInputFile(location);

    assertThat(list.getLength()).isEqualTo(LENGTH);
    assertThat(list.exists()).isTrue();
    assertThat(tally.counts().total()).as(tally.counts().toString()).isEqualTo(1);
    assertThat(tally.counts().count(RequestKind.PUT)).isEqualTo(1);
  }

  @Test
  void shouldReadAManifestListNotSeenBeforeWholeForItsLengthInsteadOfAHead() throws IOException {
    // Given a manifest list another process wrote
    Path file = dir.resolve("metadata/snap-2-1-cd.avro");
    java.nio.file.Files.createDirectories(file.getParent());
    byte[] content = new byte[LENGTH];
    content[LENGTH - 1] = 7;
    java.nio.file.Files.write(file, content);
    String location = file.toUri().toString();

    // When its length is asked for, then it is read
    InputFile list = io.newInputFile(location);
    long length = list.getLength();
    byte[] read;
    try (SeekableInputStream in = list.newStream()) {
      read = in.readAllBytes();
    }

    // Then it took one GET, no HEAD, and a second look-up by another input file takes none
    assertThat(length).isEqualTo(LENGTH);
    assertThat(read).isEqualTo(content);
    assertThat(io.newInputFile(location).getLength()).isEqualTo(LENGTH);
    RequestCounts counts = tally.counts();
    assertThat(counts.count(RequestKind.MANIFEST_LIST)).as(counts.toString()).isEqualTo(1);
    assertThat(counts.count(RequestKind.HEAD)).as(counts.toString()).isZero();
  }

  @Test
  void shouldKnowTheLengthOfAManifestItReadFromItsContentAloneWithoutAHead() throws IOException {
    // Given a fresh cache and a manifest another process wrote, read once by its path and length
    FileCaches.configure(FileCaches.DEFAULT_BYTES);
    String location = writeElsewhere("metadata/ef-m0.avro");
    byte[] first = readAll(io.newInputFile(location, LENGTH));

    // When another input file of it is asked for its length and read, with no length given
    InputFile again = io.newInputFile(location);
    long length = again.getLength();
    byte[] second = readAll(again);

    // Then the one read served both, and the cache holds one entry for it: its content
    RequestCounts counts = tally.counts();
    assertThat(length).isEqualTo(LENGTH);
    assertThat(first).isEqualTo(content());
    assertThat(second).isEqualTo(content());
    assertThat(counts.count(RequestKind.HEAD)).as(counts.toString()).isZero();
    assertThat(counts.count(RequestKind.MANIFEST)).as(counts.toString()).isEqualTo(1);
    assertThat(FileCaches.entries()).isEqualTo(1);
  }

  @Test
  void shouldRecordOnlyTheLengthOfAManifestListTooLargeToKeep() throws IOException {
    // Given a cache that keeps no file of this size, and a manifest list written through the IO
    FileCaches.configure(LENGTH);
    try {
      String location = write("metadata/snap-4-1-gh.avro");

      // When its length is asked for
      long length = io.newInputFile(location).getLength();

      // Then it is known from the one small entry the write left under each of its names (as
      // given, and as the FileIO normalised it), without a HEAD
      assertThat(length).isEqualTo(LENGTH);
      assertThat(tally.counts().count(RequestKind.HEAD)).isZero();
      assertThat(FileCaches.entries())
          .isEqualTo(Set.of(location, io.newOutputFile(location).location()).size());
    } finally {
      FileCaches.configure(FileCaches.DEFAULT_BYTES);
    }
  }

  @Test
  void shouldCountARequestPerPositionedReadLikeARangedGet() throws IOException {
    String location = write("data/a.parquet");
    InputFile file = io.newInputFile(location, LENGTH);
    byte[] buffer = new byte[1000];

    try (RequestStage.Scope reading = RequestStage.READ.enter();
        SeekableInputStream in = file.newStream()) {
      // Parquet's footer: its length and magic, then the footer itself.
      in.seek(LENGTH - 8);
      readFully(in, buffer, 8);
      in.seek(LENGTH - 8 - 500);
      readFully(in, buffer, 500);
      // Two column chunks one after the other, and one past a small gap: one request.
      in.seek(4);
      readFully(in, buffer, 1000);
      readFully(in, buffer, 1000);
      in.seek(3000);
      readFully(in, buffer, 1000);
      // Backwards: a new request.
      in.seek(100);
      readFully(in, buffer, 10);
    }

    RequestCounts counts = tally.counts();
    assertThat(counts.count(RequestKind.DATA_FOOTER, RequestStage.READ)).isEqualTo(2);
    assertThat(counts.count(RequestKind.DATA_RANGE, RequestStage.READ)).isEqualTo(2);
    assertThat(counts.count(RequestKind.HEAD)).isZero();
    assertThat(counts.bytesRead()).isEqualTo(8 + 500 + 3000 + 10);
  }

  @Test
  void shouldReadATableMetadataFileFromTheStoreOnceForEveryStageThatLoadsIt() throws IOException {
    // Given a metadata file another process wrote
    String location = writeElsewhere("metadata/00001-ab.metadata.json");

    // When resolve, detect and plan each read it
    byte[] read = null;
    for (RequestStage stage :
        List.of(RequestStage.RESOLVE, RequestStage.DETECT, RequestStage.PLAN)) {
      try (RequestStage.Scope scope = stage.enter()) {
        read = readAll(io.newInputFile(location));
      }
    }

    // Then only the first read took a request, and each saw the file's content
    RequestCounts counts = tally.counts();
    assertThat(counts.count(RequestKind.TABLE_METADATA)).as(counts.toString()).isEqualTo(1);
    assertThat(counts.count(RequestKind.TABLE_METADATA, RequestStage.RESOLVE)).isEqualTo(1);
    assertThat(counts.total()).as(counts.toString()).isEqualTo(1);
    assertThat(read).isEqualTo(content());
  }

  @Test
  void shouldReadBackWhatItWroteWithoutARequest() throws IOException {
    // Given a metadata file, a manifest list and a manifest written through the FileIO
    List<String> written =
        List.of(
            write("metadata/00002-cd.metadata.json"),
            write("metadata/snap-3-1-cd.avro"),
            write("metadata/cd-m0.avro"));

    // When each is read back, as Iceberg does after a commit and the next refresh after it
    try (RequestStage.Scope committing = RequestStage.COMMIT.enter()) {
      for (String location : written) {
        assertThat(readAll(io.newInputFile(location))).as(location).isEqualTo(content());
      }
      assertThat(readAll(io.newInputFile(written.get(2), LENGTH))).isEqualTo(content());
    }

    // Then the only requests are the three PUTs
    RequestCounts counts = tally.counts();
    assertThat(counts.count(RequestKind.PUT)).isEqualTo(3);
    assertThat(counts.total()).as(counts.toString()).isEqualTo(3);
  }

  @Test
  void shouldReadAHadoopTablesNumberedMetadataFileFromTheStoreEveryTime() throws IOException {
    // Given a Hadoop table's v1.metadata.json, read once
    String location = writeElsewhere("metadata/v1.metadata.json");
    readAll(io.newInputFile(location));

    // When another process drops the table and creates it again, which writes v1 anew
    Path file = dir.resolve("metadata/v1.metadata.json");
    byte[] recreated = "{\"table-uuid\": \"another\"}".getBytes(StandardCharsets.UTF_8);
    java.nio.file.Files.write(file, recreated);
    byte[] read = readAll(io.newInputFile(location));

    // Then the second read went to the store and saw the new table
    assertThat(read).isEqualTo(recreated);
    assertThat(tally.counts().count(RequestKind.TABLE_METADATA)).isEqualTo(2);
  }

  @Test
  void shouldReadAVersionHintEveryTimeItIsAsked() throws IOException {
    // Given a Hadoop table's version hint, which its next commit rewrites in place
    String location = write("metadata/version-hint.text");

    // When it is read twice
    readAll(io.newInputFile(location));
    readAll(io.newInputFile(location));

    // Then both reads went to the store
    assertThat(tally.counts().count(RequestKind.TABLE_METADATA)).isEqualTo(2);
  }

  @Test
  void shouldReadMetadataFilesFromTheStoreEveryTimeWhenTheCachesAreOff() throws IOException {
    // Given the caches turned off and a metadata file written through the FileIO
    FileCaches.configure(0);
    try {
      String location = write("metadata/00003-ef.metadata.json");

      // When it is read twice
      readAll(io.newInputFile(location));
      readAll(io.newInputFile(location));

      // Then both reads went to the store
      assertThat(tally.counts().count(RequestKind.TABLE_METADATA)).isEqualTo(2);
    } finally {
      FileCaches.configure(FileCaches.DEFAULT_BYTES);
    }
  }

  @Test
  void shouldSendOneRequestForAFileTwoThreadsReadAtOnce() throws Exception {
    // Given a manifest another process wrote, on a store that holds each request until released
    String location = writeElsewhere("metadata/gh-m0.avro");
    Map<String, String> properties =
        CountingFileIO.install(
            Map.of(
                CatalogUtil.ICEBERG_CATALOG_TYPE,
                "jdbc",
                CatalogProperties.FILE_IO_IMPL,
                GatedFileIO.class.getName()));
    FileIO gated =
        CatalogUtil.loadFileIO(
            properties.get(CatalogProperties.FILE_IO_IMPL),
            properties,
            HadoopConfigurations.forCatalogs());
    GatedFileIO.hold();
    byte[][] read = new byte[2][];
    Thread first =
        new Thread(
            RequestStage.propagating(
                () -> read[0] = readAll(gated.newInputFile(location, LENGTH))));
    Thread second =
        new Thread(
            RequestStage.propagating(
                () -> read[1] = readAll(gated.newInputFile(location, LENGTH))));
    try {
      // When one thread's read is in flight and a second thread reads the same file
      first.start();
      assertThat(GatedFileIO.awaitOpened()).isTrue();
      second.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      // (waiting for the first read, or held by the store beside it)
      while (!isWaiting(second) && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(isWaiting(second)).as(second.getState().toString()).isTrue();
    } finally {
      GatedFileIO.release();
      first.join(TimeUnit.SECONDS.toMillis(30));
      second.join(TimeUnit.SECONDS.toMillis(30));
      gated.close();
    }

    // Then the store saw one request, and both threads the file's content (two on main: the
    // three views of a source, refreshing at once, each read every new manifest)
    assertThat(GatedFileIO.opens()).isEqualTo(1);
    assertThat(tally.counts().count(RequestKind.MANIFEST)).isEqualTo(1);
    assertThat(read[0]).isEqualTo(content());
    assertThat(read[1]).isEqualTo(content());
  }

  @Test
  void shouldCountTheRequestsOfPoolThreadsUnderTheStageThatSubmittedThem() throws Exception {
    String location = writeElsewhere("metadata/ab-m0.avro");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      try (RequestStage.Scope planning = RequestStage.PLAN.enter()) {
        RequestStage.propagating(pool).execute(() -> readAll(io.newInputFile(location, LENGTH)));
      }
      pool.execute(() -> readAll(io.newInputFile(location, LENGTH)));
    } finally {
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    RequestCounts counts = tally.counts();
    // The task submitted without propagation counts in the process's tally only, under other.
    assertThat(counts.count(RequestKind.MANIFEST, RequestStage.PLAN)).isEqualTo(1);
    assertThat(counts.count(RequestKind.MANIFEST)).isEqualTo(1);
    assertThat(RequestTally.process().requests(RequestKind.MANIFEST, RequestStage.OTHER))
        .isPositive();
  }

  @Test
  void shouldWrapTheCatalogTypesDefaultFileIO() {
    Map<String, String> jdbc = new HashMap<>(Map.of("type", "jdbc"));
    Map<String, String> rest = Map.of("type", "rest");
    Map<String, String> named = Map.of("type", "rest", "io-impl", "org.example.MyFileIO");
    Map<String, String> custom = Map.of("catalog-impl", "org.example.MyCatalog");

    assertThat(CountingFileIO.install(jdbc))
        .containsEntry("io-impl", CountingFileIO.class.getName())
        .containsEntry(CountingFileIO.DELEGATE_IMPL, "org.apache.iceberg.hadoop.HadoopFileIO");
    assertThat(CountingFileIO.install(rest))
        .containsEntry(CountingFileIO.DELEGATE_IMPL, "org.apache.iceberg.io.ResolvingFileIO");
    assertThat(CountingFileIO.install(named))
        .containsEntry(CountingFileIO.DELEGATE_IMPL, "org.example.MyFileIO");
    assertThat(CountingFileIO.install(custom)).isEqualTo(custom);
    assertThat(CountingFileIO.install(CountingFileIO.install(jdbc)))
        .isEqualTo(CountingFileIO.install(jdbc));
    assertThat(((CountingFileIO) io).delegate().getClass().getName())
        .isEqualTo("org.apache.iceberg.hadoop.HadoopFileIO");
  }

  private static boolean isWaiting(Thread thread) {
    Thread.State state = thread.getState();
    return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
  }

  private String write(String name) throws IOException {
    String location = dir.resolve(name).toUri().toString();
    try (PositionOutputStream out = io.newOutputFile(location).create()) {
      out.write(content());
    }
    return location;
  }

  /** Writes {@code name} as another process would, past this FileIO. */
  private String writeElsewhere(String name) throws IOException {
    Path file = dir.resolve(name);
    java.nio.file.Files.createDirectories(file.getParent());
    java.nio.file.Files.write(file, content());
    return file.toUri().toString();
  }

  /** The content of every file these tests write: {@value #LENGTH} bytes, not all zero. */
  private static byte[] content() {
    byte[] content = new byte[LENGTH];
    for (int i = 0; i < LENGTH; i++) {
      content[i] = (byte) i;
    }
    return content;
  }

  private static void readFully(SeekableInputStream in, byte[] buffer, int len) throws IOException {
    int done = 0;
    while (done < len) {
      int n = in.read(buffer, done, len - done);
      if (n < 0) {
        throw new IOException("end of file after " + done + " of " + len + " bytes");
      }
      done += n;
    }
  }

  private static byte[] readAll(InputFile file) {
    try (SeekableInputStream in = file.newStream()) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
