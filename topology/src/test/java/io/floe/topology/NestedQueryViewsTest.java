package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.refresh.RefreshHooks;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Views that read their source through a subquery in FROM or a WITH chain, through the real
 * topology over a real catalog, checked after every kind of source commit against the oracle, which
 * evaluates each query as written, subquery and WITH included, in DuckDB.
 */
class NestedQueryViewsTest {

  /**
   * A filtered, projected subquery under 5-minute bars; decomposable (a sum of longs, max, count),
   * so appends take the delta path.
   */
  private static final String BUYS_5M =
      """
      SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts,
             sum(qty) AS volume, max(price) AS high, count(*) AS trade_count
      FROM (SELECT symbol, ts, price, quantity AS qty, price * quantity AS notional
            FROM lake.market.trades
            WHERE side = 'B') AS buys
      WHERE notional > 0
      GROUP BY symbol, date_bin(INTERVAL '5' MINUTE, ts)
      """;

  /**
   * A WITH chain that filters, renames the bucket column and computes columns, under hourly
   * buckets; min_by makes every refresh recompute its buckets.
   */
  private static final String PRICED_1H =
      """
      WITH sized AS (
        SELECT ts, symbol, price, quantity FROM lake.market.trades WHERE quantity > 1
      ),
      priced AS (
        SELECT ts AS event_ts, upper(symbol) AS sym, price, price * quantity AS notional
        FROM sized
      )
      SELECT sym, date_trunc('hour', event_ts) AS hour_ts, min_by(price, event_ts) AS open,
             sum(notional) AS notional, count(*) AS trade_count
      FROM priced
      GROUP BY sym, date_trunc('hour', event_ts)
      """;

  @TempDir Path dir;
  private TopologyHarness floe;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() throws Exception {
    floe = new TopologyHarness(dir, Runnable::run, Runnable::run, RefreshHooks.NONE);
    lake = floe.lake;
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  static Stream<Arguments> views() {
    return Stream.of(
        Arguments.of("buys_5m", BUYS_5M, "2026-04-08T10:05:00Z", "2026-04-08T10:10:00Z"),
        Arguments.of("priced_1h", PRICED_1H, "2026-04-08T10:00:00Z", "2026-04-08T11:00:00Z"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("views")
  void shouldMatchTheOracleThroughAppendsLateDataDeletesAndOverwrites(
      String name, String query, String lateBucketStart, String lateBucketEnd) {
    // Given a view refreshed fully over trades the subquery keeps and drops, in several buckets
    long first =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T09:58:59Z", 9.0, 2L, "B"),
                lake.trade("AAPL", "2026-04-08T10:01:59.999999Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T10:02:00Z", 10.5, 1L, "S"),
                lake.trade("MSFT", "2026-04-08T10:07:30Z", 99.0, 7L, "B"),
                lake.trade("MSFT", "2026-04-08T10:14:59Z", 98.0, 1L, "S"),
                lake.trade("MSFT", "2026-04-08T10:15:00Z", 97.0, 4L, "B"),
                lake.trade("AAPL", "2026-04-08T11:31:00Z", 12.0, 6L, "B")));
    floe.define(name, query);
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.events())
        .singleElement()
        .extracting(RefreshEvent::getMode)
        .isEqualTo(RefreshMode.FULL);
    OracleAssertions.assertMatches(floe.target(name), trades, first, query);

    // When a fresh trade is appended
    long append =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T11:32:10Z", 12.5, 3L, "B")));
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));
    assertThat(floe.events())
        .singleElement()
        .extracting(RefreshEvent::getMode)
        .isEqualTo(RefreshMode.INCREMENTAL);
    OracleAssertions.assertMatches(floe.target(name), trades, append, query);

    // When a late trade lands in an old bucket, only that bucket is dirty: detection reads the
    // bounds of the source column the subquery passes through
    long late =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:05:00Z", 95.0, 9L, "B")));
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));
    List<RefreshEvent> lateRefresh = floe.events();
    assertThat(lateRefresh)
        .singleElement()
        .extracting(RefreshEvent::getMode)
        .isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(lateRefresh.get(0).getDirtyRanges()).hasSize(1);
    assertThat(lateRefresh.get(0).getDirtyRanges().get(0).getStart())
        .isEqualTo(Instant.parse(lateBucketStart));
    assertThat(lateRefresh.get(0).getDirtyRanges().get(0).getEnd())
        .isEqualTo(Instant.parse(lateBucketEnd));
    OracleAssertions.assertMatches(floe.target(name), trades, late, query);

    // When rows are deleted, one of them the only row its group keeps
    long delete =
        lake.deleteByPosition(
            trades,
            r -> r.getField("symbol").equals("MSFT") && ((Long) r.getField("quantity")) == 4L);
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));
    OracleAssertions.assertMatches(floe.target(name), trades, delete, query);

    // When rows are overwritten, some into other buckets and some out of the subquery's filter
    long overwrite =
        lake.overwrite(
            trades,
            r -> r.getField("symbol").equals("AAPL"),
            List.of(
                lake.trade("AAPL", "2026-04-08T10:03:00Z", 20.0, 10L, "B"),
                lake.trade("AAPL", "2026-04-08T10:04:00Z", 20.5, 1L, "S"),
                lake.trade("AAPL", "2026-04-08T12:00:00Z", 21.0, 11L, "B")));
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));

    // Then the view equals the query evaluated from scratch
    OracleAssertions.assertMatches(floe.target(name), trades, overwrite, query);
    assertThat(floe.target(name).currentSnapshot().summary())
        .containsEntry("floe.source-snapshot-id", Long.toString(overwrite));
  }
}
