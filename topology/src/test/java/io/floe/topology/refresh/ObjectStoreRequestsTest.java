package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.iceberg.RequestKind;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store requests a refresh reports, by stage and kind, over a real catalog whose FileIO
 * Floe counts: a small known table, so that every request can be accounted for. The source is
 * written through a catalog of its own, as another process would: nothing of it is in Floe's caches
 * until Floe reads it.
 */
class ObjectStoreRequestsTest {

  // Bars that recompute their dirty minutes: the requests of the source and target side alone, no
  // partial states (PartialStatesRefreshTest has those).
  private static final String OHLCV = TradeViews.OHLCV_1M_RECOMPUTED;
  private static final TableIdentifier SOURCE = TableIdentifier.of("market", "trades");

  @TempDir Path dir;
  private IcebergFixture writer;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;
  private final ViewDefinition view =
      ViewDefinition.of("ohlcv_1m", OHLCV, TableName.parse("lake.analytics.ohlcv_1m"));

  @BeforeEach
  void setUp() {
    writer = IcebergFixture.create(dir);
    lake = IcebergFixture.create(CountingFileIO.install(writer.catalogProperties()));
    trades = writer.createTrades("market", "trades");
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
    writer.close();
  }

  @Test
  void shouldReportEveryRequestOfAFirstRefreshByStage() {
    // Given one source snapshot of one data file
    long s1 = writer.append(trades, someTrades());

    // When the view's first refresh creates its target and computes every bucket
    RefreshOutcome first = refresh(s1, null);

    // Then each table load read one metadata file; a manifest list is opened by its location
    // only, and read whole to learn its length, with no HEAD first; Parquet reads a footer's
    // length, then the footer
    RequestCounts requests = first.requests();
    assertThat(count(requests, RequestStage.PLAN))
        .containsExactly(
            // the source's; not the new target's, which plan wrote (2 on main)
            entry(RequestKind.TABLE_METADATA, 1),
            // the source's, read whole for its length and kept (2 before, read again)
            entry(RequestKind.MANIFEST_LIST, 1),
            entry(RequestKind.MANIFEST, 1),
            entry(RequestKind.PUT, 1)); // the target's first metadata file
    assertThat(count(requests, RequestStage.READ))
        .containsExactly(entry(RequestKind.DATA_FOOTER, 2), entry(RequestKind.DATA_RANGE, 1));
    assertThat(count(requests, RequestStage.WRITE)).containsExactly(entry(RequestKind.PUT, 1));
    // The committed metadata and manifest list, read back by Iceberg's commit, and the new
    // manifest, read by maintenance, come from what was written (3 reads on main)
    assertThat(count(requests, RequestStage.COMMIT))
        .containsExactly(entry(RequestKind.PUT, 3)); // manifest, manifest list, metadata
    assertThat(count(requests, RequestStage.MAINTAIN)).isEmpty();
    // 16 on main with the source written elsewhere, 12 before the manifest list read was kept
    assertThat(requests.total()).isEqualTo(11);
    assertThat(requests.bytesWritten()).isPositive();
    assertThat(requests.bytesRead()).isGreaterThan(first.work().bytesRead());
  }

