package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Views of fixed-stride buckets ({@code date_bin} and Trino's n-minute idiom) through the real
 * topology over a real catalog, checked against the oracle after every kind of source commit.
 */
class FixedStrideViewsTest {

  private static final String BARS_5M =
      """
      SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts,
             min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
             max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY symbol, date_bin(INTERVAL '5' MINUTE, ts)
      """;

  private static final String BARS_15M_IDIOM =
      """
      SELECT symbol,
             date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE AS bar_ts,
             max(price) AS high, sum(quantity) AS volume, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  private static final String BINS_7M_FROM_ORIGIN =
      """
      SELECT symbol, date_bin(INTERVAL '7' MINUTE, ts, TIMESTAMP '2026-04-08 10:02:00') AS bar_ts,
             sum(quantity) AS volume, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY 1, 2
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
        Arguments.of("bars_5m", BARS_5M, "2026-04-08T10:05:00Z", "2026-04-08T10:10:00Z"),
        Arguments.of("bars_15m", BARS_15M_IDIOM, "2026-04-08T10:00:00Z", "2026-04-08T10:15:00Z"),
        // From 10:02, seven-minute bins start at 09:55, 10:02, 10:09: before the origin as after.
        Arguments.of(
            "bins_7m", BINS_7M_FROM_ORIGIN, "2026-04-08T10:02:00Z", "2026-04-08T10:09:00Z"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("views")
  void shouldMatchTheOracleThroughAppendsLateDataDeletesAndOverwrites(
      String name, String query, String lateBucketStart, String lateBucketEnd) {
    // Given a view refreshed fully over trades on both sides of several bucket boundaries
    long first =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T09:58:59Z", 9.0, 2L, "B"),
                lake.trade("AAPL", "2026-04-08T10:01:59.999999Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T10:02:00Z", 10.5, 3L, "S"),
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
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T11:32:10Z", 12.5, 1L, "S")));
    List<RefreshEvent> appendRefresh = announced(name, query, append);
    assertThat(appendRefresh)
        .singleElement()
        .extracting(RefreshEvent::getMode)
        .isEqualTo(RefreshMode.INCREMENTAL);

    // When a late trade lands in an old bucket, only that bucket is recomputed
    long late =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:05:00Z", 95.0, 9L, "S")));
    List<RefreshEvent> lateRefresh = announced(name, query, late);
    assertThat(lateRefresh)
        .singleElement()
        .extracting(RefreshEvent::getMode)
        .isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(lateRefresh.get(0).getDirtyRanges()).hasSize(1);
    assertThat(lateRefresh.get(0).getDirtyRanges().get(0).getStart())
        .isEqualTo(Instant.parse(lateBucketStart));
    assertThat(lateRefresh.get(0).getDirtyRanges().get(0).getEnd())
        .isEqualTo(Instant.parse(lateBucketEnd));

    // When rows are deleted
    long delete =
        lake.deleteByPosition(
            trades,
            r -> r.getField("symbol").equals("MSFT") && ((Long) r.getField("quantity")) == 1L);
    announced(name, query, delete);

    // When rows are overwritten, some into other buckets
    long overwrite =
        lake.overwrite(
            trades,
            r -> r.getField("symbol").equals("AAPL"),
            List.of(
                lake.trade("AAPL", "2026-04-08T10:03:00Z", 20.0, 10L, "B"),
                lake.trade("AAPL", "2026-04-08T12:00:00Z", 21.0, 11L, "S")));
    announced(name, query, overwrite);

    // Then the view equals the query evaluated from scratch (announced() asks the oracle)
    assertThat(floe.target(name).currentSnapshot().summary())
        .containsEntry("floe.source-snapshot-id", Long.toString(overwrite));
  }

  /**
   * Announces the source's commit {@code snapshot}, waits until Floe is idle and checks that view
   * {@code name} then equals {@code query} evaluated from scratch at that snapshot.
   *
   * @return the refresh events Floe published meanwhile
   */
  private List<RefreshEvent> announced(String name, String query, long snapshot) {
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));
    List<RefreshEvent> events = floe.events();
    OracleAssertions.assertMatches(floe.target(name), trades, snapshot, query);
    return events;
  }

  @Test
  void shouldReadADateBinOriginInTheViewsZoneAndBinOnAbsoluteTime() {
    // Given trades on both sides of Paris's spring DST change (01:00 UTC on 2026-03-29)
    long snapshot =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-03-28T22:59:59Z", 10.0, 1L, "B"),
                lake.trade("AAPL", "2026-03-28T23:00:00Z", 11.0, 2L, "B"),
                lake.trade("AAPL", "2026-03-29T04:59:59Z", 12.0, 3L, "S"),
                lake.trade("AAPL", "2026-03-29T05:00:00Z", 13.0, 4L, "S"),
                lake.trade("MSFT", "2026-07-01T06:00:00Z", 99.0, 5L, "B")));
    String paris =
        """
        SELECT symbol, date_bin(INTERVAL '6' HOUR, ts, TIMESTAMP '2024-01-01 00:00:00') AS bin_ts,
               sum(quantity) AS volume, count(*) AS trade_count
        FROM lake.market.trades
        GROUP BY 1, 2
        """;
    floe.define(
        new ViewDefinition(
            "bins_6h_paris",
            paris,
            TableName.parse("lake.analytics.bins_6h_paris"),
            List.of(),
            java.time.ZoneId.of("Europe/Paris"),
            null));

    // When it is refreshed
    floe.idle(Duration.ofSeconds(1));

    // Then it equals the UTC query from the same instant, midnight CET being 23:00 UTC, in summer
    // as in winter: 6-hour bins of absolute time
    String utc = paris.replace("2024-01-01 00:00:00", "2023-12-31 23:00:00");
    OracleAssertions.assertMatches(floe.target("bins_6h_paris"), trades, snapshot, utc);
  }

  @Test
  void shouldPartitionFiveMinuteBarsByDayUnlessTheViewAsksForHours() {
    // Given trades and two 5-minute views, one with the default layout, one partitioned by hour
    long snapshot =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:01:00Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T11:59:00Z", 11.0, 5L, "B")));
    floe.define("bars_5m", BARS_5M);
    floe.define(
        new ViewDefinition(
            "bars_5m_hourly",
            BARS_5M,
            TableName.parse("lake.analytics.bars_5m_hourly"),
            List.of(TargetPartitionField.parse("hour(bar_ts)")),
            ViewDefinition.UTC,
            null));

    // When both are refreshed
    floe.idle(Duration.ofSeconds(1));

    // Then each target has its layout and the oracle's rows
    assertThat(floe.target("bars_5m").spec().fields())
        .singleElement()
        .satisfies(field -> assertThat(field.transform().toString()).isEqualTo("day"));
    assertThat(floe.target("bars_5m_hourly").spec().fields())
        .singleElement()
        .satisfies(field -> assertThat(field.transform().toString()).isEqualTo("hour"));
    OracleAssertions.assertMatches(floe.target("bars_5m"), trades, snapshot, BARS_5M);
    OracleAssertions.assertMatches(floe.target("bars_5m_hourly"), trades, snapshot, BARS_5M);
  }
}
