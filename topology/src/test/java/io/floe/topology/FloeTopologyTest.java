package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.TableCommitted;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.processor.DeadLetters;
import io.floe.topology.processor.FloeMetrics;
import io.floe.topology.processor.TopologyServices;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.StoreNames;
import io.floe.topology.view.ViewIndex;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real topology, driven by {@link TopologyTestDriver} over a real JDBC/SQLite Iceberg catalog.
 * Refreshes run on the test thread so that each step is deterministic.
 */
class FloeTopologyTest {

  private static final FloeSerdes SERDES = FloeSerdes.singleObject();

  private static final String OHLCV = TradeViews.OHLCV_1M;
  private static final String HOURLY =
      """
      SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts, max(high) AS high,
             sum(volume) AS volume, sum(trade_count) AS trade_count
      FROM lake.analytics.ohlcv_1m
      GROUP BY 1, 2
      """;

  @TempDir Path dir;
  private TopologyHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private TopologyTestDriver driver;

  @BeforeEach
  void setUp() throws Exception {
    floe =
        new TopologyHarness(
            IcebergFixture.create(dir),
            dir,
            Runnable::run,
            Runnable::run,
            RefreshHooks.NONE,
            new TopologySettings.Events(List.of(TopologyHarness.EVENTS), "lake"));
    lake = floe.lake;
    driver = floe.driver;
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private void request(String view, io.floe.schemas.ViewCommandType command) {
    floe.request(view, command);
  }

  private void defineView(String name, String query) {
    floe.define(name, query);
  }

  private void announce(String table) {
    floe.announce(table);
  }

  /** Lets wall-clock time pass, one tick at a time, so that refreshes start and complete. */
  private void idle(Duration duration) {
    floe.idle(duration);
  }

  private List<RefreshEvent> events() {
    return floe.events();
  }

  private Table target(String name) {
    return floe.target(name);
  }

  @Test
  void shouldRefreshANewViewFullyThenIncrementallyAfterACommit() {
    long s1 =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
                lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
    defineView("ohlcv_1m", OHLCV);

    idle(Duration.ofSeconds(1));

    List<RefreshEvent> first = events();
    assertThat(first).hasSize(1);
    assertThat(first.get(0).getMode()).isEqualTo(RefreshMode.FULL);
    assertThat(first.get(0).getSourceSnapshotId()).isEqualTo(s1);
    OracleAssertions.assertMatches(target("ohlcv_1m"), trades, s1, OHLCV);

    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:05:30Z", 11.0, 1L, "S")));
    announce("lake.market.trades");
    idle(Duration.ofSeconds(2));

    List<RefreshEvent> second = events();
    assertThat(second).hasSize(1);
    RefreshEvent event = second.get(0);
    assertThat(event.getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(event.getSourceSnapshotId()).isEqualTo(s2);
    assertThat(event.getDirtyRanges()).hasSize(1);
    assertThat(event.getDirtyRanges().get(0).getStart())
        .isEqualTo(Instant.parse("2026-04-08T10:05:00Z"));
    assertThat(event.getDirtyRanges().get(0).getEnd())
        .isEqualTo(Instant.parse("2026-04-08T10:06:00Z"));
    assertThat(event.getRowsWritten()).isEqualTo(1);
    assertThat(event.getLagMs()).isNotNull();
    // The commit waited from its append to the end of the refresh, on the driver's clock.
    assertThat(event.getStalenessMs()).isNotNull().isNotNegative();
    assertThat(event.getRefreshId())
        .isEqualTo(target("ohlcv_1m").currentSnapshot().summary().get("floe.refresh-id"));
    OracleAssertions.assertMatches(target("ohlcv_1m"), trades, s2, OHLCV);
  }

  @Test
  void shouldMergeTheCommitsOfOneLingerIntoOneRefresh() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(1));
    events();

    // Five commits within the view's linger (200 ms): one refresh, not five.
    for (int i = 0; i < 5; i++) {
      lake.append(
          trades, List.of(lake.trade("AAPL", "2026-04-08T10:1" + i + ":00Z", 10.0, 1L, "B")));
      announce("lake.market.trades");
    }
    assertThat(events()).isEmpty();
    idle(Duration.ofMillis(400));

    List<RefreshEvent> burst = events();
    assertThat(burst).hasSize(1);
    // Five adjacent minutes merge into one range.
    assertThat(burst.get(0).getDirtyRanges()).hasSize(1);
    assertThat(burst.get(0).getDirtyRanges().get(0).getStart())
        .isEqualTo(Instant.parse("2026-04-08T10:10:00Z"));
    assertThat(burst.get(0).getDirtyRanges().get(0).getEnd())
        .isEqualTo(Instant.parse("2026-04-08T10:15:00Z"));
    OracleAssertions.assertMatches(
        target("ohlcv_1m"), trades, trades.currentSnapshot().snapshotId(), OHLCV);
  }

