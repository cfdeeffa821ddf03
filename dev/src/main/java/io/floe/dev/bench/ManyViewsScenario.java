package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario 5: many views. Views spread over source tables, each table committing once a second; the
 * commit events per second Floe sustains (commits ÷ the time until every view has caught up) and
 * the lag p99 over every view.
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
      ctx.progress(NAME, "starting Floe with " + tables * viewsPerTable + " views");
      bench.startFloe();
      for (int t = 0; t < tables; t++) {
        bench.announce(TableName.parse("lake.market.t" + t), sources.get(t));
      }
      if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(300))) {
        throw new IllegalStateException("the views did not finish their first refresh");
      }
      ctx.progress(NAME, "one commit per table per second for " + window.toSeconds() + " s");
      AtomicLong commits = new AtomicLong();
      long from = System.currentTimeMillis();
      long start = System.nanoTime();
      ExecutorService writers = Executors.newFixedThreadPool(Math.min(tables, 4));
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < tables; t++) {
        int table = t;
        running.add(
            writers.submit(
                () -> {
                  Trades generator = new Trades(100 + table);
                  TableName name = TableName.parse("lake.market.t" + table);
                  // Staggered, so that commits spread over the second.
                  long offset = 1_000_000_000L * table / tables;
                  for (long second = 0; ; second++) {
                    long due = start + offset + second * 1_000_000_000L;
                    if (due - start >= window.toNanos()) {
                      return null;
                    }
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    Instant at = Instant.now();
                    TableWrites.append(
                        sources.get(table), generator.between(at.minusSeconds(1), at, 20));
                    bench.announce(name, sources.get(table));
                    commits.incrementAndGet();
                  }
                }));
      }
      for (Future<?> future : running) {
        future.get();
      }
      writers.shutdown();
      long to = System.currentTimeMillis();
      ctx.progress(NAME, commits.get() + " commits; waiting for every view to catch up");
      boolean caughtUp = bench.awaitCurrent(bench.views(), Duration.ofSeconds(300));
      long end = System.currentTimeMillis();
      if (!caughtUp) {
        result.note("the views had not caught up 300 s after the last commit");
      }
      List<Long> lags = new ArrayList<>();
      for (ViewDefinition view : bench.views()) {
        Table source = bench.load(ServiceBench.source(view));
        lags.addAll(Lags.of(source, bench.load(view.target()), from, to));
      }
      double offered = commits.get() / ((to - from) / 1000.0);
      double sustained = commits.get() / ((end - from) / 1000.0);
      result
          .parameter("commits", commits.get())
          .parameter("catchUpSeconds", (end - to) / 1000.0)
          .figure(Figure.alone("commit events offered", "events/s", offered))
          .figure(
              new Figure(
                  "commit events sustained", "events/s", sustained, offered, "offered", false))
          .figure(Figure.alone("lag p50, all views", "s", Lags.quantileSeconds(lags, 0.5)))
          .figure(Figure.alone("lag p99, all views", "s", Lags.quantileSeconds(lags, 0.99)));
    }
    return result;
  }
}
