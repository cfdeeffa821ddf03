package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario 5: many views. Views spread over source tables, each table committing once a second (its
 * data files written ahead, each commit a fast append on schedule, so that the offered rate is the
 * planned one): the rate at which the views reflected the commits against the rate they were made
 * (and commits ÷ the time until every view caught up), and the lag p50/p99/max over every view; and
 * what a refresh costs in CPU ({@link CpuUse}): the process's CPU time from the first commit of the
 * window until every view caught up, divided by the refreshes committed in that time, split into
 * Floe's stages, Floe's threads outside them, the embedded broker and the bench's writers; and the
 * heap and state-store bytes per view, after the first refreshes and after the window.
 */
final class ManyViewsScenario {

  static final String NAME = "many-views";
  private static final String[] GRANULARITIES = {"minute", "hour", "day", "week", "month"};

  private ManyViewsScenario() {}

  static ScenarioResult run(BenchContext ctx, int tables, int viewsPerTable) throws Exception {
    Duration window = ctx.quick() ? Duration.ofSeconds(30) : Duration.ofSeconds(180);
    // Floe's defaults: users run the defaults, so the bench never tunes the schedule.
    String refresh = "{}";
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                tables * viewsPerTable
                    + " views over "
                    + tables
                    + " tables, one commit per table per second for "
                    + window.toSeconds()
                    + " s.")
            .parameter("tables", tables)
            .parameter("views", tables * viewsPerTable)
            .parameter("windowSeconds", window.toSeconds())
            .parameter("viewRefresh", refresh);
    StringBuilder yaml = new StringBuilder("views:\n");
    for (int t = 0; t < tables; t++) {
      for (int v = 0; v < viewsPerTable; v++) {
        String granularity = GRANULARITIES[v % GRANULARITIES.length];
        String aggregate =
            v % 2 == 0
                ? "sum(quantity) AS volume, count(*) AS trades"
                : "max(price) AS high, min(price) AS low";
        String name = "t" + t + "_v" + v;
        yaml.append(
            BenchLake.yamlEntry(
                name,
                "SELECT symbol, date_trunc('"
                    + granularity
                    + "', ts) AS bucket, "
                    + aggregate
                    + " FROM lake.market.t"
                    + t
                    + " GROUP BY 1, 2",
                "lake.analytics." + name,
                refresh));
      }
    }
    try (ServiceBench bench =
        ServiceBench.prepare(
            ctx.dir(NAME),
            yaml.toString(),
            Map.of(
                FloeConfig.TOPIC_PARTITIONS,
                "4",
                FloeConfig.REFRESH_THREADS,
                "4",
                "num.stream.threads",
                "2"))) {
      List<Table> sources = new ArrayList<>();
      Instant now = Instant.now();
      for (int t = 0; t < tables; t++) {
        Table table =
            bench
                .catalog()
                .buildTable(TableIdentifier.of("market", "t" + t), Trades.SCHEMA)
                .withPartitionSpec(Trades.BY_DAY)
                .withProperty("format-version", "2")
                .create();
        TableWrites.append(
            table, new Trades(t).between(now.minus(Duration.ofHours(6)), now, 2_000));
        sources.add(table);
      }
      long heapBeforeFloe = heapAfterCollection();
      ctx.progress(NAME, "starting Floe with " + tables * viewsPerTable + " views");
      bench.startFloe();
      for (int t = 0; t < tables; t++) {
        bench.announce(TableName.parse("lake.market.t" + t), sources.get(t));
      }
      // A second per view, at least 300 s: 1,000 views' first refreshes take minutes on 2 cores.
      Duration patience = Duration.ofSeconds(Math.max(300, tables * viewsPerTable));
      if (!bench.awaitCurrent(bench.views(), patience)) {
        throw new IllegalStateException("the views did not finish their first refresh");
      }
      long heapAfterFirstRefreshes = heapAfterCollection();
      long stateAfterFirstRefreshes = bench.stateBytes();
      // The data files of every commit are written ahead, so that the offered rate is the planned
      // one whatever the writers cost; each commit is then a fast append of its file, on schedule.
      int seconds = (int) window.toSeconds();
      ctx.progress(NAME, "writing the data files of " + tables * seconds + " commits ahead");
      List<Deque<List<DataFile>>> prepared = new ArrayList<>();
      Instant written = Instant.now();
      for (int t = 0; t < tables; t++) {
        Trades generator = new Trades(100 + t);
        Deque<List<DataFile>> files = new ArrayDeque<>();
        for (int second = 0; second < seconds; second++) {
          Instant at = written.plusSeconds(second);
          files.add(
              TableWrites.write(sources.get(t), generator.between(at.minusSeconds(1), at, 20)));
        }
        prepared.add(files);
      }
      ctx.progress(NAME, "one commit per table per second for " + seconds + " s");
      AtomicLong commits = new AtomicLong();
      long from = System.currentTimeMillis();
      CpuUse cpuBefore = CpuUse.now(ServiceBench.APPLICATION_ID);
      AtomicLong writerThreads = new AtomicLong();
      ScheduledExecutorService writers =
          Executors.newScheduledThreadPool(
              Math.min(tables, 4),
              task -> new Thread(task, CpuUse.WRITER_PREFIX + writerThreads.incrementAndGet()));
      List<ScheduledFuture<?>> running = new ArrayList<>();
      for (int t = 0; t < tables; t++) {
        Table table = sources.get(t);
        TableName name = TableName.parse("lake.market.t" + t);
        Deque<List<DataFile>> files = prepared.get(t);
        // Staggered, so that commits spread over the second.
        long offset = 1_000_000_000L * t / tables;
        running.add(
            writers.scheduleAtFixedRate(
                () -> {
                  List<DataFile> next = files.poll();
                  if (next == null) {
                    return;
                  }
                  AppendFiles append = table.newFastAppend();
                  next.forEach(append::appendFile);
                  append.commit();
                  try {
                    bench.announce(name, table);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted announcing a commit", e);
                  }
                  commits.incrementAndGet();
                },
                offset,
                1_000_000_000L,
                TimeUnit.NANOSECONDS));
      }
      long deadline = System.nanoTime() + window.toNanos() + Duration.ofSeconds(120).toNanos();
      while (commits.get() < (long) tables * seconds
          && System.nanoTime() < deadline
          && running.stream().noneMatch(f -> f.isDone() && !f.isCancelled())) {
        TimeUnit.MILLISECONDS.sleep(20);
      }
      running.forEach(f -> f.cancel(false));
      writers.shutdown();
      // A commit still running when the window closed lands before the window's end is taken.
      if (!writers.awaitTermination(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the writers did not stop within 30 s");
      }
      for (ScheduledFuture<?> future : running) {
        if (future.isDone() && !future.isCancelled()) {
          future.get(); // a commit that failed
        }
      }
      long to = System.currentTimeMillis();
      ctx.progress(NAME, commits.get() + " commits; waiting for every view to catch up");
      boolean caughtUp = bench.awaitCurrent(bench.views(), patience);
      long end = System.currentTimeMillis();
      CpuUse cpu = CpuUse.now(ServiceBench.APPLICATION_ID).since(cpuBefore);
      long heapAfterWindow = heapAfterCollection();
      long stateAfterWindow = bench.stateBytes();
      if (!caughtUp) {
        result.note(
            "the views had not caught up " + patience.toSeconds() + " s after the last commit");
      }
      List<Long> lags = new ArrayList<>();
      long refreshes = 0;
      // Per source commit, when every view of its table reflected it.
      Map<TableName, TreeMap<Long, Long>> reflectedByAll = new HashMap<>();
      for (ViewDefinition view : bench.views()) {
        TableName sourceName = ServiceBench.source(view);
        Table source = bench.load(sourceName);
        Table target = bench.load(view.target());
        lags.addAll(Lags.of(source, target, from, to));
        refreshes += refreshCommits(target, from, end);
        TreeMap<Long, Long> byCommit =
            reflectedByAll.computeIfAbsent(sourceName, n -> new TreeMap<>());
        for (long[] r : Lags.reflections(source, target, from, to)) {
          byCommit.merge(r[0], r[1], Math::max);
        }
      }
      // The rate at which the views reflected the commits against the rate they were made: the
      // span from a table's first to its last commit, against the span from their reflections.
      // Equal spans (a steady lag, however long) are 1.0; a lag that grows is below.
      long commitSpans = 0;
      long reflectionSpans = 0;
      for (TreeMap<Long, Long> byCommit : reflectedByAll.values()) {
        if (byCommit.size() > 1) {
          commitSpans += byCommit.lastKey() - byCommit.firstKey();
          reflectionSpans += byCommit.lastEntry().getValue() - byCommit.firstEntry().getValue();
        }
      }
      double planned = tables;
      double offered = commits.get() / ((to - from) / 1000.0);
      // Views that had not caught up reflect only some commits: no rate to tell then.
      double sustained =
          caughtUp && reflectionSpans > 0
              ? offered * commitSpans / (double) reflectionSpans
              : Double.NaN;
      double withCatchUp = commits.get() / ((end - from) / 1000.0);
      result
          .parameter("commits", commits.get())
          .parameter("catchUpSeconds", (end - to) / 1000.0)
          .figure(Figure.alone("commit events planned", "events/s", planned))
          .figure(Figure.alone("commit events offered", "events/s", offered))
          .figure(
              new Figure(
                  "commit events sustained", "events/s", sustained, offered, "offered", false))
          .figure(
              new Figure(
                  "commits ÷ time until all caught up",
                  "events/s",
                  withCatchUp,
                  offered,
                  "offered",
                  false))
          .figure(Figure.alone("lag p50, all views", "s", Lags.quantileSeconds(lags, 0.5)))
          .figure(Figure.alone("lag p99, all views", "s", Lags.quantileSeconds(lags, 0.99)))
          .figure(Figure.alone("lag max, all views", "s", Lags.quantileSeconds(lags, 1.0)))
          .figure(Figure.alone("catch-up after the last commit", "s", (end - to) / 1000.0));
      cpuFigures(result, cpu, refreshes, commits.get() * viewsPerTable, (end - from) / 1000.0);
      int views = tables * viewsPerTable;
      result
          .figure(
              Figure.alone(
                  "heap per view, after the first refreshes",
                  "KiB",
                  (heapAfterFirstRefreshes - heapBeforeFloe) / 1024.0 / views))
          .figure(
              Figure.alone(
                  "heap per view, after the window",
                  "KiB",
                  (heapAfterWindow - heapBeforeFloe) / 1024.0 / views))
          .figure(
              Figure.alone(
                  "state bytes per view, after the first refreshes",
                  "KiB",
                  stateAfterFirstRefreshes / 1024.0 / views))
          .figure(
              Figure.alone(
                  "state bytes per view, after the window",
                  "KiB",
                  stateAfterWindow / 1024.0 / views))
          .note(
              "heap per view: the heap in use after a collection, less what it was before Floe"
                  + " started (the broker, the catalog and the sources already in it), over the"
                  + " views: Floe's fixed share (caches up to floe.cache.bytes, pools, Kafka"
                  + " clients) is in it, so it falls as views are added; state bytes: Floe's"
                  + " Kafka Streams state directory on disk (RocksDB), over the views");
    }
    return result;
  }

