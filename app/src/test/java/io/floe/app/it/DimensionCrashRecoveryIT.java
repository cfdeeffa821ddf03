package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.schemas.RefreshEvent;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The process stopped abruptly between a dimension change and the refresh it causes (DESIGN §3.6,
 * §3.10): Floe in a child process ({@link FailPoints}) sees the dimension's commit notice and halts
 * after the refresh's files are written, or after its Iceberg commit and before its refresh event.
 * A restarted Floe must skip nothing and apply nothing twice: the view equals the oracle over the
 * fact and the changed dimension, the refresh recomputed only the changed key's buckets, and each
 * refresh is applied and reported once.
 */
class DimensionCrashRecoveryIT {

  private static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));

  private static final String BY_SECTOR =
      """
      SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume,
             count(*) AS trades
      FROM lake.market.trades t LEFT JOIN lake.ref.symbols s ON t.symbol = s.symbol
      GROUP BY s.sector, date_trunc('hour', t.ts)
      """;

  private static final String DAY = "2026-04-07";

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private Table symbols;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    symbols = lake.createTable("ref", "symbols", SYMBOLS, PartitionSpec.unpartitioned());
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @ParameterizedTest(name = "halt at {0}")
  @ValueSource(strings = {"files-written", "committed"})
  void shouldRecoverFromACrashBetweenADimensionChangeAndItsRefresh(String failPoint)
      throws Exception {
    ViewDefinition view = FloeHarness.view("volume_by_sector", BY_SECTOR);
    // Given trades in a file per symbol (AAPL in hours 0-3, IBM in 8-9, MSFT in 4-7), a dimension
    // of their sectors, and the view refreshed by a running Floe
    tradesOf("AAPL", 0, 4);
    tradesOf("MSFT", 4, 8);
    tradesOf("IBM", 8, 10);
    lake.append(symbols, List.of(symbol("AAPL", "tech"), symbol("MSFT", "tech")));
    lake.append(symbols, List.of(symbol("IBM", "services")));
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    awaitOracle(view);
    floe.stopServices();
    String statesBefore = floe.target(view).properties().get(FloeProperties.DIMENSION_STATES);

    // When IBM moves to another sector, and the Floe that sees its notice halts in the refresh
    lake.overwrite(
        symbols, r -> "IBM".equals(r.getField("symbol")), List.of(symbol("IBM", "hardware")));
    floe.announce("lake.ref.symbols");
    int exit = runUntilHalt(failPoint);
    assertThat(exit).isEqualTo(FailPoints.EXIT_CODE);
    String statesAfterCrash = floe.target(view).properties().get(FloeProperties.DIMENSION_STATES);
    if (failPoint.equals("files-written")) {
      assertThat(statesAfterCrash).isEqualTo(statesBefore);
    } else {
      assertThat(statesAfterCrash).contains(snapshotIdOf(symbols));
    }

    // and Floe restarts
    floe.start("recovered");

    // Then the view reflects the dimension as it is now, through one refresh of IBM's hours,
    // applied and reported once
    awaitOracle(view);
    String dimensionState = snapshotIdOf(symbols);
    long fact = trades.currentSnapshot().snapshotId();
    floe.awaitEvent(
        view.name(),
        e -> e.getSourceSnapshotId() == fact && e.getMode().name().equals("INCREMENTAL"));
    floe.assertEachRefreshAppliedAndReportedOnce(List.of(view));
    List<RefreshEvent> dimensionRefreshes =
        floe.events().stream()
            .filter(
                e -> e.getView().equals(view.name()) && e.getMode().name().equals("INCREMENTAL"))
            .toList();
    assertThat(dimensionRefreshes)
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getDirtyRanges())
                    .singleElement()
                    .satisfies(
                        range -> {
                          assertThat(range.getStart()).isEqualTo(hour(8));
                          assertThat(range.getEnd()).isEqualTo(hour(10));
                        }));
    assertThat(floe.target(view).properties().get(FloeProperties.DIMENSION_STATES))
        .contains(dimensionState);
  }

  private static Record symbol(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SYMBOLS);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }

  private void tradesOf(String symbol, int fromHour, int toHour) {
    List<Record> rows = new ArrayList<>();
    for (int hour = fromHour; hour < toHour; hour++) {
      rows.add(lake.trade(symbol, String.format("%sT%02d:10:00Z", DAY, hour), 10.0, 1L, "B"));
      rows.add(lake.trade(symbol, String.format("%sT%02d:40:00Z", DAY, hour), 11.0, 2L, "S"));
    }
    lake.append(trades, rows);
  }

  private static Instant hour(int hour) {
    return Instant.parse(DAY + "T00:00:00Z").plus(hour, ChronoUnit.HOURS);
  }

  private static String snapshotIdOf(Table table) {
    table.refresh();
    return "\"snapshot-id\":\"" + table.currentSnapshot().snapshotId() + "\"";
  }

  /**
   * Waits until the target reflects the fact's and the dimension's current snapshots, then checks
   * it against the oracle over both.
   */
  private void awaitOracle(ViewDefinition view) {
    trades.refresh();
    long fact = FloeHarness.latestDataChange(trades).snapshotId();
    String dimension = snapshotIdOf(symbols);
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              Optional<Table> target = target(view);
              if (target.isEmpty()) {
                return false;
              }
              String states = target.get().properties().get(FloeProperties.DIMENSION_STATES);
              return Long.toString(fact)
                      .equals(target.get().properties().get(FloeProperties.SOURCE_SNAPSHOT_ID))
                  && states != null
                  && states.contains(dimension);
            });
    Optional<String> difference =
        Oracle.difference(
            view.name(),
            fact,
            Oracle.expected(
                new Oracle.Source(trades, "lake.market.trades", fact),
                List.of(
                    new Oracle.Source(
                        symbols, "lake.ref.symbols", symbols.currentSnapshot().snapshotId())),
                BY_SECTOR),
            Oracle.actual(floe.target(view)));
    assertThat(difference).isEmpty();
  }

  private Optional<Table> target(ViewDefinition view) {
    try {
      return Optional.of(floe.target(view));
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      return Optional.empty();
    }
  }

  /** Runs Floe in a child process, on this test's class path, until the fail point halts it. */
  private int runUntilHalt(String failPoint) throws Exception {
    Path config = floe.configFile("crashing", Map.of());
    Path log = dir.resolve("crashing-" + failPoint + "-" + System.nanoTime() + ".log");
    Process process =
        floe.spawn(log, FailPoints.class, failPoint + ":volume_by_sector", config.toString());
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "floe run did not reach " + failPoint + ":\n" + Files.readString(log));
    }
    assertThat(Files.readString(log)).contains("FAILPOINT " + failPoint);
    return process.exitValue();
  }
}