  @Test
  void shouldReportTheRequestsOfAnIncrementalRefreshAndChangeNoResult() {
    // Given a refreshed view and a second source file
    long s1 = writer.append(trades, someTrades());
    refresh(s1, null);
    long s2 =
        writer.append(trades, List.of(writer.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B")));

    // When the view is refreshed incrementally
    RefreshOutcome second = refresh(s2, ViewRefresherTest.detected(trades, s1, s2, view), s1);

    // Then planning read the source's new metadata file, its manifest list once and its new
    // manifest once (the other is kept from the first refresh's read: 2 and 2 before), and the
    // target's metadata not at all (Floe wrote it); both source files were read, the new one's
    // footer
    // first (the other's footer is still cached from the first refresh); the target's rows to
    // replace were found from its manifests, and the commit read back nothing, all of them
    // written by Floe (21 on main with the source written elsewhere: plan 2 table-metadata, write
    // a manifest list and a manifest, commit a metadata file, manifest list and manifest,
    // maintenance a manifest; 14 before the manifests and manifest lists read were kept)
    RequestCounts requests = second.requests();
    assertThat(requests.count(RequestKind.TABLE_METADATA, RequestStage.PLAN)).isEqualTo(1);
    assertThat(requests.count(RequestKind.MANIFEST, RequestStage.PLAN)).isEqualTo(1);
    assertThat(requests.count(RequestKind.DATA_FOOTER, RequestStage.READ)).isEqualTo(2);
    assertThat(requests.count(RequestStage.WRITE)).isEqualTo(1);
    assertThat(requests.count(RequestKind.PUT, RequestStage.WRITE)).isEqualTo(1);
    assertThat(requests.count(RequestKind.PUT, RequestStage.COMMIT)).isEqualTo(4);
    assertThat(requests.count(RequestStage.COMMIT)).isEqualTo(4);
    assertThat(requests.count(RequestStage.MAINTAIN)).isZero();
    assertThat(requests.count(RequestStage.OTHER)).isZero();
    assertThat(requests.total()).as(requests.toString()).isEqualTo(12);
    OracleAssertions.assertMatches(
        lake.catalog().loadTable(view.target().identifier()), trades, s2, OHLCV);
  }

  @Test
  void shouldReadEachManifestOnceWhenViewsOfOneSourceRefreshAtOnce() throws Exception {
    // Given a source of eight appends by another writer, read by none of three views yet
    long snapshot = 0;
    for (int minute = 0; minute < 8; minute++) {
      snapshot =
          writer.append(
              trades,
              List.of(writer.trade("AAPL", "2026-04-08T10:0" + minute + ":01Z", 10.0, 5L, "B")));
    }
    List<ViewDefinition> views = new ArrayList<>();
    for (String name : List.of("ohlcv_a", "ohlcv_b", "ohlcv_c")) {
      views.add(ViewDefinition.of(name, OHLCV, TableName.parse("lake.analytics." + name)));
    }

    // When the three views plan and refresh at once, as they do after a commit to their source
    long pinned = snapshot;
    List<RefreshOutcome> outcomes = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(views.size());
    try {
      List<Future<RefreshOutcome>> refreshes = new ArrayList<>();
      for (ViewDefinition each : views) {
        refreshes.add(
            pool.submit(
                () ->
                    refresher.refresh(
                        ViewRefresherTest.request(each, pinned, null, DirtyBuckets.none()),
                        ViewRefresher.ProgressListener.NONE)));
      }
      for (Future<RefreshOutcome> refresh : refreshes) {
        outcomes.add(refresh.get());
      }
    } finally {
      pool.shutdown();
    }

    // Then the source's metadata file, manifest list and eight manifests were read from the store
    // once between them, not once per view that asked while another's read was in flight, and
    // every view equals its query
    long metadata = 0;
    long manifestLists = 0;
    long manifests = 0;
    for (RefreshOutcome outcome : outcomes) {
      assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
      metadata += outcome.requests().count(RequestKind.TABLE_METADATA, RequestStage.PLAN);
      manifestLists += outcome.requests().count(RequestKind.MANIFEST_LIST, RequestStage.PLAN);
      manifests += outcome.requests().count(RequestKind.MANIFEST, RequestStage.PLAN);
    }
    assertThat(metadata).isEqualTo(1);
    assertThat(manifestLists).isEqualTo(1);
    assertThat(manifests).isEqualTo(8);
    for (ViewDefinition each : views) {
      OracleAssertions.assertMatches(
          lake.catalog().loadTable(each.target().identifier()), trades, pinned, OHLCV);
    }
  }

  @Test
  void shouldReadASourceCommitsMetadataFileOnceAcrossResolveDetectAndPlan() {
    // Given a refreshed view and a new source commit by another writer
    long s1 = writer.append(trades, someTrades());
    refresh(s1, null);
    long s2 =
        writer.append(trades, List.of(writer.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B")));
    RequestTally tally = new RequestTally();

    // When resolve and detect each load the source, as their processors do, and the view refreshes
    DirtyBuckets dirty;
    try (RequestStage.Scope counting = tally.open()) {
      Table resolved;
      try (RequestStage.Scope resolving = RequestStage.RESOLVE.enter()) {
        resolved = lake.catalog().loadTable(SOURCE);
      }
      try (RequestStage.Scope detecting = RequestStage.DETECT.enter()) {
        dirty = ViewRefresherTest.detected(lake.catalog().loadTable(SOURCE), s1, s2, view);
      }
      assertThat(resolved.currentSnapshot().snapshotId()).isEqualTo(s2);
    }
    RefreshOutcome second = refresh(s2, dirty, s1);

    // Then the source's new metadata file was read from the store once, by resolve (three times
    // on main); the target's, which Floe's first refresh wrote, not at all, nor what its commit
    // wrote and read back
    RequestCounts resolveAndDetect = tally.counts();
    RequestCounts refresh = second.requests();
    assertThat(resolveAndDetect.count(RequestKind.TABLE_METADATA, RequestStage.RESOLVE))
        .isEqualTo(1);
    assertThat(
            resolveAndDetect.count(RequestKind.TABLE_METADATA)
                + refresh.count(RequestKind.TABLE_METADATA))
        .as(resolveAndDetect + " and " + refresh)
        .isEqualTo(1);
    assertThat(refresh.count(RequestKind.MANIFEST_LIST, RequestStage.COMMIT)).isZero();
    OracleAssertions.assertMatches(
        lake.catalog().loadTable(view.target().identifier()), trades, s2, OHLCV);
  }

  @Test
  void shouldMatchTheOracleThroughAppendsDeletesAndAnOverwriteWithMetadataFromTheCache() {
    // Given a view refreshed after an append
    long s1 = writer.append(trades, someTrades());
    refresh(s1, null);
    assertMatchesOracle(s1);

    // When rows are appended, deleted by position, overwritten and deleted by equality, the view
    // refreshed after each from metadata Floe read or wrote before
    long s2 =
        writer.append(trades, List.of(writer.trade("IBM", "2026-04-08T10:01:10Z", 5.0, 3L, "S")));
    refreshAfter(s1, s2);
    assertMatchesOracle(s2);
    long s3 = writer.deleteByPosition(trades, row -> ((Long) row.getField("quantity")) == 7L);
    refreshAfter(s2, s3);
    assertMatchesOracle(s3);
    long s4 =
        writer.overwrite(
            trades,
            row -> ((Long) row.getField("quantity")) == 3L,
            List.of(writer.trade("IBM", "2026-04-08T10:02:00Z", 6.0, 4L, "B")));
    refreshAfter(s3, s4);
    assertMatchesOracle(s4);
    long s5 = writer.deleteByEquality(trades, List.of(1L));
    refreshAfter(s4, s5);

    // Then the view equals its query over the source after every step
    assertMatchesOracle(s5);
  }

  private void refreshAfter(long previous, long snapshot) {
    Table source = lake.catalog().loadTable(SOURCE);
    RefreshOutcome outcome =
        refresh(snapshot, ViewRefresherTest.detected(source, previous, snapshot, view), previous);
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
  }

  private void assertMatchesOracle(long snapshot) {
    OracleAssertions.assertMatches(
        lake.catalog().loadTable(view.target().identifier()), trades, snapshot, OHLCV);
  }

  private RefreshOutcome refresh(long snapshot, DirtyBuckets dirty, Long watermark) {
    return refresher.refresh(
        ViewRefresherTest.request(view, snapshot, watermark, dirty),
        ViewRefresher.ProgressListener.NONE);
  }

  private RefreshOutcome refresh(long snapshot, Long watermark) {
    return refresh(snapshot, DirtyBuckets.none(), watermark);
  }

  private List<Record> someTrades() {
    return List.of(
        writer.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
        writer.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B"));
  }

  /** The requests of {@code stage}, by kind in declared order. */
  private static List<Map.Entry<RequestKind, Long>> count(
      RequestCounts requests, RequestStage stage) {
    return requests.entries().stream()
        .filter(e -> e.stage() == stage)
        .map(e -> entry(e.kind(), e.count()))
        .toList();
  }

  private static Map.Entry<RequestKind, Long> entry(RequestKind kind, long count) {
    return Map.entry(kind, count);
  }
}
