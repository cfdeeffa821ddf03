package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Detection and refresh together, without Kafka: after every kind of source commit, each view
 * refreshed from the detected dirty buckets must equal the oracle (DESIGN §3.8).
 */
class IncrementalMaintenanceTest {

  private static final String OHLCV_1M = TradeViews.OHLCV_1M;
  private static final String OHLCV_1H =
      """
      SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts,
             min_by(open, minute_ts) AS open, max(high) AS high, min(low) AS low,
             max_by(close, minute_ts) AS close, sum(volume) AS volume,
             sum(trade_count) AS trade_count
      FROM lake.analytics.ohlcv_1m
      GROUP BY 1, 2
      """;
  private static final String WEEKLY =
      """
      SELECT symbol, side, date_trunc('week', ts) AS week, sum(quantity) AS volume,
             count(*) AS trades, count(DISTINCT symbol) AS one, arbitrary(side) AS some_side,
             approx_distinct(id) AS ids, avg(price) AS avg_price, bool_or(price > 100) AS any_big
      FROM lake.market.trades
      WHERE quantity > 0
      GROUP BY 1, 2, 3
      HAVING count(*) >= 1
      """;
  private static final String MONTHLY =
      """
      SELECT date_trunc('month', ts) AS month, count_if(side = 'B') AS buys,
             sum(price * quantity) / sum(quantity) AS vwap, count(*) AS n
      FROM lake.market.trades GROUP BY 1
      """;

  /** Decomposable: appends take the delta path. */
  private static final String VOLUME =
      """
      SELECT side, symbol, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume,
             count(*) AS trades, count(side) AS sided, min(price) AS low, max(price) AS high,
             count_if(price > 100) AS big, bool_and(quantity > 10) AS all_large,
             bool_or(quantity > 90) AS any_huge, arbitrary(id) AS some_id
      FROM lake.market.trades
      WHERE quantity > 0
      GROUP BY 3, 1, 2
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;
  private final Map<String, Long> watermarks = new HashMap<>();
  private final Random random = new Random(42);

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

  /** Detects and refreshes {@code view} for every snapshot of its source since its watermark. */
  private void maintain(ViewDefinition view, Table source) throws InvalidViewException {
    source.refresh();
    Snapshot current = source.currentSnapshot();
    Long watermark = watermarks.get(view.name());
    DirtyBuckets dirty = ViewRefresherTest.detected(source, watermark, current.snapshotId(), view);
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(view, current.snapshotId(), watermark, dirty),
            ViewRefresher.ProgressListener.NONE);
    assertThat(outcome.status()).isNotEqualTo(RefreshOutcome.Status.TARGET_AHEAD);
    watermarks.put(view.name(), current.snapshotId());
    OracleAssertions.assertMatches(
        lake.catalog().loadTable(view.target().identifier()),
        source,
        current.snapshotId(),
        view.query());
  }

  private List<Record> randomTrades(int n, String day, int hourFrom, int hourTo) {
    return lake.randomTrades(random, n, day, hourFrom, hourTo);
  }

  @Test
  void shouldEqualTheOracleAfterEveryKindOfCommit() throws InvalidViewException {
    ViewDefinition minute = view("ohlcv_1m", OHLCV_1M);
    ViewDefinition hour = view("ohlcv_1h", OHLCV_1H);
    ViewDefinition weekly = view("weekly", WEEKLY);
    ViewDefinition monthly = view("monthly", MONTHLY);
    ViewDefinition volume = view("volume", VOLUME);
    List<ViewDefinition> onTrades = List.of(minute, weekly, monthly, volume);

    // First run over existing data.
    lake.append(trades, randomTrades(200, "2026-04-06", 8, 18));
    lake.append(trades, randomTrades(200, "2026-04-07", 8, 18));
    step(onTrades, hour);

    // Appends into the same buckets and into new ones.
    lake.append(trades, randomTrades(50, "2026-04-07", 17, 20));
    step(onTrades, hour);

    // Late data: a few rows for a week ago, alongside fresh rows.
    List<Record> lateAndFresh = new ArrayList<>(randomTrades(3, "2026-03-30", 9, 10));
    lateAndFresh.addAll(randomTrades(20, "2026-04-08", 9, 10));
    lake.appendFilePerRow(trades, lateAndFresh);
    step(onTrades, hour);

    // Compaction: no rows change.
    lake.compact(trades);
    step(onTrades, hour);

    // Several appends with a compaction between them, refreshed at once.
    lake.append(trades, randomTrades(30, "2026-04-07", 15, 19));
    lake.compact(trades);
    lake.append(trades, randomTrades(30, "2026-04-08", 9, 11));
    step(onTrades, hour);

    // Row deletes through position and equality delete files; a group vanishes.
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")));
    step(onTrades, hour);
    lake.deleteByEquality(trades, List.of(1L, 2L, 3L, 150L, 380L));
    step(onTrades, hour);

    // An overwrite that moves rows between buckets.
    lake.overwrite(
        trades,
        r -> "ORCL".equals(r.getField("symbol")) && (Long) r.getField("quantity") < 30,
        randomTrades(10, "2026-04-09", 0, 3));
    step(onTrades, hour);

    // Nulls in the bucket column and in group keys.
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", null, 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-09T01:00:00Z", 10.0, 5L, null)));
    step(onTrades, hour);

    // Whole files deleted.
    lake.deleteFiles(trades, r -> true);
    step(onTrades, hour);
  }

  private void step(List<ViewDefinition> onTrades, ViewDefinition chained)
      throws InvalidViewException {
    for (ViewDefinition view : onTrades) {
      maintain(view, trades);
    }
    maintain(
        chained, lake.catalog().loadTable(TableName.parse("lake.analytics.ohlcv_1m").identifier()));
  }
}
