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
