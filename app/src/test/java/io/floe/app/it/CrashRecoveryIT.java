package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The process stopped abruptly at each step of a refresh: Floe in a child process ({@link
 * FailPoints}, the service with a crash point armed) halts (no shutdown, no final Kafka commit)
 * after the new files are written, or after the Iceberg commit and before the refresh event. A
 * restarted Floe must lose no change and apply none twice: the view equals the oracle and each
 * refresh is reported exactly once.
 */
class CrashRecoveryIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;

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

  @ParameterizedTest(name = "halt at {0}")
  @ValueSource(strings = {"files-written", "committed"})
  void shouldRecoverFromACrashAtEachStepOfARefresh(String failPoint) throws Exception {
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
    floe.define(view);
    floe.announce("lake.market.trades");

    // The first refresh (a full one) crashes.
    int exit = runUntilHalt(failPoint);
    assertThat(exit).isEqualTo(FailPoints.EXIT_CODE);
    assertCrashedAt(failPoint, view, null);

    floe.start("recovered");
    floe.awaitOracle(view, trades);

    // An incremental refresh crashes at the same step.
    floe.stopServices();
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:07:00Z", 11.0, 1L, "S")));
    floe.announce("lake.market.trades");
    String before = floe.target(view).properties().get(FloeProperties.SOURCE_SNAPSHOT_ID);
    exit = runUntilHalt(failPoint);
    assertThat(exit).isEqualTo(FailPoints.EXIT_CODE);
    assertCrashedAt(failPoint, view, before);

    floe.start("recovered");
    floe.awaitOracle(view, trades);
    floe.awaitEvent("bars", e -> e.getSourceSnapshotId() == trades.currentSnapshot().snapshotId());

    List<RefreshEvent> events = floe.events();
    Map<String, Long> perRefresh =
        events.stream()
            .collect(Collectors.groupingBy(RefreshEvent::getRefreshId, Collectors.counting()));
    assertThat(perRefresh)
        .as("refresh events per refresh id")
        .allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
    assertThat(perRefresh).hasSize(2);
  }

  /** After the crash: nothing committed, or committed with no event, depending on the step. */
  private void assertCrashedAt(String failPoint, ViewDefinition view, String bookmarkBefore) {
    Table target = floe.target(view);
    String bookmark = target.properties().get(FloeProperties.SOURCE_SNAPSHOT_ID);
    if (failPoint.equals("files-written")) {
      assertThat(bookmark).isEqualTo(bookmarkBefore);
    } else {
      assertThat(bookmark).isEqualTo(Long.toString(trades.currentSnapshot().snapshotId()));
    }
  }

  /** Runs Floe in a child process, on this test's class path, until the fail point halts it. */
  private int runUntilHalt(String failPoint) throws Exception {
    Path config = floe.configFile("crashing", Map.of());
    Path log = dir.resolve("crashing-" + failPoint + "-" + System.nanoTime() + ".log");
    Process process = floe.spawn(log, FailPoints.class, failPoint + ":bars", config.toString());
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "floe run did not reach " + failPoint + ":\n" + Files.readString(log));
    }
    assertThat(Files.readString(log)).contains("FAILPOINT " + failPoint);
    return process.exitValue();
  }
}
