package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Instances lost and replaced while the source commits, as on Kubernetes: an instance killed with
 * SIGKILL (a real {@code floe run} process, so no shutdown hook, no final commit, no leaving the
 * group) whose views the survivor takes over until it is started again, and a rolling restart of
 * both instances. Every view converges to the oracle, each refresh is reported once and applied
 * once. A clean stop with a survivor is {@link TwoInstancesIT}'s, a crash at each step of a refresh
 * {@link CrashRecoveryIT}'s.
 */
class FailoverIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private Process killable;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (killable != null) {
      killable.destroyForcibly().waitFor();
    }
    floe.close();
  }

  @Test
  void shouldConvergeWithNothingLostOrAppliedTwiceWhenAnInstanceIsKilledAndLaterRestarted()
      throws Exception {
    // Given a floe run process and an instance in this JVM sharing six views, each owning some
    append("AAPL", "2026-04-08T10:00:01Z");
    List<ViewDefinition> views = TwoInstancesIT.views();
    killable = startProcess();
    FloeService survivor = floe.start("survivor");
    for (ViewDefinition view : views) {
      floe.define(view);
    }
    floe.announce("lake.market.trades");
    awaitOracle(views);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> othersOwnPartitions(survivor) && ownsPartitions(survivor));

    // When the process is killed as a commit is announced, and another follows it
    append("MSFT", "2026-04-09T11:00:40Z");
    floe.announce("lake.market.trades");
    killable.destroyForcibly().waitFor();
    append("IBM", "2026-04-10T09:00:00Z");
    floe.announce("lake.market.trades");

    // Then the survivor takes every view over and each follows both commits
    awaitOracle(views);
    assertThat(survivor.streams().state().isRunningOrRebalancing()).isTrue();

    // When the killed instance starts again on its state directory, and the source changes
    killable = startProcess();
    await().atMost(Duration.ofSeconds(60)).until(() -> othersOwnPartitions(survivor));
    append("ORCL", "2026-04-11T09:00:00Z");
    floe.announce("lake.market.trades");

    // Then every view equals the oracle, each refresh reported once and applied once
    awaitOracle(views);
    floe.assertEachRefreshAppliedAndReportedOnce(views);
  }

  @Test
  void shouldConvergeWithNothingLostOrAppliedTwiceThroughARollingRestart() throws Exception {
    // Given two instances sharing six views
    append("AAPL", "2026-04-08T10:00:01Z");
    List<ViewDefinition> views = TwoInstancesIT.views();
    FloeService a = floe.start("a");
    FloeService b = floe.start("b");
    for (ViewDefinition view : views) {
      floe.define(view);
    }
    floe.announce("lake.market.trades");
    awaitOracle(views);

    // When each in turn stops cleanly while the source changes, and starts again on its state
    // directory before the next goes, as a StatefulSet rolls
    a.close();
    append("MSFT", "2026-04-09T11:00:40Z");
    floe.announce("lake.market.trades");
    FloeService a2 = floe.start("a");
    awaitRunning(a2);
    b.close();
    append("IBM", "2026-04-10T09:00:00Z");
    floe.announce("lake.market.trades");
    FloeService b2 = floe.start("b");
    awaitRunning(b2);
    append("ORCL", "2026-04-11T09:00:00Z");
    floe.announce("lake.market.trades");

    // Then every view follows every commit, each refresh reported once and applied once
    awaitOracle(views);
    floe.assertEachRefreshAppliedAndReportedOnce(views);
  }

  /** {@code floe run} on the configuration file of instance "killable", in a process of its own. */
  private Process startProcess() throws Exception {
    Path config = floe.configFile("killable", Map.of());
    return floe.spawn(
        dir.resolve("killable.log"), io.floe.app.Main.class, "run", "--config", config.toString());
  }

  private void append(String symbol, String ts) {
    lake.append(trades, List.of(lake.trade(symbol, ts, 10.0, 5L, "B")));
  }

  private void awaitOracle(List<ViewDefinition> views) {
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }
  }

  private static void awaitRunning(FloeService service) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> service.streams().state() == KafkaStreams.State.RUNNING);
  }

  /** Whether {@code service} runs active tasks. */
  private static boolean ownsPartitions(FloeService service) {
    return service.streams().metadataForLocalThreads().stream()
        .anyMatch(thread -> !thread.activeTasks().isEmpty());
  }

  /**
   * Whether, in the assignment {@code service} knows, another instance (another HTTP endpoint, the
   * address instances reach each other at) owns partitions.
   */
  private static boolean othersOwnPartitions(FloeService service) {
    return service.streams().state() == KafkaStreams.State.RUNNING
        && service.streams().metadataForAllStreamsClients().stream()
            .anyMatch(
                m -> m.hostInfo().port() != service.httpPort() && !m.topicPartitions().isEmpty());
  }
}
