package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.iceberg.OpenCountingFileIO;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.iceberg.RequestKind;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store requests a refresh makes, counted as a store sees them ({@link CountingFileIO}
 * over streams that serve positioned reads, as S3's do): the column chunks a row group needs in one
 * ranged request, not one per column chunk or page, and no HEAD before a read of an immutable file.
 */
class RefreshRequestsTest {

  private static final String OHLCV = TradeViews.OHLCV_1M;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;
  private final ViewDefinition view =
      ViewDefinition.of("ohlcv_1m", OHLCV, TableName.parse("lake.analytics.ohlcv_1m"));

  @BeforeEach
  void setUp() {
    lake =
        IcebergFixture.create(
            FileCaches.catalogProperties(
                CountingFileIO.install(OpenCountingFileIO.jdbcCatalogIn(dir)),
                FileCaches.DEFAULT_BYTES));
    trades = lake.createTrades("market", "trades");
    // Row groups of a few hundred rows, each column chunk in pages of 100 rows.
    trades
        .updateProperties()
        .set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "4096")
        .set(TableProperties.PARQUET_PAGE_ROW_LIMIT, "100")
        .commit();
    ((SupportsNamespaces) lake.catalog()).createNamespace(Namespace.of("analytics"));
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private RefreshOutcome refresh(long snapshot, Long watermark) {
    return ViewRefresherTest.refreshDetected(
        refresher, lake.load("market", "trades"), view, snapshot, watermark);
  }

  /** {@code perMinute} trades of each of {@code minutes} minutes from 10:00, in time order. */
  private List<Record> trades(int minutes, int perMinute) {
    List<Record> rows = new ArrayList<>();
    String[] symbols = {"AAPL", "MSFT", "GOOG"};
    for (int m = 0; m < minutes; m++) {
      for (int i = 0; i < perMinute; i++) {
        String ts =
            String.format(
                "2026-04-08T%02d:%02d:%02d.%03dZ",
                10 + m / 60, m % 60, i * 60 / perMinute, i % 1000);
        rows.add(lake.trade(symbols[i % 3], ts, 10.0 + i % 17, 1L + i, i % 2 == 0 ? "B" : "S"));
      }
    }
    return rows;
  }

  private int rowGroups(long snapshot) {
    int groups = 0;
    try (CloseableIterable<FileScanTask> tasks =
        lake.load("market", "trades").newScan().useSnapshot(snapshot).planFiles()) {
      for (FileScanTask task : tasks) {
        try (ParquetFileReader reader =
            ParquetFileReader.open(
                new LocalInputFile(Paths.get(java.net.URI.create(task.file().location()))))) {
          groups += reader.getFooter().getBlocks().size();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return groups;
  }

  @Test
  void shouldReadTheNeededColumnChunksOfEachRowGroupInOneRangedRequest() {
    // Given a source file of many row groups, four of its six columns read by the view
    long s1 = lake.append(trades, trades(30, 200));
    int rowGroups = rowGroups(s1);
    assertThat(rowGroups).as("row groups of the file").isGreaterThan(5);

    // When the view refreshes in full, reading every row group
    RefreshOutcome outcome = refresh(s1, null);

    long ranges = outcome.requests().count(RequestKind.DATA_RANGE, RequestStage.READ);
    // Then the needed column chunks of all its row groups, within one merged read's bound, cost one
    // ranged request, besides the footer (with a request per row group it was 21)
    assertThat(ranges).as("data-range requests of the read").isOne();
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s1, OHLCV);
  }

  @Test
  void shouldReadOnlyTheRowGroupsOfTheDirtyMinutesOnceEachInAnIncrementalRefresh() {
    // Given a view that recomputes its dirty minutes (a distinct count: no partial state folds
    // it), refreshed over a source file of many row groups
    String query = TradeViews.OHLCV_1M_RECOMPUTED;
    ViewDefinition recomputed =
        ViewDefinition.of("ohlcv_1m", query, TableName.parse("lake.analytics.ohlcv_1m"));
    long s1 = lake.append(trades, trades(30, 200));
    ViewRefresherTest.refreshDetected(
        refresher, lake.load("market", "trades"), recomputed, s1, null);

    // When trades of one minute arrive and the view refreshes that minute
    List<Record> late = new ArrayList<>();
    late.add(lake.trade("AAPL", "2026-04-08T10:12:30Z", 99.0, 5L, "B"));
    long s2 = lake.append(trades, late);
    RefreshOutcome outcome =
        ViewRefresherTest.refreshDetected(
            refresher, lake.load("market", "trades"), recomputed, s2, s1);

    // Then the first file's row groups of that minute and their column and offset indexes cost one
    // ranged request, the new file another (Parquet's reader took 8: the indexes apart, each
    // column's pages apart)
    long ranges = outcome.requests().count(RequestKind.DATA_RANGE, RequestStage.READ);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(ranges).as("data-range requests of the read").isEqualTo(2);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s2, query);
  }

  @Test
  void shouldLookUpNoFileLengthInAnIncrementalRefresh() {
    // Given a view refreshed once, and an append detected
    long s1 = lake.append(trades, trades(2, 10));
    refresh(s1, null);
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:01:30Z", 9.0, 1L, "B")));

    // When the view refreshes incrementally
    RefreshOutcome outcome = refresh(s2, s1);

    // Then it asked the store for no file's length: the manifest lists' lengths (which table
    // metadata does not record, and Iceberg's Avro reader asks for) are known from writing or
    // reading them (a HEAD in each of plan, write and commit before)
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.requests().count(RequestKind.HEAD))
        .as(outcome.requests().toString())
        .isZero();
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s2, OHLCV);
  }

  @Test
  void shouldCountEveryRequestOfARefreshUnderItsStages() {
    // Given a view refreshed twice, and rows of its source deleted and the deletion detected
    long s1 = lake.append(trades, trades(2, 10));
    refresh(s1, null);
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:01:30Z", 9.0, 1L, "B")));
    refresh(s2, s1);
    long s3 = lake.overwrite(trades, row -> ((Long) row.getField("quantity")) == 2L, List.of());
    DirtyBuckets dirty = ViewRefresherTest.detected(lake.load("market", "trades"), s2, s3, view);
    RequestCounts before = RequestTally.process().counts();

    // When the view refreshes
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(view, s3, s2, dirty), ViewRefresher.ProgressListener.NONE);

    // Then every request the process made meanwhile was the refresh's, under one of its stages
    RequestCounts meanwhile = RequestTally.process().counts().minus(before);
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(meanwhile.count(RequestStage.OTHER)).as(meanwhile.toString()).isZero();
    assertThat(outcome.requests().total())
        .as(outcome.requests().toString())
        .isEqualTo(meanwhile.total());
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s3, OHLCV);
  }
}
