package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Doubles in aggregates with Trino's IEEE semantics (DESIGN §3.9), through a real refresh against
 * the oracle: sums and averages that reach infinity, or hold one, are infinite, not NaN.
 */
class RefreshNumericsTest {

  private static final String SUMS =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(price) AS total,"
          + " avg(price) AS mean, count(*) AS n FROM lake.market.trades GROUP BY 1, 2";

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldSumAndAverageInfinitiesAndOverflowsAsTrinoDoes() throws InvalidViewException {
    // Given groups whose sums overflow, hold an infinity of either sign, both, or a NaN
    double max = Double.MAX_VALUE;
    double inf = Double.POSITIVE_INFINITY;
    List<Record> rows = new ArrayList<>();
    Map<String, Double> trino = new HashMap<>();
    add(rows, trino, "OVER", inf, max, max / 2);
    add(rows, trino, "UNDER", Double.NEGATIVE_INFINITY, -max, -max / 2);
    add(rows, trino, "INF", inf, inf, 1.0);
    add(rows, trino, "MINF", Double.NEGATIVE_INFINITY, -inf, 1.0);
    add(rows, trino, "BOTH", Double.NaN, inf, -inf);
    add(rows, trino, "NAN", Double.NaN, Double.NaN, 1.0);
    add(rows, trino, "FINITE", 4.0, 1.5, 2.5);
    // One more file, so that partial states of several files (and threads) merge.
    List<Record> more = new ArrayList<>();
    add(more, trino, "OVER", inf, max / 2);
    // Finite in each file, infinite only once the files' sums are merged.
    add(rows, trino, "MERGED", inf, max * 0.75);
    add(more, trino, "MERGED", inf, max * 0.75);
    add(more, trino, "FINITE", 4.0, 0.0);
    lake.append(trades, rows);
    long snapshot = lake.append(trades, more);
    CompiledView view =
        CompiledView.compile(
            new ViewDefinition(
                "sums", SUMS, TableName.parse("lake.analytics.sums"), List.of(), null, null),
            1);

    // When the view is first refreshed
    new ViewRefresher(name -> lake.catalog())
        .refresh(
            RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);

    // Then every sum is Trino's (DuckDB, the oracle, agrees with Trino on these) and so is avg
    Table target = lake.load("analytics", "sums");
    OracleAssertions.assertMatches(target, trades, snapshot, SUMS);
    Map<String, Double> totals = new HashMap<>();
    Map<String, Double> means = new HashMap<>();
    for (Record row : read(target)) {
      totals.put((String) row.getField("symbol"), (Double) row.getField("total"));
      means.put((String) row.getField("symbol"), (Double) row.getField("mean"));
    }
    assertThat(totals).containsExactlyInAnyOrderEntriesOf(trino);
    trino.put("FINITE", 4.0 / 3);
    assertThat(means).containsExactlyInAnyOrderEntriesOf(trino);
  }

  /** Trades of one symbol in one minute, and the sum Trino gives for them. */
  private void add(
      List<Record> rows, Map<String, Double> trino, String symbol, double sum, double... prices) {
    for (double price : prices) {
      rows.add(lake.trade(symbol, "2026-04-08T10:00:05Z", price, 1L, "B"));
    }
    trino.put(symbol, sum);
  }

  private static List<Record> read(Table table) {
    table.refresh();
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      records.forEach(r -> rows.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }
}
