package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe driven the way a user drives it, against a real Kafka broker in this JVM and a real JDBC
 * catalog: commits to the source table, commit notices on the topic, views on the views topic.
 * After every step each view must equal the oracle (DESIGN §3.8).
 */
class FloeServiceIT {

  static final String OHLCV_1M = TradeViews.OHLCV_1M;
  static final String OHLCV_1H =
      """
      SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts,
             min_by(open, minute_ts) AS open, max(high) AS high, min(low) AS low,
             max_by(close, minute_ts) AS close, sum(volume) AS volume,
             sum(trade_count) AS trade_count
      FROM lake.analytics.ohlcv_1m
      GROUP BY 1, 2
      """;
  static final String WEEKLY =
      """
      SELECT symbol, side, date_trunc('week', ts) AS week, sum(quantity) AS volume,
             count(*) AS trades
      FROM lake.market.trades
      GROUP BY 1, 2, 3
      """;
  static final String MONTHLY =
      """
      SELECT date_trunc('month', ts) AS month, count_if(side = 'B') AS buys, count(*) AS n
      FROM lake.market.trades GROUP BY 1
      """;

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private final Random random = new Random(7);

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private List<Record> randomTrades(int n, String day, int hourFrom, int hourTo) {
    return lake.randomTrades(random, n, day, hourFrom, hourTo);
  }

  @Test
  void shouldStopTheEngineWarmUpWithTheServiceWhileItWaitsForItsRounds() throws Exception {
    // Given a running service whose engine warm-up has begun (8 rounds, 2 s of quiet before each)
    FloeService service = floe.start("a");
    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> service.streams().state() == KafkaStreams.State.RUNNING);
    await().atMost(Duration.ofSeconds(30)).until(() -> warmUpThreads() > 0);

    // When the service stops
    service.close();

