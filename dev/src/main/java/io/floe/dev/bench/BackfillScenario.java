package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.testing.Jdks;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.EngineWarmup;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario 3: the first, full refresh of a 1-minute OHLCV view over a large source: rows/s and peak
 * heap, beside DuckDB running the same aggregation over the same Parquet files (reading them,
 * aggregating, writing the result as Parquet), the reference for the engine limit. Floe's side runs
 * in a JVM of its own with a {@value #FLOE_HEAP} heap, the bound a backfill of 10 M rows must keep
 * (memory grows with the groups of one chunk, not with the source); DuckDB runs in the bench's
 * process, on the same cores.
 */
final class BackfillScenario {

  static final String NAME = "backfill";

  /** The 1-minute OHLCV view over {@code lake.market.trades}. */
  static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume, count(*) AS trades FROM lake.market.trades GROUP BY 1, 2";

  private static final Instant FIRST_DAY = Instant.parse("2026-03-01T00:00:00Z");
  private static final int BATCH = 250_000;

  /**
   * The table and size of the refresh that warms the JIT of Floe's JVM before the timed one: the
   * figure is the engine's, as in a service that has run for a while.
   */
  private static final String WARMUP_SOURCE = "warmup";

  private static final int WARMUP_ROWS = 250_000;

  /**
   * Untimed refreshes over the warm-up table, each into a new target, 4 M rows in all: refreshes of
   * 1 M rows in one JVM took 490, 420, 325, 350, 330, 295, 295 and 245 ms, the JIT reaching its
   * compiled speed only after several million rows. The same refresh in a JVM that did nothing
   * before is measured too ({@link #COLD_VIEW}).
   */
  private static final int WARMUP_REFRESHES = 16;

  /** The view of the timed refresh in a JVM with no warm-up, into a target of its own. */
  private static final String COLD_VIEW = "ohlcv_1m_cold";

  /**
   * The view of the timed refresh in a new JVM after {@link EngineWarmup} over the rows {@code floe
   * run} warms up on by default, as a new instance's first refresh.
   */
  private static final String STARTED_VIEW = "ohlcv_1m_started";

  /** The view of the timed refresh in a new Java 25 JVM with the ahead-of-time cache. */
  private static final String AOT_VIEW = "ohlcv_1m_aot";

  /** The same, after the engine warm-up, as a new instance's first refresh on the image's JVM. */
  private static final String AOT_STARTED_VIEW = "ohlcv_1m_aot_started";

  /** The heap of the JVM that runs Floe's refresh. */
  static final String FLOE_HEAP = "512m";

  /** Longer than any backfill the bench runs takes on a slow machine. */
  private static final Duration FLOE_TIMEOUT = Duration.ofMinutes(30);

  /** The days the backfill's source spans. */
  static final int DAYS = 10;

  private BackfillScenario() {}

  /** The rows of the backfill's source: 1 M with {@code --quick}, 10 M otherwise. */
  static long sourceRows(BenchContext ctx) {
    return ctx.quick() ? 1_000_000 : 10_000_000;
  }

  static ScenarioResult run(BenchContext ctx) throws Exception {
    long rows = sourceRows(ctx);
    int days = DAYS;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "Full refresh of a 1-minute OHLCV view over "
                    + rows
                    + " source rows, by Floe in a JVM of its own with -Xmx"
                    + FLOE_HEAP
                    + ": rows/s and peak heap, beside DuckDB over the same Parquet files on the"
                    + " same cores.")
            .parameter("sourceRows", rows)
            .parameter("days", days)
            .parameter("availableProcessors", Runtime.getRuntime().availableProcessors())
            .parameter("floeJvmHeap", "-Xms" + FLOE_HEAP + " -Xmx" + FLOE_HEAP);
    Path dir = ctx.dir(NAME);
    try (BenchLake lake = new BenchLake(dir)) {
      ctx.progress(NAME, "writing " + rows + " trades over " + days + " days");
      Table trades = writeTrades(lake, rows, days);
      long snapshot = trades.currentSnapshot().snapshotId();
      Table warmup = lake.createTrades(WARMUP_SOURCE, Trades.BY_DAY);
      TableWrites.append(
          warmup,
          // The days of the timed refresh: as many target rows to write, from a quarter the rows.
          new Trades(6).between(FIRST_DAY, FIRST_DAY.plus(Duration.ofDays(days)), WARMUP_ROWS));

      ctx.progress(NAME, "Floe: full refresh in a JVM with -Xmx" + FLOE_HEAP);
      Properties floe = FloeSide.fork(dir, snapshot, WARMUP_REFRESHES, 0, VIEW);
      ctx.progress(NAME, "Floe: the same refresh in a new JVM, without warm-up");
      Properties cold = FloeSide.fork(dir, snapshot, 0, 0, COLD_VIEW);
      int engineWarmup =
          (Integer) FloeConfig.DEFINITION.defaultValues().get(FloeConfig.WARM_UP_ROWS);
      ctx.progress(
          NAME, "Floe: the same refresh in a new JVM, after the engine warm-up floe run does");
      Properties started = FloeSide.fork(dir, snapshot, 0, engineWarmup, STARTED_VIEW);
      Path java25 = Jdks.java25();
      Properties aotCold = null;
      Properties aotStarted = null;
      if (java25 != null) {
        Path cache = dir.resolve("floe-backfill.aot");
        ctx.progress(NAME, "training the ahead-of-time cache on " + java25);
        AotTraining.train(
            java25,
            System.getProperty("java.class.path"),
            cache,
            dir.resolve("aot-training"),
            FloeSide.JVM_OPTIONS);
        List<String> withCache = List.of("-XX:AOTCache=" + cache);
        ctx.progress(NAME, "Floe: the same refresh in a new Java 25 JVM with the AOT cache");
        aotCold = FloeSide.fork(java25, withCache, dir, snapshot, 0, 0, AOT_VIEW);
        ctx.progress(NAME, "Floe: the same, after the engine warm-up floe run does");
        aotStarted =
            FloeSide.fork(java25, withCache, dir, snapshot, 0, engineWarmup, AOT_STARTED_VIEW);
      } else {
        result.note("no Java 25 for the ahead-of-time cache: " + Jdks.noJava25());
      }
      double coldSeconds = Double.parseDouble(cold.getProperty("seconds"));
      double startedSeconds = Double.parseDouble(started.getProperty("seconds"));
      double floeSeconds = Double.parseDouble(floe.getProperty("seconds"));
      long rowsRead = Long.parseLong(floe.getProperty("rowsRead"));
      long peakHeap = Long.parseLong(floe.getProperty("peakHeapBytes"));
      long maxHeap = Long.parseLong(floe.getProperty("maxHeapBytes"));

      ctx.progress(NAME, "DuckDB: the same aggregation over the same files");
      double duckSeconds = DuckDb.seconds(trades, snapshot, List.of(QUERY), dir);

      if (!ctx.quick()) {
        result.note("oracle check skipped at this size");
      } else {
        Table target = lake.catalog().loadTable(view(VIEW).target().identifier());
        Oracle.difference(target, trades, trades.name(), snapshot, QUERY)
            .ifPresentOrElse(
                d -> result.note("WRONG RESULT: " + d),
                () -> result.note("the view equals the oracle after the backfill"));
      }
      result
          .parameter("chunks", Integer.parseInt(floe.getProperty("chunks")))
          .parameter("targetRows", Long.parseLong(floe.getProperty("rowsWritten")))
          .parameter("floeMaxHeapMiB", maxHeap >> 20)
          .figure(
              new Figure(
                  "full refresh throughput",
                  "rows/s",
                  rowsRead / floeSeconds,
                  rowsRead / duckSeconds,
                  "DuckDB, all cores",
                  false))
          .figure(
              new Figure(
                  "full refresh time", "s", floeSeconds, duckSeconds, "DuckDB, all cores", true))
          .figure(
              new Figure(
                  "full refresh throughput, first refresh of a new JVM",
                  "rows/s",
                  Long.parseLong(cold.getProperty("rowsRead")) / coldSeconds,
                  rowsRead / duckSeconds,
                  "DuckDB, all cores",
                  false))
          .figure(
              new Figure(
                  "full refresh throughput, first refresh of a new floe run (after its warm-up)",
                  "rows/s",
                  Long.parseLong(started.getProperty("rowsRead")) / startedSeconds,
                  rowsRead / duckSeconds,
                  "DuckDB, all cores",
                  false))
          .figure(
              Figure.alone(
                  "engine warm-up of a new floe run, " + engineWarmup + " rows",
                  "s",
                  Double.parseDouble(started.getProperty("engineWarmupSeconds"))))
          .figure(Figure.alone("peak heap during the refresh", "MiB", peakHeap / 1048576.0));
      if (aotCold != null) {
        result
            .parameter("java25", java25.toString())
            .figure(
                new Figure(
                    "full refresh throughput, first refresh of a new Java 25 JVM (AOT cache)",
                    "rows/s",
                    Long.parseLong(aotCold.getProperty("rowsRead"))
                        / Double.parseDouble(aotCold.getProperty("seconds")),
                    rowsRead / duckSeconds,
                    "DuckDB, all cores",
                    false))
            .figure(
                new Figure(
                    "full refresh throughput, first refresh of a new floe run on Java 25 (AOT"
                        + " cache, after its warm-up)",
                    "rows/s",
                    Long.parseLong(aotStarted.getProperty("rowsRead"))
                        / Double.parseDouble(aotStarted.getProperty("seconds")),
                    rowsRead / duckSeconds,
                    "DuckDB, all cores",
                    false))
            .figure(
                new Figure(
                    "engine warm-up of a new floe run, " + engineWarmup + " rows (AOT cache)",
                    "s",
                    Double.parseDouble(aotStarted.getProperty("engineWarmupSeconds")),
                    Double.parseDouble(started.getProperty("engineWarmupSeconds")),
                    "no cache, Java " + Runtime.version().feature(),
                    true));
      }
      result.note(
          "Floe refreshed "
              + rowsRead
              + " rows in a JVM of its own with -Xmx"
              + FLOE_HEAP
              + " (max heap "
              + (maxHeap >> 20)
              + " MiB, sized up front with -Xms, -XX:+ExitOnOutOfMemoryError) and finished:"
              + " the backfill fits that"
              + " heap. Peak heap is the sum of the heap pools' peaks in that JVM, garbage"
              + " included. "
              + WARMUP_REFRESHES
              + " untimed refreshes of the same view over "
              + WARMUP_ROWS
              + " rows of another table, over the same days, warmed that JVM's JIT first, as in"
              + " a service that has run for a while; the first refresh of a new JVM ran the"
              + " same refresh with no warm-up, JIT compilation included; the first refresh of a"
              + " new floe run, in another new JVM after the engine warm-up a started service"
              + " runs once Kafka Streams runs (EngineWarmup, floe.warm-up.rows, timed apart);"
              + " the files it read were in the OS page cache, as for the other runs.");
    }
    return result;
  }

  /**
   * The backfill's source: {@code rows} trades (seed 3) spread evenly over {@code days} days from 1
   * March 2026, in table {@code market.trades} partitioned by day, appended a day at a time in
   * commits of at most {@value #BATCH} rows.
   */
  static Table writeTrades(BenchLake lake, long rows, int days) {
    Table trades = lake.createTrades("trades", Trades.BY_DAY);
    Trades generator = new Trades(3);
    long perDay = rows / days;
    for (int d = 0; d < days; d++) {
      Instant day = FIRST_DAY.plus(Duration.ofDays(d));
      for (long written = 0; written < perDay; written += BATCH) {
        int n = (int) Math.min(BATCH, perDay - written);
        Instant from = day.plus(Duration.ofMillis(86_400_000L * written / perDay));
        Instant to = day.plus(Duration.ofMillis(86_400_000L * (written + n) / perDay));
        TableWrites.append(trades, generator.between(from, to, n));
      }
    }
    return trades;
  }

  /** The view of the timed refresh, whose target the oracle checks. */
  private static final String VIEW = "ohlcv_1m";

  /** The view, the same in the bench's process and in Floe's, named {@code name}. */
  private static ViewDefinition view(String name) {
    return ViewDefinition.of(name, QUERY, TableName.parse("lake.analytics." + name));
  }

  /** The same view over the warm-up table. */
  private static ViewDefinition warmupView(int i) {
    return ViewDefinition.of(
        "ohlcv_1m_warmup_" + i,
        QUERY.replace("lake.market.trades", "lake.market." + WARMUP_SOURCE),
        TableName.parse("lake.analytics.ohlcv_1m_warmup_" + i));
  }

  /**
   * Floe's side of the backfill: the full refresh of the view at a snapshot of the source, after
   * untimed refreshes of the same view over the warm-up table, in the JVM it is started in, which
   * writes what it measured to a properties file.
   */
  static final class FloeSide {

    /**
     * The heap sized up front, as a service's is once it has run a while: a heap that the timed
     * refresh must first grow made G1 collect and mark concurrently on the two cores.
     */
    static final List<String> JVM_OPTIONS =
        List.of("-Xms" + FLOE_HEAP, "-Xmx" + FLOE_HEAP, "-XX:+ExitOnOutOfMemoryError");

    private FloeSide() {}

    /**
     * Runs the refresh in a new JVM with the bench's class path and a {@value
     * BackfillScenario#FLOE_HEAP} heap; returns what it measured.
     *
     * @param warmups untimed refreshes over the warm-up table first
     * @param engineWarmupRows rows of the {@link EngineWarmup} that runs first, timed apart, or 0
     * @param name the view of the timed refresh, whose target it creates
     */
    static Properties fork(Path dir, long snapshot, int warmups, int engineWarmupRows, String name)
        throws IOException, InterruptedException {
      return fork(ChildJvm.thisJava(), List.of(), dir, snapshot, warmups, engineWarmupRows, name);
    }

    /**
     * As {@link #fork(Path, long, int, int, String)}, on {@code java} with {@code options} added,
     * such as an ahead-of-time cache.
     */
    static Properties fork(
        Path java,
        List<String> options,
        Path dir,
        long snapshot,
        int warmups,
        int engineWarmupRows,
        String name)
        throws IOException, InterruptedException {
      List<String> jvmOptions = new ArrayList<>(JVM_OPTIONS);
      jvmOptions.addAll(options);
      return ChildJvm.run(
          "Floe's side of the backfill",
          java,
          FloeSide.class,
          dir,
          "floe-side-" + name,
          jvmOptions,
          FLOE_TIMEOUT,
          dir.toString(),
          Long.toString(snapshot),
          Integer.toString(warmups),
          Integer.toString(engineWarmupRows),
          name);
    }

    /**
     * {@code dir snapshot-id warm-ups engine-warm-up-rows view-name out-file}: refreshes the view
     * and writes what it measured.
     */
    public static void main(String[] args) throws Exception {
      ManifestWork.planOnCallingThreadByDefault();
      Path dir = Path.of(args[0]);
      long snapshot = Long.parseLong(args[1]);
      int warmups = Integer.parseInt(args[2]);
      int engineWarmupRows = Integer.parseInt(args[3]);
      String name = args[4];
      try (BenchLake lake = new BenchLake(dir)) {
        ViewRefresher refresher = new ViewRefresher(lake::catalog, lake.scanThreads());
        Table warmup = lake.catalog().loadTable(TableIdentifier.of("market", WARMUP_SOURCE));
        for (int i = 0; i < warmups; i++) {
          refresher.refresh(
              RefreshRequest.of(
                  BenchLake.compiled(warmupView(i)),
                  warmup.currentSnapshot().snapshotId(),
                  null,
                  DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
        }
        long engineWarmupBegin = System.nanoTime();
        if (engineWarmupRows > 0) {
          // In the rounds floe run takes, here without refreshes to wait for.
          EngineWarmup.runBetween(engineWarmupRows, () -> {});
        }
        double engineWarmupSeconds = (System.nanoTime() - engineWarmupBegin) / 1e9;
        RefreshRequest request =
            RefreshRequest.of(BenchLake.compiled(view(name)), snapshot, null, DirtyBuckets.none());
        System.gc();
        List<MemoryPoolMXBean> heap =
            ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP)
                .toList();
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);
        long start = System.nanoTime();
        RefreshOutcome outcome = refresher.refresh(request, ViewRefresher.ProgressListener.NONE);
        double seconds = (System.nanoTime() - start) / 1e9;
        long peakHeap = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        Properties measured = new Properties();
        measured.setProperty("seconds", Double.toString(seconds));
        measured.setProperty("engineWarmupSeconds", Double.toString(engineWarmupSeconds));
        measured.setProperty("rowsRead", Long.toString(outcome.work().rowsRead()));
        measured.setProperty("rowsWritten", Long.toString(outcome.work().rowsWritten()));
        measured.setProperty("chunks", Integer.toString(outcome.work().chunks()));
        measured.setProperty("peakHeapBytes", Long.toString(peakHeap));
        measured.setProperty("maxHeapBytes", Long.toString(Runtime.getRuntime().maxMemory()));
        ChildJvm.write(measured, args[5], "Floe's side of the backfill");
      }
    }
  }
}
