package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario: a first run. Floe runs the freshness scenario's three views (1-minute OHLCV, 1-hour
 * volume, weekly) over an empty trades table; a loader then commits 30 days of history, a day per
 * commit, and announces the table once. The time from the notice until every view is current,
 * beside DuckDB computing the three views over the same Parquet files, and the target commits each
 * view took.
 */
final class FirstRunScenario {

  static final String NAME = "first-run";
  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final int DAYS = 30;

  /** 151 200 rows over the 30 days, the size of the first run issue 12 reports. */
  private static final int ROWS_PER_DAY = 5_040;

  private static final Instant FIRST_DAY = Instant.parse("2026-03-02T00:00:00Z");

  private FirstRunScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    // Floe's defaults: users run the defaults, so the bench never tunes the schedule or chunks.
    String refresh = "{}";
    int rows = DAYS * ROWS_PER_DAY;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                DAYS
                    + " days of trades ("
                    + rows
                    + " rows) committed a day per commit and announced once to a running Floe"
                    + " with three views (1-minute OHLCV, 1-hour volume, weekly): time from the"
                    + " notice until every view is current, beside DuckDB computing the three"
                    + " views over the same Parquet files, and target commits per view.")
            .parameter("days", DAYS)
            .parameter("sourceRows", rows)
            .parameter("views", FreshnessScenario.VIEWS.length)
            .parameter("viewRefresh", refresh);
    StringBuilder yaml = new StringBuilder("views:\n");
    for (String[] v : FreshnessScenario.VIEWS) {
      yaml.append(BenchLake.yamlEntry(v[0], v[1], "lake.analytics." + v[0], refresh));
    }
    Path dir = ctx.dir(NAME);
    try (ServiceBench bench =
        ServiceBench.prepare(dir, yaml.toString(), Map.of(FloeConfig.TOPIC_PARTITIONS, "2"))) {
      Table trades =
          bench
              .catalog()
              .buildTable(TableIdentifier.of("market", "trades"), Trades.SCHEMA)
              .withPartitionSpec(Trades.BY_DAY)
              .withProperty("format-version", "2")
              .create();
      ctx.progress(NAME, "starting Floe with three views over an empty table");
      bench.startFloe();
      if (!bench.awaitIdle(Duration.ofSeconds(120))) {
        throw new IllegalStateException(
            "Floe did not start with its views idle over the empty table within 120 s");
      }
      ctx.progress(NAME, "committing " + DAYS + " days (" + rows + " trades), a day per commit");
      Trades generator = new Trades(5);
      long firstCommitAt = 0;
      for (int d = 0; d < DAYS; d++) {
        Instant day = FIRST_DAY.plus(Duration.ofDays(d));
        TableWrites.append(
            trades, generator.between(day, day.plus(Duration.ofDays(1)), ROWS_PER_DAY));
        if (d == 0) {
          firstCommitAt = trades.currentSnapshot().timestampMillis();
        }
      }
      long snapshot = trades.currentSnapshot().snapshotId();
      long announcedAt = System.currentTimeMillis();
      bench.announce(TRADES, trades);
      ctx.progress(NAME, "announced; waiting for every view to be current");
      if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(600))) {
        throw new IllegalStateException("the views were not current 600 s after the notice");
      }
      long end = System.currentTimeMillis();

      ctx.progress(NAME, "DuckDB: the three views over the same files");
      List<String> queries = new ArrayList<>();
      bench.views().forEach(v -> queries.add(v.query()));
      double duckSeconds = DuckDb.seconds(trades, snapshot, queries, dir);

      double allCurrent = 0;
      List<Figure> perView = new ArrayList<>();
      for (ViewDefinition view : bench.views()) {
        Table target = bench.load(view.target());
        OptionalLong currentAt = Lags.reflectedAt(trades, target, snapshot);
        if (currentAt.isEmpty()) {
          throw new IllegalStateException("no commit of " + view.name() + " reflects the notice");
        }
        double seconds = Math.max(0, currentAt.getAsLong() - announcedAt) / 1000.0;
        allCurrent = Math.max(allCurrent, seconds);
        perView.add(
            Figure.alone("time from notice until current (" + view.name() + ")", "s", seconds));
        int commits = Lags.targetCommits(target, firstCommitAt, end);
        perView.add(Figure.alone("target commits (" + view.name() + ")", "", commits));
        if (commits > 1) {
          result.note(
              view.name()
                  + "'s target commits read source commits "
                  + sourceCommitsRead(trades, target, firstCommitAt)
                  + " of "
                  + DAYS);
        }
        Oracle.difference(target, trades, trades.name(), snapshot, view.query())
            .ifPresentOrElse(
                d -> result.note("WRONG RESULT of " + view.name() + ": " + d),
                () -> result.note(view.name() + " equals the oracle after the first run"));
      }
      result.figure(
          new Figure(
              "time from notice until every view is current",
              "s",
              allCurrent,
              duckSeconds,
              "DuckDB, the 3 views, all cores",
              true));
      perView.forEach(result::figure);
      result.note(
          "Floe was running with the views before the first commit (the views' first refresh"
              + " found the table empty) and heard of the "
              + DAYS
              + " commits from one notice: the time starts at the notice and ends at the commit"
              + " timestamp of the target commit that made the last view current, Floe's default"
              + " schedule (linger 200 ms) included. Target commits count every commit carrying"
              + " floe.refresh-id (one per chunk), not compactions.");
    }
    return result;
  }

  /** Which of the source's commits (1 = the first) each target commit since {@code from} read. */
  private static List<Integer> sourceCommitsRead(Table source, Table target, long from) {
    List<Long> sourceSnapshots = new ArrayList<>();
    source.snapshots().forEach(s -> sourceSnapshots.add(s.snapshotId()));
    List<Integer> read = new ArrayList<>();
    for (Snapshot t : target.snapshots()) {
      String sourceId = t.summary().get(FloeProperties.SOURCE_SNAPSHOT_ID);
      if (t.timestampMillis() >= from
          && t.summary().get(FloeProperties.REFRESH_ID) != null
          && sourceId != null) {
        read.add(sourceSnapshots.indexOf(Long.parseLong(sourceId)) + 1);
      }
    }
    return read;
  }
}
