package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Views whose aggregates are mergeable but not decomposable ({@code avg}) keep their partial states
 * in a state table beside the target (issue 22, DESIGN §5): appends fold into the stored states,
 * reading only the appended rows, and every step equals the oracle (DESIGN §3.8), on a real JDBC
 * catalog with real Parquet files.
 */
class PartialStatesRefreshTest {

  private static final String DAILY_AVG =
      """
      SELECT symbol, date_trunc('day', ts) AS day, avg(price) AS mean, count(*) AS trades,
             sum(quantity) AS volume, max(price) AS high, avg(quantity) AS mean_quantity
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  /** The spread of prices and sizes: stddev and variance keep partial states. */
  private static final String SPREAD =
      """
      SELECT symbol, date_trunc('hour', ts) AS hour_ts, stddev(price) AS spread,
             var_pop(quantity) AS dispersion, variance(price) AS price_variance, count(*) AS n
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  /** OHLCV bars with the spread of prices: min_by, max_by and stddev keep partial states. */
  private static final String BARS =
      """
      SELECT symbol, date_trunc('hour', ts) AS hour_ts, min_by(price, ts) AS open,
             max(price) AS high, min(price) AS low, max_by(price, ts) AS close,
             sum(quantity) AS volume, stddev(price) AS spread, var_pop(quantity) AS dispersion,
             max_by(quantity, ts) AS last_size
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  /**
   * Weekly VWAP and other expressions over mergeable aggregates (issue 22): each keeps the states
   * of its parts, from which the output is computed as a recompute computes it.
   */
  private static final String WEEKLY_VWAP =
      """
      SELECT symbol, date_trunc('week', ts) AS week,
             sum(price * quantity) / sum(quantity) AS vwap, max(price) - min(price) AS price_range,
             sum(price) / count(*) AS mean_price,
             CAST(sum(quantity) AS double) / count(*) AS mean_size
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  /** HAVING over mergeable aggregates, one that appends can make pass and one they can fail. */
  private static final String BUSY_DAYS =
      """
      SELECT symbol, date_trunc('day', ts) AS day, count(*) AS trades, avg(price) AS mean
      FROM lake.market.trades
      GROUP BY 1, 2
      HAVING count(*) >= 30 AND min(price) > 5
      """;

  /** A sum of doubles: its state is the compensated sum. */
  private static final String TURNOVER =
      """
      SELECT symbol, date_trunc('day', ts) AS day, sum(price) AS turnover, count(*) AS n
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  private static final String DAILY =
      """
      SELECT symbol, date_trunc('day', ts) AS day, count(*) AS trades, sum(quantity) AS volume
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;
  private final Random random = new Random(7);
  private Long watermark;
  private final java.util.Map<String, Long> watermarks = new java.util.HashMap<>();

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  /** Refreshes {@code view} to the source's current snapshot and checks it against the oracle. */
  private RefreshOutcome refresh(ViewRefresher with, ViewDefinition view) {
    trades.refresh();
    long current = trades.currentSnapshot().snapshotId();
    DirtyBuckets dirty = ViewRefresherTest.detected(trades, watermark, current, view);
    RefreshOutcome outcome =
        with.refresh(
            ViewRefresherTest.request(view, current, watermark, dirty),
            ViewRefresher.ProgressListener.NONE);
    watermark = current;
    OracleAssertions.assertMatches(target(view), trades, current, view.query());
    return outcome;
  }