  /**
   * CPU milliseconds per refresh, by where they went, and what they make of a core: the figures the
   * README's capacity model is built from.
   */
  private static void cpuFigures(
      ScenarioResult result, CpuUse cpu, long refreshes, long viewCommits, double seconds) {
    result
        .parameter("refreshCommits", refreshes)
        .figure(Figure.alone("refresh commits per second", "1/s", refreshes / seconds));
    if (refreshes == 0) {
      result.note("no refresh committed: no CPU per refresh to tell");
      return;
    }
    double perRefresh = 1e6 * refreshes;
    result
        .figure(
            Figure.alone("CPU per refresh, whole process", "ms", cpu.processNanos() / perRefresh))
        .figure(Figure.alone("CPU per refresh, Floe", "ms", cpu.floeThreadNanos() / perRefresh));
    cpu.stageNanos()
        .forEach(
            (stage, nanos) -> {
              if (nanos > 0) {
                result.figure(
                    Figure.alone("  of which stage " + stage.label(), "ms", nanos / perRefresh));
              }
            });
    result
        .figure(
            Figure.alone(
                "  of which outside stages (streams, clients)",
                "ms",
                cpu.outsideStagesNanos() / perRefresh))
        .figure(
            Figure.alone(
                "CPU per refresh, embedded broker and other", "ms", cpu.otherNanos() / perRefresh))
        .figure(
            Figure.alone("CPU per refresh, bench and writers", "ms", cpu.benchNanos() / perRefresh))
        // A lagging view folds several source commits into one refresh: per source commit that
        // each view follows is the figure that a commit rate turns into cores.
        .figure(
            Figure.alone(
                "CPU per view and source commit, Floe",
                "ms",
                cpu.floeThreadNanos() / (1e6 * Math.max(1, viewCommits))))
        .figure(
            Figure.alone(
                "refreshes per core-second (Floe's CPU)",
                "1/s",
                1e9 * refreshes / (double) Math.max(1, cpu.floeThreadNanos())));
  }

  /**
   * The heap in use after a full collection (asked twice, as a collection may leave what a
   * finalizer or reference queue frees to the next).
   */
  private static long heapAfterCollection() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** The target's refresh commits (not its compactions or expiries) in {@code [from, to]}. */
  private static long refreshCommits(Table target, long from, long to) {
    long commits = 0;
    for (Snapshot snapshot : target.snapshots()) {
      if (snapshot.timestampMillis() >= from
          && snapshot.timestampMillis() <= to
          && snapshot.summary().containsKey(FloeProperties.REFRESH_MODE)) {
        commits++;
      }
    }
    return commits;
  }
}
