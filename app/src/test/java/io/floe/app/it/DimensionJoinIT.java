package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A view that joins its fact table to a dimension (DESIGN §3.10), driven the way a user drives it:
 * a real Kafka broker in this JVM, a real JDBC catalog and Parquet files, commit notices of both
 * tables on the topic. After every step the view equals the oracle over the fact's and the
 * dimension's current snapshots.
 */
class DimensionJoinIT {

  private static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));

  private static final String BY_SECTOR =
      """
      SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume,
             count(*) AS trades, max(t.price) AS high
      FROM lake.market.trades t LEFT JOIN lake.ref.symbols s ON t.symbol = s.symbol
      GROUP BY s.sector, date_trunc('hour', t.ts)
      """;

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private Table symbols;
  private final Random random = new Random(3);

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

  private static Record symbol(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SYMBOLS);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }

  @Test
  void shouldKeepAJoinViewEqualToTheOracleThroughFactAndDimensionCommitsAndARestart()
      throws Exception {
    ViewDefinition view = FloeHarness.view("volume_by_sector", BY_SECTOR);
    // Given trades over two days and a dimension of sectors for some of their symbols
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-06", 8, 18));
    lake.append(trades, lake.randomTrades(random, 300, "2026-04-07", 8, 18));
    lake.append(
        symbols,
        List.of(
            symbol("AAPL", "tech"),
            symbol("MSFT", "tech"),
            symbol("NVDA", "chips"),
            symbol("AMZN", "retail")));

    // When Floe runs the view for the first time
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    awaitOracle(view);

    // and trades are appended, into old buckets and a new one
    lake.append(trades, lake.randomTrades(random, 40, "2026-04-07", 17, 20));
    floe.announce("lake.market.trades");
    awaitOracle(view);

    // and the dimension is corrected (an overwrite), a row deleted, and a row added
    lake.overwrite(
        symbols, r -> "NVDA".equals(r.getField("symbol")), List.of(symbol("NVDA", "tech")));
    floe.announce("lake.ref.symbols");
    awaitOracle(view);
    lake.deleteByPosition(symbols, r -> "AMZN".equals(r.getField("symbol")));
    floe.announce("lake.ref.symbols");
    awaitOracle(view);
    lake.append(symbols, List.of(symbol("GOOG", "ads")));
    floe.announce("lake.ref.symbols");
    awaitOracle(view);

    // and the dimension changes while Floe is down, its notice lost, and Floe restarts to a
    // commit of the fact in one bucket only
    floe.stopServices();
    lake.overwrite(
        symbols, r -> "AAPL".equals(r.getField("symbol")), List.of(symbol("AAPL", "devices")));
    floe.start("a");
    lake.append(trades, lake.randomTrades(random, 5, "2026-04-08", 9, 10));
    floe.announce("lake.market.trades");

    // Then every bucket reflects the dimension as it is now
    awaitOracle(view);
  }

  /**
   * Waits until the target reflects the fact's and the dimension's current snapshots, then checks
   * it against the oracle over both.
   */
  private void awaitOracle(ViewDefinition view) {
    trades.refresh();
    symbols.refresh();
    long fact = FloeHarness.latestDataChange(trades).snapshotId();
    long dimension = symbols.currentSnapshot().snapshotId();
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
                  && states.contains("\"snapshot-id\":\"" + dimension + "\"");
            });
    Optional<String> difference =
        Oracle.difference(
            view.name(),
            fact,
            Oracle.expected(
                new Oracle.Source(trades, "lake.market.trades", fact),
                List.of(new Oracle.Source(symbols, "lake.ref.symbols", dimension)),
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
}
