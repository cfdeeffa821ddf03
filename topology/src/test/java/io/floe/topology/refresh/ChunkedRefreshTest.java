package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Large refreshes in chunks sized by the source rows and cut only where data is (DESIGN §5): real
 * tables, the first run of a 1-minute view, checked against the oracle.
 */
class ChunkedRefreshTest {

  private static final String OHLCV = TradeViews.OHLCV_1M;

  @TempDir Path dir;
  private IcebergFixture lake;
  private ViewRefresher refresher;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static ViewDefinition view(String name) {
    return ViewDefinition.of(name, OHLCV, TableName.parse("lake.analytics." + name));
  }

  private static ViewDefinition chunked(String name, int chunkBuckets) {
    return new ViewDefinition(
        name,
        OHLCV,
        TableName.parse("lake.analytics." + name),
        List.of(),
        null,
        new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(chunkBuckets)));
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private RefreshOutcome firstRefresh(ViewDefinition view, long snapshot) {
    return refresher.refresh(
        ViewRefresherTest.request(view, snapshot, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
  }

  /**
   * Thirty minutes of trades on 2026-04-08, and one trade in year 1 and one in 9999, each of those
   * in a file of its own: the source's extent spans ten thousand years of minutes.
   */
  private Table tradesWithOutliers(boolean partitioned) {
    Table trades =
        partitioned
            ? lake.createTrades("market", "trades")
            : lake.createTable(
                "market", "trades", IcebergFixture.TRADES, PartitionSpec.unpartitioned());
    List<Record> today = new ArrayList<>();
    for (int minute = 0; minute < 30; minute++) {
      String ts = String.format("2026-04-08T10:%02d:05Z", minute);
      today.add(lake.trade("AAPL", ts, 10.0 + minute, 1L, "B"));
    }
    lake.append(trades, today);
    lake.append(trades, List.of(lake.trade("AAPL", "0001-01-01T00:00:07Z", 1.0, 2L, "S")));
    lake.append(trades, List.of(lake.trade("MSFT", "9999-12-31T23:59:59Z", 2.0, 3L, "B")));
    return trades;
  }

  @ParameterizedTest(name = "day-partitioned: {0}")
  @ValueSource(booleans = {true, false})
  @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void shouldRefreshASourceWithOutliersInYearOneAnd9999InOneCommit(boolean partitioned) {
    Table trades = tradesWithOutliers(partitioned);
    ViewDefinition view = view("ohlcv_1m");

    RefreshOutcome outcome = firstRefresh(view, trades.currentSnapshot().snapshotId());

    // Before, chunks of a day of minutes walked from year 1 to 9999: 3.65 million commits.
    assertThat(outcome.work().chunks()).isEqualTo(1);
    assertThat(outcome.work().rowsWritten()).isEqualTo(32);
    OracleAssertions.assertMatches(
        target(view), trades, trades.currentSnapshot().snapshotId(), OHLCV);
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void shouldCapTheBucketsOfAChunkOverOutliersByTheBucketsThatHoldData() {
    Table trades = tradesWithOutliers(true);
    ViewDefinition view = chunked("ohlcv_1m", 7);
    List<String> progress = new ArrayList<>();

    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(
                view, trades.currentSnapshot().snapshotId(), null, DirtyBuckets.none()),
            p -> progress.add(p.toString()));

    // 1 + 30 + 1 minutes hold data.
    assertThat(outcome.work().chunks()).isEqualTo(5);
    assertThat(progress)
        .containsExactly(
            "7/32 buckets (chunk 1/5)",
            "14/32 buckets (chunk 2/5)",
            "21/32 buckets (chunk 3/5)",
            "28/32 buckets (chunk 4/5)",
            "32/32 buckets (chunk 5/5)");
    OracleAssertions.assertMatches(
        target(view), trades, trades.currentSnapshot().snapshotId(), OHLCV);
  }

  private static final String BINS_5M =
      """
      SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts, TIMESTAMP '2026-04-08 10:00:00') AS bar_ts,
             min_by(price, ts) AS open, max_by(price, ts) AS close, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void shouldChunkAStrideViewByTheBinsThatHoldData() {
    Table trades = tradesWithOutliers(true);
    ViewDefinition view =
        new ViewDefinition(
            "bins_5m",
            BINS_5M,
            TableName.parse("lake.analytics.bins_5m"),
            List.of(),
            null,
            new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.of(3)));
    List<String> progress = new ArrayList<>();

    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(
                view, trades.currentSnapshot().snapshotId(), null, DirtyBuckets.none()),
            p -> progress.add(p.toString()));

    // The thirty minutes from 10:00:05 fill six bins, and one bin each holds the trade of year 1
    // and of 9999. (An origin off the minute of year 1's trade would put its bin in year 0, where
    // DuckDB's calendar and java.time's part: the oracle cannot judge before year 1.)
    assertThat(progress)
        .containsExactly(
            "3/8 buckets (chunk 1/3)", "6/8 buckets (chunk 2/3)", "8/8 buckets (chunk 3/3)");
    assertThat(outcome.work().rowsWritten()).isEqualTo(8);
    OracleAssertions.assertMatches(
        target(view), trades, trades.currentSnapshot().snapshotId(), BINS_5M);
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void shouldResumeAChunkedRefreshOverOutliersAtTheChunkAfterTheLastCommittedOne() {
    Table trades = tradesWithOutliers(false);
    ViewDefinition view = chunked("ohlcv_1m", 7);
    long s = trades.currentSnapshot().snapshotId();
    RefreshRequest request = ViewRefresherTest.request(view, s, null, DirtyBuckets.none());
    assertThatThrownBy(
            () ->
                refresher.refresh(
                    request,
                    p -> {
                      if (p.chunksDone() == 2) {
                        throw new IllegalStateException("crash after chunk 2");
                      }
                    }))
        .hasMessage("crash after chunk 2");
    assertThat(target(view).properties())
        .hasEntrySatisfying(
            FloeProperties.PROGRESS, p -> assertThat(p).startsWith(request.id() + "#1/5;plan="));
    int snapshotsBefore = count(target(view).snapshots());

    List<String> progress = new ArrayList<>();
    RefreshOutcome resumed = refresher.refresh(request, p -> progress.add(p.toString()));

    assertThat(resumed.work().chunks()).isEqualTo(3);
    assertThat(progress)
        .containsExactly(
            "21/32 buckets (chunk 3/5)", "28/32 buckets (chunk 4/5)", "32/32 buckets (chunk 5/5)");
    assertThat(count(target(view).snapshots())).isEqualTo(snapshotsBefore + 3);
    OracleAssertions.assertMatches(target(view), trades, s, OHLCV);
  }

  @Test
  void shouldCommitTheFirstRunOverThirtyDaysOfTradesInOneCommit() {
    Table trades = lake.createTrades("market", "trades");
    Trades generator = new Trades(12);
    Instant start = Instant.parse("2026-03-01T00:00:00Z");
    List<Record> rows = new ArrayList<>();
    for (int day = 0; day < 30; day++) {
      Instant from = start.plus(Duration.ofDays(day));
      rows.addAll(generator.between(from, from.plus(Duration.ofDays(1)), 5040));
    }
    long s = lake.append(trades, rows);
    ViewDefinition view = view("ohlcv_1m");

    RefreshOutcome outcome = firstRefresh(view, s);

    // 151,200 rows in 30 day files: before, one commit per day of minutes.
    assertThat(outcome.work().rowsRead()).isEqualTo(151_200);
    assertThat(outcome.work().chunks()).isEqualTo(1);
    assertThat(floeCommits(target(view))).isEqualTo(1);
    OracleAssertions.assertMatches(target(view), trades, s, OHLCV);
  }

  @Test
  void shouldRemoveTargetRowsOfBucketsTheSourceNoLongerHoldsBeforeBetweenAndAfterChunks() {
    Table trades = lake.createTrades("market", "trades");
    for (int day = 1; day <= 5; day++) {
      List<Record> rows = new ArrayList<>();
      for (int minute = 0; minute < 4; minute++) {
        String ts = String.format("2026-04-%02dT10:%02d:05Z", day, minute);
        rows.add(lake.trade(day % 2 == 0 ? "AAPL" : "MSFT", ts, 10.0 + minute, 1L, "B"));
      }
      lake.append(trades, rows);
    }
    ViewDefinition view = chunked("ohlcv_1m", 3);
    firstRefresh(view, trades.currentSnapshot().snapshotId());
    // Days 1, 3 and 5 go: data is left on days 2 and 4 only.
    long s = lake.deleteFiles(trades, r -> "MSFT".equals(r.getField("symbol")));

    RefreshOutcome outcome =
        refresher.refresh(
            new RefreshRequest(
                ViewRefresherTest.compiled(view),
                RefreshId.forced(view.name(), view.version(), s, 1),
                null,
                null,
                new RefreshRequest.Forced("requested")),
            ViewRefresher.ProgressListener.NONE);

    // Eight minutes hold data, three a chunk; the stale target rows around them all go.
    assertThat(outcome.full()).isTrue();
    assertThat(outcome.work().chunks()).isEqualTo(3);
    assertThat(outcome.work().rowsRemoved()).isEqualTo(20);
    OracleAssertions.assertMatches(target(view), trades, s, OHLCV);
  }

  private static long floeCommits(Table table) {
    long n = 0;
    for (Snapshot snapshot : table.snapshots()) {
      if (snapshot.summary().containsKey(FloeProperties.REFRESH_ID)) {
        n++;
      }
    }
    return n;
  }

  private static int count(Iterable<?> items) {
    int n = 0;
    for (Object ignored : items) {
      n++;
    }
    return n;
  }
}
