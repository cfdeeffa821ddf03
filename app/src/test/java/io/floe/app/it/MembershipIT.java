package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.refresh.Freshness;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How instances come and go from the consumer group (DESIGN §6, membership): an instance that is
 * not a static member leaves the group when it closes, so the others take its views at once instead
 * of after its session timeout; a static member ({@code group.instance.id}) stays, so that its
 * restart gets its own tasks back without moving them. Both run with Kafka's default session
 * timeout of 45 s, longer than either test waits, so that only the close decides.
 */
class MembershipIT {

  private static final Map<String, String> KAFKA_SESSION_TIMEOUT =
      Map.of("session.timeout.ms", "45000", "heartbeat.interval.ms", "3000");

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private ViewDefinition view;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    view =
        FloeHarness.view(
            "by_minute",
            "SELECT symbol, date_trunc('minute', ts) AS bucket, sum(quantity) AS volume,"
                + " count(*) AS n FROM lake.market.trades GROUP BY 1, 2");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldHandTheViewsOverAtOnceWhenAnInstanceThatIsNotAStaticMemberStops() throws Exception {
    // Given two dynamic members maintaining a view
    FloeService a = floe.start("a", KAFKA_SESSION_TIMEOUT);
    FloeService b = floe.start("b", KAFKA_SESSION_TIMEOUT);
    append("AAPL", "2026-04-08T10:00:01Z");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    awaitRunning(a, b);
    await().atMost(Duration.ofSeconds(30)).until(() -> !activeTasks(a).isEmpty());
    Set<TaskId> all = new HashSet<>(activeTasks(a));
    all.addAll(activeTasks(b));

    // When one stops cleanly and the source changes
    a.close();
    append("MSFT", "2026-04-08T10:01:01Z");
    floe.announce("lake.market.trades");

    // Then the other owns every task and the view is current well before a's session would expire
    await()
        .atMost(Duration.ofSeconds(25))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> activeTasks(b).equals(all) && isCurrent());
    OracleAssertions.assertMatches(
        floe.target(view), trades, FloeHarness.latestDataChange(trades).snapshotId(), view.query());
  }

  @Test
  void shouldKeepItsTasksWhenAStaticMemberRestarts() throws Exception {
    // Given two static members maintaining a view, each owning tasks
    FloeService a = floe.start("a", withInstanceId("floe-a"));
    FloeService b = floe.start("b", withInstanceId("floe-b"));
    append("AAPL", "2026-04-08T10:00:01Z");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    awaitRunning(a, b);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !activeTasks(a).isEmpty() && !activeTasks(b).isEmpty());
    Set<TaskId> ownedByA = activeTasks(a);
    Set<TaskId> ownedByB = activeTasks(b);

    // When a stops cleanly and starts again under its name, while b is watched
    AtomicBoolean watching = new AtomicBoolean(true);
    Set<TaskId> seenByB = new HashSet<>();
    Thread watcher =
        new Thread(
            () -> {
              while (watching.get()) {
                synchronized (seenByB) {
                  seenByB.addAll(activeTasks(b));
                }
                // A look every 20 ms: a task moved to b and back would stay for a rebalance.
                java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
              }
            });
    watcher.start();
    a.close();
    FloeService restarted = floe.start("a", withInstanceId("floe-a"));
    append("MSFT", "2026-04-08T10:01:01Z");
    floe.announce("lake.market.trades");
    await()
        .atMost(Duration.ofSeconds(25))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> activeTasks(restarted).equals(ownedByA) && isCurrent());
    watching.set(false);
    watcher.join();

    // Then b never took a's tasks over, and the view is exact
    synchronized (seenByB) {
      assertThat(seenByB).isEqualTo(ownedByB);
    }
    OracleAssertions.assertMatches(
        floe.target(view), trades, FloeHarness.latestDataChange(trades).snapshotId(), view.query());
  }

  @Test
  void shouldRebuildItsStoresFromCompactedChangelogsWhenItsStateDirectoryIsLost() throws Exception {
    // Given an instance that maintained a view, stopped
    FloeService a = floe.start("a");
    append("AAPL", "2026-04-08T10:00:01Z");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    a.close();

    // When an instance with an empty state directory takes its place (a pod without its volume)
    FloeService fresh = floe.start("fresh");
    append("MSFT", "2026-04-08T10:01:01Z");
    floe.announce("lake.market.trades");

    // Then it rebuilds the stores from their changelogs, counts what it replayed, and the view
    // follows the source exactly
    floe.awaitOracle(view, trades);
    assertThat(fresh.metrics().restoredRecords()).isPositive();
    assertThat(fresh.metrics().scrape())
        .contains("floe_state_restored_records_total{store=\"view-state\"");
    try (Admin admin =
        Admin.create(Map.of("bootstrap.servers", FloeHarness.kafka().bootstrapServers()))) {
      // Kafka Streams names a changelog <application.id>-<store>-changelog.
      String prefix = floe.topic("views").replaceFirst("\\.views$", "");
      ConfigResource changelog =
          new ConfigResource(ConfigResource.Type.TOPIC, prefix + "-floe-view-state-changelog");
      Config config = admin.describeConfigs(List.of(changelog)).all().get().get(changelog);
      assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
      assertThat(config.get("segment.ms").value()).isEqualTo("600000");
      assertThat(config.get("min.cleanable.dirty.ratio").value()).isEqualTo("0.1");
    }
  }

  private static Map<String, String> withInstanceId(String id) {
    Map<String, String> settings = new java.util.HashMap<>(KAFKA_SESSION_TIMEOUT);
    settings.put("group.instance.id", id);
    return settings;
  }

  private void append(String symbol, String ts) {
    lake.append(trades, List.of(lake.trade(symbol, ts, 10.0, 5L, "B")));
  }

  private boolean isCurrent() {
    try {
      return Freshness.isCurrent(floe.target(view), trades, view.version());
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      return false;
    }
  }

  private static void awaitRunning(FloeService... services) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                java.util.Arrays.stream(services)
                    .allMatch(s -> s.streams().state() == KafkaStreams.State.RUNNING));
  }

  /** The tasks active on an instance now, of every stage. */
  private static Set<TaskId> activeTasks(FloeService service) {
    Set<TaskId> tasks = new HashSet<>();
    for (ThreadMetadata thread : service.streams().metadataForLocalThreads()) {
      thread.activeTasks().forEach(task -> tasks.add(task.taskId()));
    }
    return tasks;
  }
}
