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
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario 1: how far the views trail the source. A trades table receives a commit at a fixed rate
 * (the bench runs it at 1 s and at 200 ms) while Floe maintains a 1-minute, a 1-hour and a weekly
 * view; side by side, a poller maintains copies of the same views the way iceberg-ivm does (every
 * 30 s, its documented example interval). Lags come from the tables' own commit times.
 */
final class FreshnessScenario {

  static final String NAME = "freshness";
  private static final TableName TRADES = TableName.parse("lake.market.trades");

  /** The views it maintains: name, query. */
  static final String[][] VIEWS = {
    {
      "ohlcv_1m",
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume FROM lake.market.trades GROUP BY 1, 2"
    },
    {
      "volume_1h",
      "SELECT symbol, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume,"
          + " count(*) AS trades FROM lake.market.trades GROUP BY 1, 2"
    },
    {
      "weekly",
      "SELECT symbol, date_trunc('week', ts) AS week, max(price) AS high, min(price) AS low,"
          + " count(*) AS trades FROM lake.market.trades GROUP BY 1, 2"
    }
  };

  static final Duration POLL_INTERVAL = Duration.ofSeconds(30);

  /** Floe's defaults: users run the defaults, so the bench never tunes the schedule. */
  private static final String REFRESH = "{}";

  private FreshnessScenario() {}

  /** One run per commit interval, in one result: each figure names its rate. */
  static ScenarioResult run(BenchContext ctx, List<Duration> commitIntervals) throws Exception {
    Duration window = ctx.quick() ? Duration.ofSeconds(60) : Duration.ofSeconds(300);
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "A commit every "
                    + commitIntervals.stream().map(FreshnessScenario::label).toList()
                    + " (a run each) for "
                    + window.toSeconds()
                    + " s; source-commit → target-commit lag of each view, Floe beside a poller"
                    + " every "
                    + POLL_INTERVAL.toSeconds()
                    + " s (iceberg-ivm's loop on Floe's refresh engine).")
            .parameter(
                "commitIntervalsMs", commitIntervals.stream().map(Duration::toMillis).toList())
            .parameter("windowSeconds", window.toSeconds())
            .parameter("viewRefresh", REFRESH)
            .parameter("pollIntervalSeconds", POLL_INTERVAL.toSeconds());
    for (int run = 0; run < commitIntervals.size(); run++) {
      measure(ctx, run, commitIntervals.get(run), window, result);
    }
    return result;
  }

  private static void measure(
      BenchContext ctx, int run, Duration commitInterval, Duration window, ScenarioResult result)
      throws Exception {
    String every = "every " + label(commitInterval) + ":";
    String refresh = REFRESH;
    StringBuilder yaml = new StringBuilder("views:\n");
    List<ViewDefinition> pollerViews = new ArrayList<>();
    for (String[] v : VIEWS) {
      yaml.append(BenchLake.yamlEntry(v[0], v[1], "lake.analytics." + v[0], refresh));
      pollerViews.add(
          ViewDefinition.of("poll_" + v[0], v[1], TableName.parse("lake.poller." + v[0])));
    }
    try (ServiceBench bench =
        ServiceBench.prepare(
            ctx.dir(NAME + "-" + run + "-" + label(commitInterval)),
            yaml.toString(),
            Map.of(FloeConfig.TOPIC_PARTITIONS, "2"))) {
      Table trades =
          bench
              .catalog()
              .buildTable(TableIdentifier.of("market", "trades"), Trades.SCHEMA)
              .withPartitionSpec(Trades.BY_DAY)
              .withProperty("format-version", "2")
              .create();
      Trades generator = new Trades(1);
      Instant now = Instant.now();
      TableWrites.append(trades, generator.between(now.minus(Duration.ofDays(1)), now, 20_000));
      ctx.progress(NAME, "starting Floe and the poller on a day of history");
      bench.startFloe();
      bench.announce(TRADES, trades);
      try (Poller poller = new Poller(bench::catalog, pollerViews)) {
        poller.poll();
        if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(120))) {
          throw new IllegalStateException("the views did not finish their first refresh");
        }
        poller.start(POLL_INTERVAL);
        ctx.progress(
            NAME,
            "committing every "
                + commitInterval.toMillis()
                + " ms for "
                + window.toSeconds()
                + " s");
        long from = System.currentTimeMillis();
        long start = System.nanoTime();
        long commits = 0;
        while (System.nanoTime() - start < window.toNanos()) {
          long next = start + (commits + 1) * commitInterval.toNanos();
          long wait = next - System.nanoTime();
          if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
          }
          Instant at = Instant.now();
          TableWrites.append(trades, generator.between(at.minusMillis(200), at, 10));
          bench.announce(TRADES, trades);
          commits++;
        }
        long to = System.currentTimeMillis();
        ctx.progress(NAME, commits + " commits; waiting for Floe and the poller to catch up");
        boolean floeCaughtUp = bench.awaitCurrent(bench.views(), Duration.ofSeconds(120));
        boolean pollerCaughtUp =
            bench.awaitCurrent(pollerViews, POLL_INTERVAL.plus(Duration.ofSeconds(90)));
        long end = System.currentTimeMillis();
        if (!floeCaughtUp || !pollerCaughtUp) {
          result.note(
              every
                  + " did not catch up within the wait: floe="
                  + floeCaughtUp
                  + ", poller="
                  + pollerCaughtUp);
        }
        int sourceCommits = Lags.commitTimes(trades, from, to).size();
        result.parameter("sourceCommits@" + label(commitInterval), sourceCommits);
        for (int i = 0; i < VIEWS.length; i++) {
          String name = VIEWS[i][0];
          Table floeTarget = bench.load(TableName.parse("lake.analytics." + name));
          Table pollTarget = bench.load(pollerViews.get(i).target());
          List<Long> floeLags = Lags.of(trades, floeTarget, from, to);
          List<Long> pollLags = Lags.of(trades, pollTarget, from, to);
          for (double q : new double[] {0.5, 0.95, 0.99, 1.0}) {
            result.figure(
                new Figure(
                    String.format(
                        "%s lag %s (%s)",
                        every, q == 1.0 ? "max" : "p" + Math.round(q * 100), name),
                    "s",
                    Lags.quantileSeconds(floeLags, q),
                    Lags.quantileSeconds(pollLags, q),
                    "poll every " + POLL_INTERVAL.toSeconds() + " s",
                    true));
          }
          result.figure(
              new Figure(
                  every + " target commits per source commit (" + name + ")",
                  "",
                  Lags.refreshCommits(floeTarget, from, end) / (double) sourceCommits,
                  Lags.refreshCommits(pollTarget, from, end) / (double) sourceCommits,
                  "poll every " + POLL_INTERVAL.toSeconds() + " s",
                  true));
        }
      }
    }
  }

  /** {@code 1s}, {@code 200ms}: how the rate reads in a figure's name. */
  static String label(Duration interval) {
    long millis = interval.toMillis();
    return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
  }
}
