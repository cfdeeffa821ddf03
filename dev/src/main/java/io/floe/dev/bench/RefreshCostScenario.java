package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Scenario 2: what one small append costs. A weekly view over a day-partitioned source with N rows
 * a day; k rows are appended to the last day. Floe's refresh reads (rows, bytes) ÷ rows appended,
 * beside a full refresh and a recompute of the whole dirty bucket (what iceberg-ivm runs in Trino:
 * every row of the dirty week).
 */
final class RefreshCostScenario {

  static final String NAME = "refresh-cost";
  private static final String QUERY =
      "SELECT symbol, date_trunc('week', ts) AS week, count(*) AS trades,"
          + " sum(quantity) AS volume, max(price) AS high, min(price) AS low"
          + " FROM lake.market.trades GROUP BY 1, 2";

  /** The same view with an average: not decomposable, so its dirty buckets are recomputed. */
  private static final String QUERY_WITH_AVG =
      "SELECT symbol, date_trunc('week', ts) AS week, count(*) AS trades,"
          + " sum(quantity) AS volume, max(price) AS high, min(price) AS low,"
          + " avg(price) AS mean FROM lake.market.trades GROUP BY 1, 2";

  private static final int APPENDED = 1_000;

  /** A Monday, so that the 14 days are two whole ISO weeks. */
  private static final Instant FIRST_DAY = Instant.parse("2026-06-01T00:00:00Z");

  private RefreshCostScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    int days = 14;
    int rowsPerDay = ctx.quick() ? 50_000 : 500_000;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "A weekly view over a day-partitioned source; "
                    + APPENDED
                    + " rows appended to the last day. Source rows and bytes read per row"
                    + " appended, Floe beside a full refresh and a recompute of the whole dirty"
                    + " bucket (iceberg-ivm's MERGE).")
            .parameter("days", days)
            .parameter("rowsPerDay", rowsPerDay)
            .parameter("rowsAppended", APPENDED);
    try (BenchLake lake = new BenchLake(ctx.dir(NAME))) {
      Table trades = lake.createTrades("trades", Trades.BY_DAY);
      Trades generator = new Trades(2);
      ctx.progress(NAME, "writing " + days + " days of " + rowsPerDay + " trades");
      for (int d = 0; d < days; d++) {
        Instant day = FIRST_DAY.plus(Duration.ofDays(d));
        TableWrites.append(
            trades, generator.between(day, day.plus(Duration.ofDays(1)), rowsPerDay));
      }
      ViewRefresher refresher = new ViewRefresher(lake::catalog);
      ViewDefinition weekly =
          ViewDefinition.of("weekly", QUERY, TableName.parse("lake.analytics.weekly"));
      ViewDefinition weeklyFull =
          ViewDefinition.of("weekly_full", QUERY, TableName.parse("lake.analytics.weekly_full"));
      ViewDefinition weeklyAvg =
          ViewDefinition.of(
              "weekly_avg", QUERY_WITH_AVG, TableName.parse("lake.analytics.weekly_avg"));
      long s1 = trades.currentSnapshot().snapshotId();
      ctx.progress(NAME, "first refresh of the weekly views");
      for (ViewDefinition view : List.of(weekly, weeklyAvg)) {
        refresher.refresh(
            RefreshRequest.of(BenchLake.compiled(view), s1, null, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);
      }

      Instant lastDay = FIRST_DAY.plus(Duration.ofDays(days - 1L));
      long s2 =
          TableWrites.append(
              trades,
              generator.between(
                  lastDay.plus(Duration.ofHours(12)),
                  lastDay.plus(Duration.ofHours(13)),
                  APPENDED));
      DirtyBuckets dirty =
          DirtyBucketDetector.detect(
                  trades, s2, List.of(BucketedView.of(CompiledView.compile(weekly, 0))))
              .get("weekly");
      RefreshOutcome incremental =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weekly), s2, s1, dirty),
              ViewRefresher.ProgressListener.NONE);
      RefreshOutcome recomputed =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weeklyAvg), s2, s1, dirty),
              ViewRefresher.ProgressListener.NONE);
      // (a) a full refresh: the first refresh of a second copy of the view, at the same snapshot.
      RefreshOutcome full =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weeklyFull), s2, null, DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
      // (b) the whole dirty bucket: every file a scan of the dirty week opens, as Trino would.
      long weekStart = BucketColumnType.TIMESTAMPTZ.fromInstant(lastDay.minus(Duration.ofDays(6)));
      long weekEnd = BucketColumnType.TIMESTAMPTZ.fromInstant(lastDay.plus(Duration.ofDays(1)));
      long bucketRows = 0;
      long bucketBytes = 0;
      try (CloseableIterable<FileScanTask> tasks =
          trades
              .newScan()
              .useSnapshot(s2)
              .filter(
                  Expressions.and(
                      Expressions.greaterThanOrEqual("ts", weekStart),
                      Expressions.lessThan("ts", weekEnd)))
              .planFiles()) {
        for (FileScanTask task : tasks) {
          bucketRows += task.file().recordCount();
          bucketBytes += task.file().fileSizeInBytes();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      for (ViewDefinition view : List.of(weekly, weeklyAvg)) {
        Table target = lake.catalog().loadTable(view.target().identifier());
        Oracle.difference(target, trades, trades.name(), s2, view.query())
            .ifPresentOrElse(
                d -> result.note("WRONG RESULT of " + view.name() + ": " + d),
                () -> result.note(view.name() + " equals the oracle after the refresh"));
      }
      String fullRefresh = "full refresh";
      String bucket = "whole dirty bucket (iceberg-ivm)";
      String rows = "rows read per row appended";
      String bytes = "bytes read per row appended";
      result
          .figure(
              perRowAppended(rows, "rows", incremental.rowsRead(), full.rowsRead(), fullRefresh))
          .figure(perRowAppended(rows, "rows", incremental.rowsRead(), bucketRows, bucket))
          .figure(
              perRowAppended(bytes, "B", incremental.bytesRead(), full.bytesRead(), fullRefresh))
          .figure(perRowAppended(bytes, "B", incremental.bytesRead(), bucketBytes, bucket))
          .figure(
              perRowAppended(
                  rows + ", view with avg (bucket recompute)",
                  "rows",
                  recomputed.rowsRead(),
                  bucketRows,
                  bucket))
          .note(
              "weekly is decomposable (count, sum, max, min) and the snapshot an append, so Floe"
                  + " folds the appended rows into the target rows of the dirty week (the delta"
                  + " path) and reads nothing else; weekly_avg has avg, so Floe recomputes the"
                  + " dirty week as iceberg-ivm does, reading fewer rows only where file"
                  + " statistics exclude files of the week.");
    }
    return result;
  }

  /** A cost of Floe's refresh beside a baseline's, both divided by the rows appended. */
  private static Figure perRowAppended(
      String metric, String unit, long floe, long baseline, String baselineName) {
    return new Figure(
        metric, unit, floe / (double) APPENDED, baseline / (double) APPENDED, baselineName, true);
  }
}
