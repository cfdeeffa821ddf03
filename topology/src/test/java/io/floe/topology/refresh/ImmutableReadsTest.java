package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.CountingCatalog;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.iceberg.OpenCountingFileIO;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a refresh reads of the object store, counted by a FileIO that sees every stream opened: the
 * immutable files (manifests, Parquet footers) once within the caches' bound, each table's metadata
 * once per refresh, and the same results as without caches.
 */
class ImmutableReadsTest {

  // Bars that recompute their dirty minutes: the requests of the source and target side alone, no
  // partial states (PartialStatesRefreshTest has those).
  private static final String OHLCV = TradeViews.OHLCV_1M_RECOMPUTED;
  private static final TableIdentifier SOURCE = TableIdentifier.of("market", "trades");
  private static final TableIdentifier TARGET = TableIdentifier.of("analytics", "ohlcv_1m");

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private CountingCatalog catalog;
  private ViewRefresher refresher;
  private final ViewDefinition view =
      ViewDefinition.of("ohlcv_1m", OHLCV, TableName.parse("lake.analytics.ohlcv_1m"));

  @BeforeEach
  void setUp() {
    lake =
        IcebergFixture.create(
            FileCaches.catalogProperties(
                OpenCountingFileIO.jdbcCatalogIn(dir), FileCaches.DEFAULT_BYTES));
    trades = lake.createTrades("market", "trades");
    ((SupportsNamespaces) lake.catalog()).createNamespace(Namespace.of("analytics"));
    catalog = new CountingCatalog(lake.catalog());
    refresher = new ViewRefresher(name -> catalog);
    OpenCountingFileIO.reset();
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private Predicate<String> under(String table) {
    return location -> location.contains("/" + table + "/");
  }

  private RefreshOutcome refresh(long snapshot, Long watermark) {
    return ViewRefresherTest.refreshDetected(
        refresher, lake.load("market", "trades"), view, snapshot, watermark);
  }

  private List<Record> trades(String minute, int n) {
    List<Record> rows = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      rows.add(lake.trade("AAPL", minute + String.format(":%02dZ", i), 10.0 + i, 1L + i, "B"));
    }
    return rows;
  }

  @Test
  void shouldReadEachManifestOnceAcrossRefreshes() {
    // Given a view refreshed after each of three appends to the same minute
    long s1 = lake.append(trades, trades("2026-04-08T10:00", 3));
    refresh(s1, null);
    long s2 = lake.append(trades, trades("2026-04-08T10:00", 2));
    refresh(s2, s1);

    // When it refreshes once more
    long s3 = lake.append(trades, trades("2026-04-08T10:00", 1));
    refresh(s3, s2);

    // Then no manifest of the source or of the target was read twice
    assertThat(OpenCountingFileIO.opensByFile(OpenCountingFileIO::isManifest))
        .isNotEmpty()
        .allSatisfy((manifest, opens) -> assertThat(opens).as(manifest).isEqualTo(1));
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s3, OHLCV);
  }

  @Test
  void shouldReadEachParquetFooterOnceAcrossRefreshes() {
    // Given a view refreshed over a source file of a minute
    long s1 = lake.append(trades, trades("2026-04-08T10:00", 3));
    refresh(s1, null);

    // When a row of the same minute is appended and the view refreshes: the minute's bucket is
    // recomputed from both files
    long s2 = lake.append(trades, trades("2026-04-08T10:00", 1));
    refresh(s2, s1);

    // Then the footer of the first file was read once, by the first refresh, each footer in one
    // ranged read of the file's end
    Map<String, Integer> footers = OpenCountingFileIO.footerReadsByFile(under("trades"));
    assertThat(footers).hasSize(2);
    assertThat(footers).allSatisfy((file, reads) -> assertThat(reads).as(file).isEqualTo(1));
    assertThat(OpenCountingFileIO.tailReadsByFile(under("trades"))).isEqualTo(footers);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s2, OHLCV);
  }

  @Test
  void shouldMatchTheOracleThroughAppendsDeletesAndCompactionWithTheCachesOn() {
    // Given a view refreshed after an append
    long s1 = lake.append(trades, trades("2026-04-08T10:00", 4));
    refresh(s1, null);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s1, OHLCV);

    // When rows are appended, deleted by position, compacted, overwritten and deleted by equality
    long s2 = lake.append(trades, trades("2026-04-08T10:01", 3));
    refresh(s2, s1);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s2, OHLCV);
    long s3 = lake.deleteByPosition(trades, row -> ((Long) row.getField("quantity")) == 2L);
    refresh(s3, s2);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s3, OHLCV);
    long s4 = lake.compact(trades);
    refresh(s4, s3);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s4, OHLCV);
    long s5 =
        lake.overwrite(
            trades, row -> ((Long) row.getField("quantity")) == 3L, trades("2026-04-08T10:02", 2));
    refresh(s5, s4);
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s5, OHLCV);
    long s6 = lake.deleteByEquality(trades, List.of(1L));
    refresh(s6, s5);

    // Then the view equals its query over the source after every step
    OracleAssertions.assertMatches(lake.load("analytics", "ohlcv_1m"), trades, s6, OHLCV);
  }

  @Test
  void shouldLoadEachTableOnceAndReadNoMetadataFileTwiceInAnIncrementalRefresh() {
    // Given a view refreshed once
    long s1 = lake.append(trades, trades("2026-04-08T10:00", 3));
    refresh(s1, null);
    long s2 = lake.append(trades, trades("2026-04-08T10:01", 2));
    DirtyBuckets dirty = ViewRefresherTest.detected(lake.load("market", "trades"), s1, s2, view);
    catalog.reset();
    OpenCountingFileIO.reset();

    // When it refreshes incrementally
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(view, s2, s1, dirty), ViewRefresher.ProgressListener.NONE);

    // Then each table was looked up once and refreshed no more than its commits need
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    // The source is looked up once: loaded by the first refresh, whose parsed metadata this one
    // shares (SharedMetadataTables), it is asked for its current metadata file by a refresh
    assertThat(catalog.loads(SOURCE) + catalog.refreshes(SOURCE)).isEqualTo(1);
    assertThat(catalog.loads(TARGET)).isEqualTo(1);
    // Iceberg's own, as its commit starts and once it succeeded (to find the snapshot it saved);
    // Floe's own refreshes of the target after loading it, before each chunk and after each commit
    // made it 6
    assertThat(catalog.refreshes(TARGET)).isEqualTo(2);
    assertThat(OpenCountingFileIO.opensByFile(OpenCountingFileIO::isMetadataFile))
        .allSatisfy((file, opens) -> assertThat(opens).as(file).isEqualTo(1));
    // The manifest list and manifest of the source's first snapshot were read by the first
    // refresh: only the new snapshot's are read (3 and 5 without the caches)
    assertThat(OpenCountingFileIO.opens(OpenCountingFileIO::isManifestList)).isEqualTo(1);
    assertThat(OpenCountingFileIO.opens(OpenCountingFileIO::isManifest)).isEqualTo(1);
  }
}
