package io.floe.topology.refresh.eval.scan;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.iceberg.OpenCountingFileIO;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.iceberg.RequestKind;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store requests of reading one data file of Iceberg's writer through Floe's column
 * reader, counted by {@link CountingFileIO} over streams that serve positioned reads (as S3's do):
 * the needed column chunks of a row group in one ranged request, and a small file on a remote store
 * read whole once, its footer and chunks with it, and then served from memory.
 */
class ParquetBatchesRequestsTest {

  /** The trades columns a view of OHLCV reads: four of the six. */
  private static final List<String> COLUMNS = List.of("symbol", "ts", "price", "quantity");

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
    lake =
        IcebergFixture.create(
            FileCaches.catalogProperties(
                CountingFileIO.install(OpenCountingFileIO.jdbcCatalogIn(dir)),
                FileCaches.DEFAULT_BYTES));
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReadTheNeededColumnChunksOfARowGroupInOneRangedRequest() {
    // Given a file of one row group larger than a footer's tail read, four of its six columns read
    lake.append(trades, lake.randomTrades(new Random(7), 20_000, "2026-04-08", 10, 12));
    FileScanTask task = onlyTask();
    assertThat(task.file().fileSizeInBytes()).isGreaterThan(ParquetBatches.SMALL_FILE_BYTES);

    // When it is read on a remote store
    Reading read = read(task, StorageKind.REMOTE);

    // Then its footer costs one request and the four column chunks one more
    assertThat(read.rows()).isEqualTo(20_000);
    assertThat(read.requests().count(RequestKind.DATA_FOOTER)).isOne();
    assertThat(read.requests().count(RequestKind.DATA_RANGE)).isOne();
    assertThat(read.requests().total()).as(read.requests().toString()).isEqualTo(2);
  }

  @Test
  void shouldReadASmallFileOnARemoteStoreWholeWithOneRequestThenFromMemory() {
    // Given a file of the ten trades of one commit of a stream
    lake.append(trades, lake.randomTrades(new Random(11), 10, "2026-04-08", 10, 11));
    FileScanTask task = onlyTask();
    assertThat(task.file().fileSizeInBytes()).isLessThanOrEqualTo(ParquetBatches.SMALL_FILE_BYTES);

    // When two refreshes on a remote store read it, one after the other
    Reading first = read(task, StorageKind.REMOTE);
    Reading second = read(task, StorageKind.REMOTE);

    // Then the first read it whole in one request, footer and chunks alike (two before: its tail,
    // then its chunks), and the second made none (one before: its chunks again)
    assertThat(first.requests().total()).as(first.requests().toString()).isOne();
    assertThat(first.requests().count(RequestKind.DATA_FOOTER)).isOne();
    assertThat(second.requests().total()).as(second.requests().toString()).isZero();
    assertThat(second.quantities()).isEqualTo(first.quantities());
    assertThat(second.rows()).isEqualTo(first.rows()).isEqualTo(10);
  }

  @Test
  void shouldKeepNoSmallFileInMemoryOnLocalFiles() {
    // Given a small file on local files
    lake.append(trades, lake.randomTrades(new Random(13), 10, "2026-04-08", 10, 11));
    FileScanTask task = onlyTask();

    // When two refreshes read it
    Reading first = read(task, StorageKind.LOCAL);
    Reading second = read(task, StorageKind.LOCAL);

    // Then each read its chunks from the disk, the first its footer too: a local read costs
    // microseconds, and the heap is kept for what costs a request
    assertThat(first.requests().count(RequestKind.DATA_RANGE)).isOne();
    assertThat(second.requests().count(RequestKind.DATA_RANGE)).isOne();
    assertThat(second.requests().count(RequestKind.DATA_FOOTER)).isZero();
    assertThat(second.quantities()).isEqualTo(first.quantities());
  }

  private FileScanTask onlyTask() {
    try (CloseableIterable<FileScanTask> tasks =
        lake.load("market", "trades").newScan().planFiles()) {
      List<FileScanTask> all = new java.util.ArrayList<>();
      tasks.forEach(all::add);
      assertThat(all).hasSize(1);
      return all.get(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What one read of a file cost, the rows it gave and the sum of their quantities. */
  private record Reading(RequestCounts requests, long rows, long quantities) {}

  private Reading read(FileScanTask task, StorageKind storage) {
    Table table = lake.load("market", "trades");
    ScanColumns columns =
        ScanColumns.of(
            table.io(),
            storage,
            table.schema(),
            COLUMNS,
            Expressions.alwaysTrue(),
            "ts",
            BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
            true,
            null);
    Vector[] vectors = new Vector[table.schema().columns().size()];
    for (int c = 0; c < columns.positions().length; c++) {
      vectors[columns.positions()[c]] =
          Vectors.forIceberg(columns.projection().columns().get(c).type());
    }
    Vector quantity = vectors[columns.positions()[COLUMNS.indexOf("quantity")]];
    long[] sum = new long[1];
    BatchSink sink =
        BatchSink.of(
            vectors,
            n -> {
              for (int i = 0; i < n; i++) {
                sum[0] += quantity.getLong(i);
              }
            });
    RequestTally tally = new RequestTally();
    ParquetBatches.Read read;
    try (RequestStage.Scope counting = tally.open();
        RequestStage.Scope reading = RequestStage.READ.enter()) {
      read = ParquetBatches.read(columns, task, sink);
    }
    assertThat(read).as("read by the column reader").isNotNull();
    return new Reading(tally.counts(), read.rows(), sum[0]);
  }
}
