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
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store requests a refresh reports, by stage and kind, over a real catalog whose FileIO
 * Floe counts: a small known table, so that every request can be accounted for.
 */
class ObjectStoreRequestsTest {

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
            CountingFileIO.install(IcebergFixture.create(dir).catalogProperties()));
    trades = lake.createTrades("market", "trades");
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReportEveryRequestOfAFirstRefreshByStage() {
    // Given one source snapshot of one data file
    long s1 = lake.append(trades, someTrades());

    // When the view's first refresh creates its target and computes every bucket
    RefreshOutcome first = refresh(s1, null);

    // Then each table load read one metadata file; a manifest list is opened by its location
    // only, and read whole to learn its length, with no HEAD first; Parquet reads a footer's
    // length, then the footer
    RequestCounts requests = first.requests();
    assertThat(count(requests, RequestStage.PLAN))
        .containsExactly(
            entry(RequestKind.TABLE_METADATA, 2), // the source's, the new target's
            entry(RequestKind.MANIFEST_LIST, 1),
            entry(RequestKind.MANIFEST, 1),
            entry(RequestKind.PUT, 1)); // the target's first metadata file
    assertThat(count(requests, RequestStage.READ))
        .containsExactly(entry(RequestKind.DATA_FOOTER, 2), entry(RequestKind.DATA_RANGE, 1));
    assertThat(count(requests, RequestStage.WRITE)).containsExactly(entry(RequestKind.PUT, 1));
    assertThat(count(requests, RequestStage.COMMIT))
        .containsExactly(
            entry(RequestKind.TABLE_METADATA, 1), // the committed metadata, read back
            entry(RequestKind.MANIFEST_LIST, 1), // its length known from writing it
            entry(RequestKind.PUT, 3)); // manifest, manifest list, metadata
    assertThat(count(requests, RequestStage.MAINTAIN))
        .containsExactly(entry(RequestKind.MANIFEST, 1));
    // 17 with a HEAD before each manifest list read
    assertThat(requests.total()).isEqualTo(15);
    assertThat(requests.bytesWritten()).isPositive();
    assertThat(requests.bytesRead()).isGreaterThan(first.bytesRead());
  }

  @Test
  void shouldReportTheRequestsOfAnIncrementalRefreshAndChangeNoResult() {
    // Given a refreshed view and a second source file
    long s1 = lake.append(trades, someTrades());
    refresh(s1, null);
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:45Z", 9.0, 2L, "B")));

    // When the view is refreshed incrementally
    RefreshOutcome second = refresh(s2, ViewRefresherTest.detected(trades, s1, s2, view), s1);

    // Then planning loaded each table once and read the source's two manifests; both source
    // files were read, the new one's footer first (the other's footer is still cached from the
    // first refresh); the target's rows to replace were found from its manifests
    RequestCounts requests = second.requests();
    assertThat(requests.count(RequestKind.TABLE_METADATA, RequestStage.PLAN)).isEqualTo(2);
    assertThat(requests.count(RequestKind.MANIFEST, RequestStage.PLAN)).isEqualTo(2);
    assertThat(requests.count(RequestKind.DATA_FOOTER, RequestStage.READ)).isEqualTo(2);
    assertThat(requests.count(RequestKind.MANIFEST, RequestStage.WRITE)).isEqualTo(1);
    assertThat(requests.count(RequestKind.PUT, RequestStage.WRITE)).isEqualTo(1);
    assertThat(requests.count(RequestStage.OTHER)).isZero();
    // 27 on main: a HEAD before each manifest list read, its own target manifest list read again
    assertThat(requests.total()).isEqualTo(20);
    OracleAssertions.assertMatches(
        lake.catalog().loadTable(view.target().identifier()), trades, s2, OHLCV);
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
        lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
        lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B"));
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
