package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Scenario 3: the first, full refresh of a 1-minute OHLCV view over a large source: rows/s and peak
 * heap, beside DuckDB running the same aggregation over the same Parquet files in the same process
 * (reading them, aggregating, writing the result as Parquet), the reference for the engine limit.
 */
final class BackfillScenario {

  static final String NAME = "backfill";
  private static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume, count(*) AS trades FROM lake.market.trades GROUP BY 1, 2";
  private static final Instant FIRST_DAY = Instant.parse("2026-03-01T00:00:00Z");
  private static final int BATCH = 250_000;

  private BackfillScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    long rows = ctx.quick() ? 1_000_000 : 10_000_000;
    int days = 10;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "Full refresh of a 1-minute OHLCV view over "
                    + rows
                    + " source rows: rows/s and peak heap, beside DuckDB over the same Parquet"
                    + " files.")
            .parameter("sourceRows", rows)
            .parameter("days", days)
            .parameter("availableProcessors", Runtime.getRuntime().availableProcessors())
            .parameter("maxHeapMiB", Runtime.getRuntime().maxMemory() >> 20);
    Path dir = ctx.dir(NAME);
    try (BenchLake lake = new BenchLake(dir)) {
      Table trades = lake.createTrades("trades", Trades.BY_DAY);
      Trades generator = new Trades(3);
      long perDay = rows / days;
      ctx.progress(NAME, "writing " + rows + " trades over " + days + " days");
      for (int d = 0; d < days; d++) {
        Instant day = FIRST_DAY.plus(Duration.ofDays(d));
        for (long written = 0; written < perDay; written += BATCH) {
          int n = (int) Math.min(BATCH, perDay - written);
          Instant from = day.plus(Duration.ofMillis(86_400_000L * written / perDay));
          Instant to = day.plus(Duration.ofMillis(86_400_000L * (written + n) / perDay));
          TableWrites.append(trades, generator.between(from, to, n));
        }
      }
      long snapshot = trades.currentSnapshot().snapshotId();
      ViewDefinition view =
          ViewDefinition.of("ohlcv_1m", QUERY, TableName.parse("lake.analytics.ohlcv_1m"));

      ctx.progress(NAME, "Floe: full refresh");
      System.gc();
      List<MemoryPoolMXBean> heap = heapPools();
      heap.forEach(MemoryPoolMXBean::resetPeakUsage);
      long start = System.nanoTime();
      RefreshOutcome outcome =
          new ViewRefresher(lake::catalog)
              .refresh(
                  RefreshRequest.of(BenchLake.compiled(view), snapshot, null, DirtyBuckets.none()),
                  ViewRefresher.ProgressListener.NONE);
      double floeSeconds = (System.nanoTime() - start) / 1e9;
      long peakHeap = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();

      ctx.progress(NAME, "DuckDB: the same aggregation over the same files");
      double duckSeconds = duckDb(trades, snapshot, dir.resolve("duckdb-result.parquet"));

      if (!ctx.quick()) {
        result.note("oracle check skipped at this size");
      } else {
        Table target = lake.catalog().loadTable(view.target().identifier());
        Oracle.difference(target, trades, trades.name(), snapshot, QUERY)
            .ifPresentOrElse(
                d -> result.note("WRONG RESULT: " + d),
                () -> result.note("the view equals the oracle after the backfill"));
      }
      result
          .parameter("chunks", outcome.chunks())
          .parameter("targetRows", outcome.rowsWritten())
          .figure(
              new Figure(
                  "full refresh throughput",
                  "rows/s",
                  outcome.rowsRead() / floeSeconds,
                  outcome.rowsRead() / duckSeconds,
                  "DuckDB, all cores",
                  false))
          .figure(
              new Figure(
                  "full refresh time", "s", floeSeconds, duckSeconds, "DuckDB, all cores", true))
          .figure(Figure.alone("peak heap during the refresh", "MiB", peakHeap / 1048576.0));
    }
    return result;
  }

  private static double duckDb(Table trades, long snapshot, Path output) throws Exception {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks =
        trades.newScan().useSnapshot(snapshot).planFiles()) {
      for (FileScanTask task : tasks) {
        files.add(Path.of(java.net.URI.create(task.file().location())).toString());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String list = files.stream().map(f -> "'" + f + "'").collect(Collectors.joining(", "));
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
        Statement s = duck.createStatement()) {
      s.execute("SET TimeZone = 'UTC'");
      // The list of live files comes from Iceberg; directory names are not columns.
      s.execute(
          "CREATE VIEW src AS SELECT * FROM read_parquet(["
              + list
              + "], hive_partitioning = false)");
      long start = System.nanoTime();
      s.execute(
          "COPY ("
              + Oracle.forDuckDb(QUERY, trades.name())
              + ") TO '"
              + output
              + "' (FORMAT parquet)");
      return (System.nanoTime() - start) / 1e9;
    }
  }

  private static List<MemoryPoolMXBean> heapPools() {
    return ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP)
        .toList();
  }
}