  @Test
  void shouldFollowAChainedViewThroughItsUpstreamsCommits() {
    long s1 =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T11:30:00Z", 12.0, 1L, "S")));
    // Defined together: the hourly view waits, without failing, for its upstream's target.
    defineView("ohlcv_1h", HOURLY);
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(2));
    assertThat(events()).noneMatch(e -> e.getMode() == RefreshMode.FAILED);
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T11:45:00Z", 13.0, 2L, "B")));
    announce("lake.market.trades");
    idle(Duration.ofSeconds(4));

    Table minute = target("ohlcv_1m");
    OracleAssertions.assertMatches(minute, trades, trades.currentSnapshot().snapshotId(), OHLCV);
    OracleAssertions.assertMatches(
        target("ohlcv_1h"), minute, minute.currentSnapshot().snapshotId(), HOURLY);
    assertThat(s1).isPositive();
  }

  @Test
  void shouldRecordTheRootCommitWithTheTargetCommitsOfAViewAndOfTheViewChainedOnIt() {
    // Given a view and a view chained on its target, both current
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    defineView("ohlcv_1h", HOURLY);
    announce("lake.market.trades");
    idle(Duration.ofSeconds(4));

    // When the trades commit, and the views follow
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T11:45:00Z", 13.0, 2L, "B")));
    Snapshot root = trades.currentSnapshot();
    announce("lake.market.trades");
    idle(Duration.ofSeconds(4));

    // Then both target commits record the trades' commit as the one they brought in
    Table minute = target("ohlcv_1m");
    Table hour = target("ohlcv_1h");
    assertThat(minute.currentSnapshot().summary())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(root.snapshotId()))
        .containsEntry(FloeProperties.SOURCE_COMMITTED_AT, Long.toString(root.timestampMillis()));
    assertThat(hour.currentSnapshot().summary())
        .containsEntry(
            FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(minute.currentSnapshot().snapshotId()))
        .containsEntry(FloeProperties.SOURCE_COMMITTED_AT, Long.toString(root.timestampMillis()));
    OracleAssertions.assertMatches(hour, minute, minute.currentSnapshot().snapshotId(), HOURLY);
  }

  @Test
  void shouldDeadLetterANoticeForAnUnknownTableAndKeepGoing() {
    announce("lake.market.nope");
    announce("warehouse.market.trades");

    List<TestRecord<String, byte[]>> letters = floe.dlq.readRecordsToList();

    assertThat(letters).hasSize(2);
    assertThat(header(letters.get(0), DeadLetters.REASON))
        .isEqualTo("unknown table lake.market.nope");
    assertThat(header(letters.get(1), DeadLetters.REASON))
        .isEqualTo("unknown catalog 'warehouse' (configured: lake)");
    assertThat(header(letters.get(0), DeadLetters.ORIGIN)).startsWith("floe.commits-0@");
    TableCommitted original =
        SERDES.tableCommitted().deserializer().deserialize("floe.dlq", letters.get(0).value());
    assertThat(original.getTable()).isEqualTo("nope");
  }

  @Test
  void shouldReportAFailingViewAndKeepRefreshingTheOthers() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("broken", OHLCV.replace("lake.market.trades", "lake.market.missing"));
    defineView("ohlcv_1m", OHLCV);

    idle(Duration.ofSeconds(1));

    List<RefreshEvent> events = events();
    assertThat(events)
        .anySatisfy(
            e -> {
              assertThat(e.getView()).isEqualTo("broken");
              assertThat(e.getMode()).isEqualTo(RefreshMode.FAILED);
              assertThat(e.getError()).contains("source table lake.market.missing does not exist");
            })
        .anySatisfy(
            e -> {
              assertThat(e.getView()).isEqualTo("ohlcv_1m");
              assertThat(e.getMode()).isEqualTo(RefreshMode.FULL);
            });
    KeyValueStore<String, ViewState> states = driver.getKeyValueStore(StoreNames.VIEW_STATE);
    assertThat(states.get("broken").status()).isEqualTo(ViewState.Status.ERROR);
    assertThat(states.get("broken").lastError()).contains("does not exist");
    assertThat(states.get("ohlcv_1m").status()).isEqualTo(ViewState.Status.IDLE);

    // The cause goes: the view recovers on its own.
    lake.createTrades("market", "missing");
    lake.append(
        lake.load("market", "missing"),
        List.of(lake.trade("IBM", "2026-04-08T10:00:01Z", 1.0, 1L, "B")));
    // Retries back off exponentially from one second.
    idle(Duration.ofSeconds(20));
    assertThat(states.get("broken").lastError()).isNull();
    assertThat(states.get("broken").status()).isEqualTo(ViewState.Status.IDLE);
  }

  @Test
  void shouldIgnoreDuplicateAndStaleCommitNotices() {
    // Given a view refreshed at s1 and a table Floe knows
    long s1 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    String s1Metadata = metadataLocation();
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(1));
    RefreshEvent first = events().get(0);
    assertThat(first.getMode()).isEqualTo(RefreshMode.FULL);
    assertThat(first.getSourceSnapshotId()).isEqualTo(s1);

    // When the table is announced twice with nothing new, and a notice names s1 again
    announce("lake.market.trades");
    announce("lake.market.trades");
    announceSnapshot(s1, s1Metadata);
    idle(Duration.ofSeconds(2));

    // Then nothing is refreshed: the first notice makes the table known (its history before is
    // not walked: the target's bookmark is already s1), the others are duplicates or stale
    assertThat(events()).isEmpty();

    // When a real commit s2 is announced three times, followed by s1's stale notice
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:05:30Z", 11.0, 1L, "S")));
    announce("lake.market.trades");
    announce("lake.market.trades");
    announceSnapshot(s2, metadataLocation());
    announceSnapshot(s1, s1Metadata);
    idle(Duration.ofSeconds(3));

    // Then s2 is refreshed exactly once, incrementally, and the view equals the oracle
    RefreshEvent second =
        assertThat(events())
            .singleElement()
            .satisfies(
                e -> {
                  assertThat(e.getMode()).isEqualTo(RefreshMode.INCREMENTAL);
                  assertThat(e.getSourceSnapshotId()).isEqualTo(s2);
                  assertThat(e.getDirtyRanges()).hasSize(1);
                  assertThat(e.getDirtyRanges().get(0).getStart())
                      .isEqualTo(Instant.parse("2026-04-08T10:05:00Z"));
                })
            .actual();
    assertThat(second.getRefreshId()).isNotEqualTo(first.getRefreshId());
    Table target = target("ohlcv_1m");
    assertThat(target.currentSnapshot().summary())
        .containsEntry("floe.refresh-id", second.getRefreshId())
        .containsEntry("floe.source-snapshot-id", String.valueOf(s2));
    // One target commit per real change: the first run's and s2's, nothing for the notices.
    assertThat(target.snapshots())
        .extracting(snapshot -> snapshot.summary().get("floe.refresh-id"))
        .containsExactly(first.getRefreshId(), second.getRefreshId());
    OracleAssertions.assertMatches(target, trades, s2, OHLCV);
  }

  /** The metadata file the source table's catalog points at now. */
  private String metadataLocation() {
    return ((org.apache.iceberg.HasTableOperations) lake.load("market", "trades"))
        .operations()
        .current()
        .metadataFileLocation();
  }

  /** A notice naming the snapshot and metadata file it announces, as a writer's reporter sends. */
  private void announceSnapshot(long snapshotId, String metadataLocation) {
    floe.commits.pipeInput(
        "lake.market.trades",
        TableCommitted.newBuilder()
            .setCatalog("lake")
            .setNamespace(List.of("market"))
            .setTable("trades")
            .setSnapshotId(snapshotId)
            .setMetadataLocation(metadataLocation)
            .setEventTime(Instant.EPOCH)
            .setProducer("metrics-reporter")
            .build());
  }

  @Test
  void shouldReadTheTableAgainUntilItShowsTheCommitANoticeNamed() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    announce("lake.market.trades");
    idle(Duration.ofSeconds(1));
    events();

    // An object store announces the next metadata file before the catalog points at it.
    String next =
        trades.location() + "/metadata/00099-" + java.util.UUID.randomUUID() + ".metadata.json";
    floe.commits.pipeInput(
        "lake.market.trades",
        TableCommitted.newBuilder()
            .setCatalog("lake")
            .setNamespace(List.of("market"))
            .setTable("trades")
            .setMetadataLocation(next)
            .setEventTime(Instant.EPOCH)
            .setProducer("s3-notification")
            .build());
    idle(Duration.ofSeconds(2));
    assertThat(events()).isEmpty();
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:05:30Z", 11.0, 1L, "S")));
    idle(Duration.ofSeconds(3));

    assertThat(events())
        .singleElement()
        .satisfies(e -> assertThat(e.getSourceSnapshotId()).isEqualTo(s2));
    OracleAssertions.assertMatches(target("ohlcv_1m"), trades, s2, OHLCV);

    // A metadata file that never becomes current (a commit that lost a race) is waited for only
    // so long: afterwards a commit nobody announces is not seen.
    idle(Duration.ofSeconds(60));
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:07:30Z", 12.0, 1L, "S")));
    idle(Duration.ofSeconds(3));
    assertThat(events()).isEmpty();
  }

  @Test
  void shouldStopMaintainingADeletedView() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(1));
    events();

    floe.views.pipeInput("ohlcv_1m", null);
    idle(Duration.ofSeconds(1));
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:07:00Z", 10.0, 5L, "B")));
    announce("lake.market.trades");
    idle(Duration.ofSeconds(3));

    assertThat(events()).isEmpty();
    KeyValueStore<String, ViewState> states = driver.getKeyValueStore(StoreNames.VIEW_STATE);
    assertThat(states.get("ohlcv_1m")).isNull();
    assertThat(target("ohlcv_1m").currentSnapshot()).isNotNull();
  }

  @Test
  void shouldRefreshOnRequestWithoutWaitingAndFullyWhenAsked() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(1));
    events();

    // A commit nobody announced: a refresh request catches the view up from its bookmark.
    long s2 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:09:00Z", 10.0, 5L, "B")));
    request("ohlcv_1m", io.floe.schemas.ViewCommandType.REFRESH);
    idle(Duration.ofMillis(400));
    List<RefreshEvent> caughtUp = events();
    assertThat(caughtUp).hasSize(1);
    assertThat(caughtUp.get(0).getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(caughtUp.get(0).getSourceSnapshotId()).isEqualTo(s2);
    OracleAssertions.assertMatches(target("ohlcv_1m"), trades, s2, OHLCV);

    request("ohlcv_1m", io.floe.schemas.ViewCommandType.FULL_REFRESH);
    idle(Duration.ofMillis(400));
    List<RefreshEvent> full = events();
    assertThat(full).hasSize(1);
    assertThat(full.get(0).getMode()).isEqualTo(RefreshMode.FULL);
    assertThat(full.get(0).getReason()).isEqualTo("full refresh requested");
    KeyValueStore<String, ViewState> states = driver.getKeyValueStore(StoreNames.VIEW_STATE);
    assertThat(states.get("ohlcv_1m").recent())
        .extracting(ViewState.LastRefresh::mode)
        .endsWith("INCREMENTAL", "FULL");
  }

  /** A Lakekeeper CloudEvent, binary mode, as its Kafka sink writes it. */
  private void lakekeeperEvent(String type, String namespace, String table) {
    org.apache.kafka.common.header.internals.RecordHeaders headers =
        new org.apache.kafka.common.header.internals.RecordHeaders();
    Map.of(
            "ce_specversion",
            "1.0",
            "ce_id",
            java.util.UUID.randomUUID().toString(),
            "ce_source",
            "uri:iceberg-catalog-service:test",
            "ce_type",
            type,
            "ce_tabular-type",
            "table",
            "ce_name",
            table,
            "ce_namespace",
            namespace)
        .forEach((k, v) -> headers.add(k, v.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    floe.events.pipeInput(
        new org.apache.kafka.streams.test.TestRecord<>(
            "tabular-id",
            "{\"updates\":[]}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
            headers));
  }

  @Test
  void shouldFollowCommitsAnnouncedAsLakekeeperEventsAndDeadLetterUnknownFormats() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    defineView("ohlcv_1m", OHLCV);
    idle(Duration.ofSeconds(1));
    assertThat(events()).hasSize(1);

    long s2 =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 2L, "S")));
    lakekeeperEvent("updateTable", "market", "trades");
    idle(Duration.ofSeconds(2));

    List<RefreshEvent> refreshed = events();
    assertThat(refreshed).hasSize(1);
    assertThat(refreshed.get(0).getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(refreshed.get(0).getSourceSnapshotId()).isEqualTo(s2);
    OracleAssertions.assertMatches(target("ohlcv_1m"), trades, s2, OHLCV);

    // Events that change no data are dropped; records of an unknown format are dead-lettered.
    lakekeeperEvent("dropView", "market", "trades");
    floe.events.pipeInput(
        "k", "{\"hello\":\"world\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    idle(Duration.ofSeconds(1));
    assertThat(events()).isEmpty();
    List<org.apache.kafka.streams.test.TestRecord<String, byte[]>> letters =
        floe.dlq.readRecordsToList();
    assertThat(letters).hasSize(1);
    assertThat(
            new String(
                letters.get(0).headers().lastHeader(DeadLetters.REASON).value(),
                java.nio.charset.StandardCharsets.UTF_8))
        .contains("neither a CloudEvent nor an S3 event");
  }

  @Test
  void shouldKeepTheTopologyDescription() throws Exception {
    String described =
        FloeTopology.build(
                TopologySettings.defaults(),
                new TopologyServices(
                    floe::catalog,
                    new ViewIndex(),
                    Runnable::run,
                    new RefreshExecutor(new ViewRefresher(floe::catalog), Runnable::run),
                    FloeMetrics.NONE))
            .describe()
            .toString();
    Path golden = Path.of("src", "test", "resources", "topology.txt");

    // A renamed node, store or topic must show in review: regenerate the file on purpose.
    assertThat(described.strip()).isEqualTo(Files.readString(golden).strip());
  }

  private static String header(TestRecord<String, byte[]> record, String name) {
    return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }
}