  private RefreshOutcome refresh(ViewDefinition view) {
    return refresh(refresher, view);
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private Table stateTable(ViewDefinition view) {
    return lake.catalog().loadTable(StateTable.identifier(view.target().identifier()));
  }

  private long appendToTheSameDays(int n) {
    return lake.append(trades, lake.randomTrades(random, n, "2026-04-07", 10, 14));
  }

  @Test
  void shouldFoldAppendsIntoTheStoredAveragesReadingOnlyTheAppendedRows() {
    // Given a daily view with averages, refreshed once over two days of trades
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-06", 8, 18));
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-07", 8, 18));
    assertThat(refresh(view).full()).isTrue();

    // When 20 trades are appended to a day that holds 300
    appendToTheSameDays(20);
    RefreshOutcome outcome = refresh(view);

    // Then the refresh folds them into the stored states and reads only them (the oracle holds)
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(20);
    Table target = target(view);
    Table state = stateTable(view);
    assertThat(target.currentSnapshot().summary())
        .containsEntry(FloeProperties.REFRESH_MODE, "delta")
        .containsEntry(
            FloeProperties.STATE_SNAPSHOT_ID, Long.toString(state.currentSnapshot().snapshotId()));
    assertThat(target.properties())
        .containsEntry(
            FloeProperties.STATE_SNAPSHOT_ID, Long.toString(state.currentSnapshot().snapshotId()));
    // and the target's columns are exactly the view's; the states live in the state table
    assertThat(target.schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("symbol", "day", "mean", "trades", "volume", "high", "mean_quantity");
    assertThat(state.schema().columns())
        .extracting(Types.NestedField::name)
        .contains("mean__sum", "mean__compensation", "mean__count", "trades", "volume");
    assertThat(state.properties())
        .containsEntry(FloeProperties.VIEW, "daily_avg")
        .containsEntry(FloeProperties.STATE_OF, "lake.analytics.daily_avg");
  }

  @Test
  void shouldRecomputeTheDirtyBucketsAndTheirStatesAfterADelete() {
    // Given a view with averages that folded appends
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-07", 8, 18));
    refresh(view);
    appendToTheSameDays(15);
    assertThat(refresh(view).delta()).isTrue();

    // When rows are deleted, then more appended
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")));
    RefreshOutcome afterDelete = refresh(view);
    appendToTheSameDays(15);
    RefreshOutcome afterAppend = refresh(view);

    // Then the delete recomputes its buckets, and the states it rewrote take the next append
    assertThat(afterDelete.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(afterAppend.delta()).isTrue();
    assertThat(afterAppend.work().rowsRead()).isEqualTo(15);
  }

  @Test
  void shouldStayExactWhenStoppedBetweenTheStateCommitAndTheTargetCommit() {
    // Given a view with averages, refreshed once
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-07", 8, 18));
    refresh(view);
    long recorded = stateTable(view).currentSnapshot().snapshotId();

    // When a refresh of an append stops after committing the states and before the target
    long appended = appendToTheSameDays(10);
    ViewRefresher stopping =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void stateCommitted(String name, ChunkId chunk) {
                throw new IllegalStateException("stopped after the state commit");
              }
            });
    assertThatThrownBy(
            () ->
                stopping.refresh(
                    ViewRefresherTest.request(
                        view,
                        appended,
                        watermark,
                        ViewRefresherTest.detected(trades, watermark, appended, view)),
                    ViewRefresher.ProgressListener.NONE))
        .hasMessage("stopped after the state commit");
    assertThat(stateTable(view).currentSnapshot().snapshotId()).isNotEqualTo(recorded);

    // Then the next refresh sets the states back to those the target records and folds once
    RefreshOutcome outcome = refresh(view);
    assertThat(outcome.delta()).isTrue();
    appendToTheSameDays(10);
    assertThat(refresh(view).delta()).isTrue();
  }

  @Test
  void shouldRebuildTheStatesWithAFullRefreshWhenTheRecordedOnesAreGone() {
    // Given a view with averages whose state table was dropped
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-07", 8, 18));
    refresh(view);
    lake.catalog().dropTable(StateTable.identifier(view.target().identifier()), true);

    // When rows are appended
    appendToTheSameDays(10);
    RefreshOutcome outcome = refresh(view);

    // Then the refresh is full and says why, and the rebuilt states take the next append
    assertThat(outcome.full()).isTrue();
    assertThat(outcome.reason())
        .isEqualTo("the partial states of view daily_avg are not those its target records");
    appendToTheSameDays(10);
    RefreshOutcome next = refresh(view);
    assertThat(next.delta()).isTrue();
    assertThat(next.work().rowsRead()).isEqualTo(10);
  }

  @Test
  void shouldRebuildEveryStateOnAForcedFullRefresh() {
    // Given a view with averages over two days that folded an append
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-06", 8, 18));
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-07", 8, 18));
    refresh(view);
    appendToTheSameDays(10);
    refresh(view);

    // When one day's rows are deleted and a full refresh is forced
    long deleted = lake.deleteFiles(trades, r -> true);
    lake.append(trades, lake.randomTrades(random, 50, "2026-04-07", 8, 18));
    trades.refresh();
    long current = trades.currentSnapshot().snapshotId();
    RefreshOutcome forced =
        refresher.refresh(
            new RefreshRequest(
                ViewRefresherTest.compiled(view),
                RefreshId.forced(view.name(), view.version(), current, 1),
                null,
                watermark,
                new RefreshRequest.Forced("requested")),
            ViewRefresher.ProgressListener.NONE);
    watermark = current;

    // Then the target and its states hold only the groups of the source as it is now
    assertThat(deleted).isPositive();
    assertThat(forced.full()).isTrue();
    OracleAssertions.assertMatches(target(view), trades, current, view.query());
    assertThat(groupsOfStates(stateTable(view), "day")).isEqualTo(count(target(view)));
    appendToTheSameDays(5);
    assertThat(refresh(view).delta()).isTrue();
  }

  @Test
  void shouldFoldAppendsIntoTheStoredMomentsOfStandardDeviationsAndVariances() {
    // Given hourly spreads (stddev, var_pop, variance), refreshed once
    ViewDefinition view = view("spread", SPREAD);
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-07", 10, 14));
    refresh(view);

    // When trades are appended to the same hours
    lake.append(trades, lake.randomTrades(random, 20, "2026-04-07", 10, 14));
    RefreshOutcome outcome = refresh(view);

    // Then the appended rows alone are read and folded (the oracle holds)
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(20);
    assertThat(stateTable(view).schema().columns())
        .extracting(Types.NestedField::name)
        .contains("spread__count", "spread__mean", "spread__m2", "n");
  }

  @Test
  void shouldFoldAppendsIntoTheStoredExtremesAndMomentsOfBars() {
    // Given hourly bars with min_by, max_by, stddev and var_pop, refreshed once
    ViewDefinition view = view("bars", BARS);
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-07", 10, 14));
    refresh(view);

    // When trades are appended to the same hours, two of them at the exact time of an existing
    // trade (a tie on the key of min_by and max_by, broken by the value as a recompute breaks it)
    trades.refresh();
    Record first = IcebergFixture.readAll(trades, trades.currentSnapshot().snapshotId()).get(0);
    List<Record> appended =
        new java.util.ArrayList<>(lake.randomTrades(random, 18, "2026-04-07", 10, 14));
    for (double price : new double[] {0.5, 1e6}) {
      Record tie = first.copy();
      tie.setField("id", 100_000L + (long) price);
      tie.setField("price", price);
      appended.add(tie);
    }
    lake.append(trades, appended);
    RefreshOutcome outcome = refresh(view);

    // Then the appended rows alone are read and folded (the oracle holds)
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(20);
    assertThat(stateTable(view).schema().columns())
        .extracting(Types.NestedField::name)
        .contains("open__key", "open__value", "spread__count", "spread__mean", "spread__m2");
  }

  @Test
  void shouldExpireTheStateTablesSnapshotsAsATargetsAndKeepTheOneItsTargetRecords()
      throws InterruptedException {
    // Given a view with averages, refreshed once; its state table made to keep two snapshots
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-07", 8, 18));
    refresh(view);
    assertThat(stateTable(view).properties())
        .as("a new state table's retention, as a target's")
        .containsEntry(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
        .containsKeys(TableProperties.MAX_SNAPSHOT_AGE_MS, TableProperties.MIN_SNAPSHOTS_TO_KEEP);
    stateTable(view)
        .updateProperties()
        .set(TableProperties.MAX_SNAPSHOT_AGE_MS, "1")
        .set(TableProperties.MIN_SNAPSHOTS_TO_KEEP, "2")
        .commit();

    // When five more appends are folded in, one refresh each
    for (int i = 0; i < 5; i++) {
      Thread.sleep(5);
      appendToTheSameDays(10);
      assertThat(refresh(view).delta()).isTrue();
    }

    // Then the state table keeps few snapshots, among them the one the target records, and the
    // next fold trusts it (the oracle holds at each step)
    Table state = stateTable(view);
    assertThat(state.snapshots()).hasSizeLessThanOrEqualTo(3);
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(
            FloeProperties.STATE_SNAPSHOT_ID, Long.toString(state.currentSnapshot().snapshotId()));
    appendToTheSameDays(10);
    assertThat(refresh(view).delta()).isTrue();
  }

  @Test
  void shouldKeepNoStateTableForBarsOfMinutesWhichRecomputeTheirDirtyMinutes() {
    // Given 1-minute bars (min_by and max_by, whose states would merge), refreshed once
    ViewDefinition view = view("bars_1m", BARS.replace("'hour'", "'minute'"));
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-07", 10, 12));
    assertThat(refresh(view).full()).isTrue();

    // When trades are appended
    appendToTheSameDays(10);
    RefreshOutcome outcome = refresh(view);

    // Then the dirty minutes are recomputed (the oracle holds), and no state table exists
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(lake.catalog().tableExists(StateTable.identifier(view.target().identifier())))
        .isFalse();
  }

  @Test
  void shouldKeepNoStateTableForADecomposableView() {
    // Given a view of counts and sums only
    ViewDefinition view = view("daily", DAILY);
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-07", 8, 18));

    // When it is refreshed, and folds an append
    refresh(view);
    appendToTheSameDays(5);
    RefreshOutcome outcome = refresh(view);

    // Then it takes the delta path on its own rows, with no state table
    assertThat(outcome.delta()).isTrue();
    assertThat(lake.catalog().tableExists(StateTable.identifier(view.target().identifier())))
        .isFalse();
    assertThat(target(view).properties()).doesNotContainKey(FloeProperties.STATE_SNAPSHOT_ID);
  }

  @Test
  void shouldFoldAppendsIntoTheStatesOfTheAggregatesOfAVwapAndOtherExpressions() {
    // Given a weekly VWAP view with other expressions over aggregates, refreshed over two weeks
    ViewDefinition view = view("weekly_vwap", WEEKLY_VWAP);
    lake.append(trades, lake.randomTrades(random, 300, "2026-03-31", 8, 18));
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-07", 8, 18));
    assertThat(refresh(view).full()).isTrue();

    // When 20 trades are appended to the second week, twice
    appendToTheSameDays(20);
    RefreshOutcome first = refresh(view);
    appendToTheSameDays(20);
    RefreshOutcome second = refresh(view);

    // Then each refresh folds only the appended rows into the states (the oracle holds), which
    // the state table keeps per part of each expression
    assertThat(first.delta()).isTrue();
    assertThat(first.work().rowsRead()).isEqualTo(20);
    assertThat(second.delta()).isTrue();
    assertThat(second.work().rowsRead()).isEqualTo(20);
    assertThat(stateTable(view).schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly(
            "symbol",
            "week",
            "floe__sub_bucket",
            "vwap__1__sum",
            "vwap__1__compensation",
            "vwap__2",
            "price_range__1",
            "price_range__2",
            "mean_price__1__sum",
            "mean_price__1__compensation",
            "mean_price__2");
    assertThat(target(view).schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("symbol", "week", "vwap", "price_range", "mean_price", "mean_size");
  }

  @Test
  void shouldComputeAFoldedVwapOfNoQuantityAsTheRecomputeDoes() {
    // Given a VWAP view and a twin that recomputes, over a week whose IBM trades have no quantity
    ViewDefinition view = view("weekly_vwap", WEEKLY_VWAP);
    ViewDefinition recomputed = view("weekly_vwap_full", WEEKLY_VWAP);
    lake.append(
        trades,
        List.of(
            lake.trade("IBM", "2026-04-07T10:00:00Z", 10.0, 0L, "B"),
            lake.trade("AAPL", "2026-04-07T10:00:00Z", 10.0, 5L, "B")));
    refreshWithoutOracle(view);

    // When IBM trades of no quantity are appended and folded
    lake.append(
        trades,
        List.of(
            lake.trade("IBM", "2026-04-08T10:00:00Z", 12.0, 0L, "S"),
            lake.trade("AAPL", "2026-04-08T10:00:00Z", 12.0, 5L, "S")));
    RefreshOutcome folded = refreshWithoutOracle(view);
    refreshWithoutOracle(recomputed);

    // Then the folded rows (a division of zero by zero among them) equal the recomputed ones
    assertThat(folded.delta()).isTrue();
    List<Record> expected = IcebergFixture.readAll(target(recomputed), snapshotOf(recomputed));
    List<Record> actual = IcebergFixture.readAll(target(view), snapshotOf(view));
    assertThat(actual).hasSize(2);
    assertThat(actual.toString()).isEqualTo(expected.toString());
  }

  @Test
  void shouldShowAGroupThatAnAppendMakesPassTheHavingAndDropOneThatItMakesFail() {
    // Given busy days (HAVING count(*) >= 30 AND min(price) > 5): AAPL with 25 trades, MSFT with 40
    ViewDefinition view = view("busy_days", BUSY_DAYS);
    lake.append(trades, trades("AAPL", 25, 10.0));
    lake.append(trades, trades("MSFT", 40, 20.0));
    refresh(view);
    assertThat(symbols(view)).containsExactly("MSFT");

    // When 10 AAPL trades and one cheap MSFT trade are appended
    List<Record> appended = new java.util.ArrayList<>(trades("AAPL", 10, 11.0));
    appended.add(lake.trade("MSFT", "2026-04-07T15:00:00Z", 1.0, 5L, "B"));
    lake.append(trades, appended);
    RefreshOutcome outcome = refresh(view);

    // Then the refresh folds them: AAPL now passes and appears, MSFT fails and disappears
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(11);
    assertThat(symbols(view)).containsExactly("AAPL");
  }

  @Test
  void shouldFoldAppendsIntoACompensatedSumOfDoubles() {
    // Given a daily sum of prices whose TSLA group holds 1e16, refreshed once
    ViewDefinition view = view("turnover", TURNOVER);
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-07", 8, 18));
    lake.append(trades, List.of(lake.trade("TSLA", "2026-04-07T09:00:00Z", 1e16, 1L, "B")));
    refresh(view);

    // When 1.0 is appended to it twice, a refresh each
    lake.append(trades, List.of(lake.trade("TSLA", "2026-04-07T10:00:00Z", 1.0, 1L, "B")));
    RefreshOutcome first = refresh(view);
    lake.append(trades, List.of(lake.trade("TSLA", "2026-04-07T11:00:00Z", 1.0, 1L, "B")));
    RefreshOutcome second = refresh(view);

    // Then both folds read their row alone, and the sum is 1e16 + 2 as a recompute gives it (a
    // rounded sum would have stayed 1e16)
    assertThat(first.delta()).isTrue();
    assertThat(second.delta()).isTrue();
    assertThat(second.work().rowsRead()).isEqualTo(1);
    Table target = target(view);
    double ibm =
        IcebergFixture.readAll(target, target.currentSnapshot().snapshotId()).stream()
            .filter(r -> "TSLA".equals(r.getField("symbol")))
            .mapToDouble(r -> (Double) r.getField("turnover"))
            .findFirst()
            .orElseThrow();
    assertThat(ibm).isEqualTo(1e16 + 2);
    assertThat(stateTable(view).schema().columns())
        .extracting(Types.NestedField::name)
        .contains("turnover__sum", "turnover__compensation");
  }

  @Test
  void shouldFoldAppendsIntoDecimalExpressionsAtTheirScale() {
    // Given daily payments of decimal(10, 2) amounts, with expressions over their aggregates and a
    // twin view that recomputes, refreshed once
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            Types.NestedField.optional(1, "account", Types.StringType.get()),
            Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(3, "amount", Types.DecimalType.of(10, 2)));
    Table payments =
        lake.createTable(
            "bank", "payments", schema, org.apache.iceberg.PartitionSpec.unpartitioned());
    String query =
        """
        SELECT account, date_trunc('day', ts) AS day, max(amount) - min(amount) AS spread,
               sum(amount) * 2 AS doubled, sum(amount) / count(*) AS mean_amount
        FROM lake.bank.payments
        GROUP BY 1, 2
        """;
    ViewDefinition view = view("payments_daily", query);
    ViewDefinition recomputed = view("payments_daily_full", query);
    lake.append(payments, payments(schema, "A", "10.05", "20.10", "0.01"));
    refreshFrom(payments, view);

    // When more payments are appended and folded
    lake.append(payments, payments(schema, "A", "7.77", "1234.56"));
    RefreshOutcome folded = refreshFrom(payments, view);
    refreshFrom(payments, recomputed);

    // Then the folded row equals the recomputed one, scale and all (a spread and a doubled sum of
    // decimal(38, 2), a mean divided as a recompute divides it)
    assertThat(folded.delta()).isTrue();
    Record row = IcebergFixture.readAll(target(view), snapshotOf(view)).get(0);
    Record expected = IcebergFixture.readAll(target(recomputed), snapshotOf(recomputed)).get(0);
    assertThat(row.toString()).isEqualTo(expected.toString());
    assertThat(row.getField("spread")).isEqualTo(new java.math.BigDecimal("1234.55"));
    assertThat(row.getField("doubled")).isEqualTo(new java.math.BigDecimal("2544.98"));
  }

  private List<Record> payments(
      org.apache.iceberg.Schema schema, String account, String... amounts) {
    List<Record> rows = new java.util.ArrayList<>();
    for (String amount : amounts) {
      Record row = org.apache.iceberg.data.GenericRecord.create(schema);
      row.setField("account", account);
      row.setField(
          "ts", java.time.OffsetDateTime.parse("2026-04-07T10:00:00Z").plusMinutes(rows.size()));
      row.setField("amount", new java.math.BigDecimal(amount));
      rows.add(row);
    }
    return rows;
  }

  private RefreshOutcome refreshFrom(Table source, ViewDefinition view) {
    source.refresh();
    long current = source.currentSnapshot().snapshotId();
    Long since = watermarks.get(view.name());
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(
                view, current, since, ViewRefresherTest.detected(source, since, current, view)),
            ViewRefresher.ProgressListener.NONE);
    watermarks.put(view.name(), current);
    return outcome;
  }

  /** {@code n} trades of {@code symbol} on 2026-04-07, at prices from {@code price} up. */
  private List<Record> trades(String symbol, int n, double price) {
    List<Record> rows = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      rows.add(
          lake.trade(symbol, String.format("2026-04-07T10:%02d:00Z", i % 60), price + i, 10L, "B"));
    }
    return rows;
  }

  private List<Object> symbols(ViewDefinition view) {
    Table target = target(view);
    return IcebergFixture.readAll(target, target.currentSnapshot().snapshotId()).stream()
        .map(r -> r.getField("symbol"))
        .toList();
  }

  private long snapshotOf(ViewDefinition view) {
    return target(view).currentSnapshot().snapshotId();
  }

  /**
   * Refreshes {@code view} to the source's current snapshot, without the oracle (DuckDB divides by
   * zero to null, where Trino and Floe give IEEE results).
   */
  private RefreshOutcome refreshWithoutOracle(ViewDefinition view) {
    return refreshFrom(trades, view);
  }

  /** The weekly bars of the sub-bucket tests: OHLCV and an average, over a week bucket. */
  private static final String WEEKLY_BARS =
      """
      SELECT symbol, date_trunc('week', ts) AS week, min_by(price, ts) AS open,
             max(price) AS high, min(price) AS low, max_by(price, ts) AS close,
             sum(quantity) AS volume, avg(price) AS mean, stddev(price) AS spread
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  /** Trades appended one file an hour, as a streaming writer lands them. */
  private static final int TRADES_PER_HOUR = 40;

  private static final String[] DAYS = {"2026-04-06", "2026-04-07", "2026-04-08"};

  /**
   * A week of hourly files: {@value #TRADES_PER_HOUR} trades in each of hours 9 to 12 of three days
   * of one week, one append (one file) an hour; the weekly bars refreshed once, in full.
   */
  private ViewDefinition weeklyBarsOverHourlyFiles() {
    ViewDefinition view = view("weekly_bars", WEEKLY_BARS);
    for (String day : DAYS) {
      for (int hour = 9; hour < 13; hour++) {
        lake.append(trades, lake.randomTrades(random, TRADES_PER_HOUR, day, hour, hour + 1));
      }
    }
    assertThat(refresh(view).full()).isTrue();
    return view;
  }

  private static boolean inHour(Record trade, int dayOfMonth, int hour) {
    java.time.OffsetDateTime ts = (java.time.OffsetDateTime) trade.getField("ts");
    return ts != null && ts.getDayOfMonth() == dayOfMonth && ts.getHour() == hour;
  }

  @Test
  void shouldBuildTheStatesOfAWeeklyViewPerHourOnAFullRefresh() {
    // Given a week of hourly files
    // When the weekly bars are refreshed in full
    ViewDefinition view = weeklyBarsOverHourlyFiles();

    // Then the state table holds one row per group and hour, and its rows merge into the view's
    Table state = stateTable(view);
    assertThat(state.schema().findField(StateTable.SUB_BUCKET)).isNotNull();
    assertThat(target(view).schema().findField(StateTable.SUB_BUCKET)).isNull();
    assertThat(count(state)).isGreaterThan(count(target(view)));
    assertThat(groupsOfStates(state, "week")).isEqualTo(count(target(view)));
    assertThat(distinct(state, StateTable.SUB_BUCKET)).isEqualTo(DAYS.length * 4);
  }

  @Test
  void shouldFoldALateRowIntoTheStatesOfItsHour() {
    // Given weekly bars over hourly files
    ViewDefinition view = weeklyBarsOverHourlyFiles();

    // When a late trade lands in Monday's 10:00 hour
    lake.append(trades, lake.randomTrades(random, 1, "2026-04-06", 10, 11));
    RefreshOutcome outcome = refresh(view);

    // Then the refresh reads at most twice that hour's rows, not the week (the oracle holds)
    assertThat(outcome.work().rowsRead()).isLessThanOrEqualTo(2L * (TRADES_PER_HOUR + 1));
  }

  @Test
  void shouldRecomputeOnlyTheDirtyHourOfAWeekAfterADelete() {
    // Given weekly bars over hourly files
    ViewDefinition view = weeklyBarsOverHourlyFiles();

    // When the trades of one symbol in Tuesday's 11:00 hour are deleted
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")) && inHour(r, 7, 11));
    RefreshOutcome outcome = refresh(view);

    // Then only that hour is read again from the source, its stored states replaced, the other
    // hours' states merged in (the oracle holds)
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.work().rowsRead()).isPositive().isLessThanOrEqualTo(2L * TRADES_PER_HOUR);
    // and the rewritten states take the next append
    lake.append(trades, lake.randomTrades(random, 5, "2026-04-08", 12, 13));
    RefreshOutcome next = refresh(view);
    assertThat(next.delta()).isTrue();
    assertThat(next.work().rowsRead()).isEqualTo(5);
  }

  @Test
  void shouldRecomputeOnlyTheDirtyHourOfAWeekAfterAnOverwrite() {
    // Given weekly bars over hourly files
    ViewDefinition view = weeklyBarsOverHourlyFiles();

    // When the MSFT trades of Wednesday's 9:00 hour are replaced by two others of that hour
    lake.overwrite(
        trades,
        r -> "MSFT".equals(r.getField("symbol")) && inHour(r, 8, 9),
        lake.randomTrades(random, 2, "2026-04-08", 9, 10));
    RefreshOutcome outcome = refresh(view);

    // Then only that hour is read again (the oracle holds)
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.work().rowsRead()).isPositive().isLessThanOrEqualTo(2L * TRADES_PER_HOUR);
  }

  @Test
  void shouldStayExactWhenStoppedBetweenTheStateCommitAndTheTargetCommitOfADelete() {
    // Given weekly bars over hourly files
    ViewDefinition view = weeklyBarsOverHourlyFiles();
    long recorded = stateTable(view).currentSnapshot().snapshotId();

    // When a refresh of a delete stops after committing the states and before the target
    long deleted =
        lake.deleteByPosition(trades, r -> "AAPL".equals(r.getField("symbol")) && inHour(r, 6, 9));
    ViewRefresher stopping =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void stateCommitted(String name, ChunkId chunk) {
                throw new IllegalStateException("stopped after the state commit");
              }
            });
    assertThatThrownBy(
            () ->
                stopping.refresh(
                    ViewRefresherTest.request(
                        view,
                        deleted,
                        watermark,
                        ViewRefresherTest.detected(trades, watermark, deleted, view)),
                    ViewRefresher.ProgressListener.NONE))
        .hasMessage("stopped after the state commit");
    assertThat(stateTable(view).currentSnapshot().snapshotId()).isNotEqualTo(recorded);

    // Then the next refresh sets the states back and recomputes the hour once (the oracle holds)
    RefreshOutcome outcome = refresh(view);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.work().rowsRead()).isLessThanOrEqualTo(2L * TRADES_PER_HOUR);
    lake.append(trades, lake.randomTrades(random, 3, "2026-04-06", 9, 10));
    assertThat(refresh(view).delta()).isTrue();
  }

  @Test
  void shouldRebuildAStateTableOfTheLayoutWithoutSubBucketsWithOneFullRefresh() {
    // Given weekly bars whose state table has the layout of an earlier release (no sub-buckets)
    ViewDefinition view = weeklyBarsOverHourlyFiles();
    stateTable(view).updateSchema().deleteColumn(StateTable.SUB_BUCKET).commit();

    // When a trade is appended
    lake.append(trades, lake.randomTrades(random, 1, "2026-04-07", 10, 11));
    RefreshOutcome outcome = refresh(view);

    // Then the refresh is full and says why (the oracle holds), the states are kept per hour again
    // and the next change is cheap
    assertThat(outcome.full()).isTrue();
    assertThat(outcome.reason())
        .isEqualTo(
            "the state table of view weekly_bars had other columns than its partial states need"
                + " (no sub-buckets)");
    assertThat(stateTable(view).schema().findField(StateTable.SUB_BUCKET)).isNotNull();
    lake.deleteByPosition(trades, r -> "ORCL".equals(r.getField("symbol")) && inHour(r, 8, 12));
    RefreshOutcome next = refresh(view);
    assertThat(next.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(next.work().rowsRead()).isLessThanOrEqualTo(2L * TRADES_PER_HOUR);
  }

  /** The groups (symbol and bucket) of a state table's rows: its view's groups. */
  private static long groupsOfStates(Table state, String bucket) {
    java.util.Set<List<Object>> groups = new java.util.HashSet<>();
    for (Record r : IcebergFixture.readAll(state, state.currentSnapshot().snapshotId())) {
      groups.add(List.of(r.getField("symbol"), r.getField(bucket)));
    }
    return groups.size();
  }

  private static long distinct(Table table, String column) {
    java.util.Set<Object> values = new java.util.HashSet<>();
    for (Record r : IcebergFixture.readAll(table, table.currentSnapshot().snapshotId())) {
      values.add(r.getField(column));
    }
    return values.size();
  }

  private static long count(Table table) {
    long n = 0;
    for (Object ignored : IcebergFixture.readAll(table, table.currentSnapshot().snapshotId())) {
      n++;
    }
    return n;
  }
}