    // Then the warm-up ends with it instead of taking its remaining rounds in this JVM
    await().atMost(Duration.ofSeconds(5)).until(() -> warmUpThreads() == 0);
  }

  private static long warmUpThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("floe-warm-up") && t.isAlive())
        .count();
  }

  @Test
  void shouldKeepEveryViewEqualToTheOracleThroughEveryKindOfCommit() throws Exception {
    ViewDefinition minute = FloeHarness.view("ohlcv_1m", OHLCV_1M);
    ViewDefinition hour = FloeHarness.view("ohlcv_1h", OHLCV_1H);
    ViewDefinition weekly = FloeHarness.view("weekly", WEEKLY);
    ViewDefinition monthly = FloeHarness.view("monthly", MONTHLY);

    // First run over existing data.
    lake.append(trades, randomTrades(100, "2026-04-06", 8, 18));
    lake.append(trades, randomTrades(100, "2026-04-07", 8, 18));
    floe.start("a");
    for (ViewDefinition view : List.of(minute, hour, weekly, monthly)) {
      floe.define(view);
    }
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);

    // Appends into the same buckets and into new ones, and late data.
    lake.append(trades, randomTrades(30, "2026-04-07", 17, 20));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);
    List<Record> lateAndFresh = new ArrayList<>(randomTrades(3, "2026-03-30", 9, 10));
    lateAndFresh.addAll(randomTrades(10, "2026-04-08", 9, 10));
    lake.appendFilePerRow(trades, lateAndFresh);
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);

    // Compaction changes no rows: no view refreshes for it. The next real change then adds
    // exactly one refresh commit per view (a compaction of the target may follow it: a replace).
    // The refresh events of the runs so far reach the consumer after their targets' commits.
    await().atMost(Duration.ofSeconds(60)).until(() -> !floe.events().isEmpty());
    int eventsBefore = floe.events().size();
    java.util.Map<String, Long> before = new java.util.HashMap<>();
    for (ViewDefinition view : List.of(minute, hour, weekly, monthly)) {
      before.put(view.name(), floe.target(view).currentSnapshot().snapshotId());
    }
    lake.compact(trades);
    floe.announce("lake.market.trades");
    lake.append(trades, randomTrades(5, "2026-04-08", 11, 12));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);
    for (ViewDefinition view : List.of(minute, hour, weekly, monthly)) {
      Table target = floe.target(view);
      List<String> since = new ArrayList<>();
      for (Snapshot s :
          SnapshotUtil.ancestorsBetween(
              target, target.currentSnapshot().snapshotId(), before.get(view.name()))) {
        if (!DataOperations.REPLACE.equals(s.operation())) {
          since.add(s.operation());
        }
      }
      assertThat(since).as("%s: one refresh commit since the compaction", view.name()).hasSize(1);
    }

    // Row deletes through position and equality delete files, and an overwrite moving rows.
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);
    lake.deleteByEquality(trades, List.of(1L, 2L, 3L, 150L));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);
    lake.overwrite(
        trades,
        r -> "ORCL".equals(r.getField("symbol")) && (Long) r.getField("quantity") < 30,
        randomTrades(5, "2026-04-09", 0, 3));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);

    // Nulls in the bucket column and in group keys.
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", null, 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-09T01:00:00Z", 10.0, 5L, null)));
    floe.announce("lake.market.trades");
    awaitAll(minute, hour, weekly, monthly);

    List<RefreshEvent> events = floe.events();
    assertThat(events.stream().map(RefreshEvent::getRefreshId).distinct().count())
        .as("one refresh event per refresh id")
        .isEqualTo(events.size());
    // The chained view may start before its upstream has created its source: it fails, says why,
    // and recovers by itself.
    assertThat(events)
        .filteredOn(e -> e.getMode() == RefreshMode.FAILED)
        .allSatisfy(
            e -> {
              assertThat(e.getView()).isEqualTo("ohlcv_1h");
              assertThat(e.getError()).contains("lake.analytics.ohlcv_1m does not exist");
            });
    assertThat(eventsBefore).isPositive();
  }

  @Test
  void shouldRefreshFullyWhenAViewChangesAndFollowDuplicatedOrStaleNotices() throws Exception {
    lake.append(trades, randomTrades(50, "2026-04-06", 8, 18));
    ViewDefinition view = FloeHarness.view("bars", OHLCV_1M);
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);

    // Duplicated and out-of-order notices publish nothing twice.
    lake.append(trades, randomTrades(10, "2026-04-06", 8, 9));
    lake.append(trades, randomTrades(10, "2026-04-07", 8, 9));
    floe.announce("lake.market.trades");
    floe.announce("lake.market.trades");
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);

    // A changed definition recomputes everything.
    ViewDefinition changed =
        FloeHarness.view(
            "bars",
            "SELECT symbol, date_trunc('hour', ts) AS hour_ts, count(*) AS n,"
                + " sum(price * quantity) / sum(quantity) AS vwap FROM lake.market.trades"
                + " GROUP BY 1, 2");
    floe.define(changed);
    List<RefreshEvent> events =
        floe.awaitEvent("bars", e -> "view definition changed".equals(e.getReason()));
    assertThat(events.get(events.size() - 1).getMode()).isEqualTo(RefreshMode.FULL);
    floe.awaitOracle(changed, trades);

    Set<Long> sources = new HashSet<>();
    for (RefreshEvent e : floe.events()) {
      assertThat(sources.add(e.getSourceSnapshotId() * 31 + e.getViewVersion().hashCode()))
          .as("refreshed twice to the same snapshot: %s", e)
          .isTrue();
    }
  }

  @Test
  void shouldCatchUpAfterTheCursorSnapshotExpired() throws Exception {
    lake.append(trades, randomTrades(50, "2026-04-06", 8, 18));
    ViewDefinition view = FloeHarness.view("bars", OHLCV_1M);
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);

    // Three commits, then every snapshot but the newest expires before Floe hears of them.
    lake.append(trades, randomTrades(5, "2026-04-06", 9, 10));
    lake.append(trades, randomTrades(5, "2026-04-07", 9, 10));
    lake.append(trades, randomTrades(5, "2026-04-08", 9, 10));
    trades.refresh();
    trades.expireSnapshots().expireOlderThan(System.currentTimeMillis() + 1).retainLast(1).commit();
    floe.announce("lake.market.trades");

    floe.awaitOracle(view, trades);
    // The refresh that caught up says why it could not take the snapshots it did not see.
    floe.awaitEvent(
        "bars", e -> e.getReason() != null && e.getReason().contains("which has expired"));
  }

  @Test
  void shouldDeadLetterNoticesForUnknownTablesAndKeepRunning() throws Exception {
    lake.append(trades, randomTrades(20, "2026-04-06", 8, 18));
    ViewDefinition view = FloeHarness.view("bars", OHLCV_1M);
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.nope");
    floe.announce("other.market.trades");
    floe.sendRaw("commits", "lake.market.trades", "{\"not\": \"avro\"}".getBytes());
    floe.announce("lake.market.trades");

    floe.awaitOracle(view, trades);
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              List<String> reasons =
                  floe.deadLetters().stream()
                      .map(r -> new String(r.headers().lastHeader("floe.dlq.reason").value()))
                      .toList();
              assertThat(reasons)
                  .contains("unknown table lake.market.nope")
                  .contains("unknown catalog 'other' (configured: lake)")
                  .anyMatch(r -> r.startsWith("cannot deserialize: Cannot decode TableCommitted"));
            });
  }

  /** Waits for each view in turn; the chained view follows its upstream's latest commit. */
  private void awaitAll(ViewDefinition... views) {
    for (ViewDefinition view : views) {
      Table source =
          view.name().equals("ohlcv_1h")
              ? lake.catalog().loadTable(TableName.parse("lake.analytics.ohlcv_1m").identifier())
              : trades;
      floe.awaitOracle(view, source);
    }
  }
}
