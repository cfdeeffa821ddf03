package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
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
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Scenario 2: what one small append costs. A weekly view over a day-partitioned source with N rows
 * a day; k rows are appended to the last day. Floe's refresh reads (rows, bytes) ÷ rows appended,
 * beside a full refresh and a recompute of the whole dirty bucket (what iceberg-ivm runs in Trino:
 * every row of the dirty week). Then OHLCV and VWAP views over a day and a week bucket after an
 * append, a late row and a delete ({@link MergeableViewsCost}). Then a 1-minute OHLCV view with a
 * median, recomputed rather than folded, over a day-partitioned source whose files are sorted by
 * time with row groups and pages small enough to prune: a few minutes' worth of rows appended at
 * the end of the last day, and the rows the refresh read ÷ the rows in the dirty minutes, beside
 * reading the whole day files.
 */
final class RefreshCostScenario {

  static final String NAME = "refresh-cost";
  private static final String QUERY =
      "SELECT symbol, date_trunc('week', ts) AS week, count(*) AS trades,"
          + " sum(quantity) AS volume, max(price) AS high, min(price) AS low"
          + " FROM lake.market.trades GROUP BY 1, 2";

  /**
   * The same view with an average: not decomposable, so Floe keeps its partial states (avg as a
   * compensated sum and a count) in a state table and folds appends into them.
   */
  private static final String QUERY_WITH_AVG =
      "SELECT symbol, date_trunc('week', ts) AS week, count(*) AS trades,"
          + " sum(quantity) AS volume, max(price) AS high, min(price) AS low,"
          + " avg(price) AS mean FROM lake.market.trades GROUP BY 1, 2";

  /** Weekly OHLCV bars: min_by and max_by keep partial states (the extreme key and its value). */
  private static final String QUERY_BARS =
      "SELECT symbol, date_trunc('week', ts) AS week, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume FROM lake.market.trades GROUP BY 1, 2";

  private static final int APPENDED = 1_000;

  /**
   * The 1-minute view: OHLCV bars and their median price, which keeps no partial state, so its
   * dirty minutes are recomputed (what this part measures: pruning to the dirty minutes' pages).
   */
  private static final String MINUTE_QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume, approx_percentile(price, 0.5) AS median"
          + " FROM lake.market.trades_sorted GROUP BY 1, 2";

  private static final int MINUTE_DAYS = 3;

  /** The minutes at the end of the last day that the append to the sorted source covers. */
  private static final int MINUTES_APPENDED = 5;

  /**
   * The sorted source's file layout: row groups of 8 MiB and pages of at most 1 000 rows, instead
   * of Iceberg's 128 MiB and 20 000 (pages stay at most Iceberg's 1 MiB). Small enough that a time
   * range maps to a few pages of a day file, as a user who sorts a table for time-range reads would
   * set it.
   */
  private static final Map<String, String> SORTED_LAYOUT =
      Map.of(
          TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES,
          Integer.toString(8 << 20),
          TableProperties.PARQUET_PAGE_ROW_LIMIT,
          "1000");

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
                    + " bucket (iceberg-ivm's MERGE). Then OHLCV and VWAP views over a day and a"
                    + " week bucket after an append, a late row and a delete: rows read per row"
                    + " appended or per row of the dirty hour, beside the whole dirty bucket."
                    + " Then a 1-minute OHLCV view over a"
                    + " day-partitioned source sorted by time; "
                    + MINUTES_APPENDED
                    + " minutes' worth of rows appended at the end of the last day: rows read per"
                    + " row in the dirty minutes, Floe beside reading the whole day files.")
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
      ViewRefresher refresher = new ViewRefresher(lake::catalog, lake.scanThreads());
      ViewDefinition weekly =
          ViewDefinition.of("weekly", QUERY, TableName.parse("lake.analytics.weekly"));
      ViewDefinition weeklyFull =
          ViewDefinition.of("weekly_full", QUERY, TableName.parse("lake.analytics.weekly_full"));
      ViewDefinition weeklyAvg =
          ViewDefinition.of(
              "weekly_avg", QUERY_WITH_AVG, TableName.parse("lake.analytics.weekly_avg"));
      ViewDefinition weeklyBars =
          ViewDefinition.of(
              "weekly_bars", QUERY_BARS, TableName.parse("lake.analytics.weekly_bars"));
      long s1 = trades.currentSnapshot().snapshotId();
      ctx.progress(NAME, "first refresh of the weekly views");
      for (ViewDefinition view : List.of(weekly, weeklyAvg, weeklyBars)) {
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
                  trades,
                  s2,
                  List.of(BucketedView.of(CompiledView.compile(weekly, 0))),
                  ManifestWork.LOCAL_READS)
              .get("weekly");
      RefreshOutcome incremental =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weekly), s2, s1, dirty),
              ViewRefresher.ProgressListener.NONE);
      RefreshOutcome folded =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weeklyAvg), s2, s1, dirty),
              ViewRefresher.ProgressListener.NONE);
      RefreshOutcome bars =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(weeklyBars), s2, s1, dirty),
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
      for (ViewDefinition view : List.of(weekly, weeklyAvg, weeklyBars)) {
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
              perRowAppended(
                  rows, "rows", incremental.work().rowsRead(), full.work().rowsRead(), fullRefresh))
          .figure(perRowAppended(rows, "rows", incremental.work().rowsRead(), bucketRows, bucket))
          .figure(
              perRowAppended(
                  bytes, "B", incremental.work().bytesRead(), full.work().bytesRead(), fullRefresh))
          .figure(perRowAppended(bytes, "B", incremental.work().bytesRead(), bucketBytes, bucket))
          .figure(
              perRowAppended(
                  rows + ", view with avg (partial states)",
                  "rows",
                  folded.work().rowsRead(),
                  bucketRows,
                  bucket))
          .figure(
              perRowAppended(
                  rows + ", OHLCV view (partial states)",
                  "rows",
                  bars.work().rowsRead(),
                  bucketRows,
                  bucket))
          .note(
              "weekly is decomposable (count, sum, max, min) and the snapshot an append, so Floe"
                  + " folds the appended rows into the target rows of the dirty week (the delta"
                  + " path) and reads nothing else; weekly_avg has avg, whose partial states (a"
                  + " compensated sum and a count per group) Floe keeps in a state table beside"
                  + " the target: it folds the appended rows into them ("
                  + folded.mode().label()
                  + ") and reads nothing else either, where iceberg-ivm recomputes the dirty"
                  + " week; so does weekly_bars, whose min_by and max_by keep the extreme key and"
                  + " its value ("
                  + bars.mode().label()
                  + ").");
      MergeableViewsCost.run(ctx, lake, refresher, result);
      minuteView(ctx, lake, refresher, result);
    }
    return result;
  }

  /**
   * The 1-minute view over a time-sorted, day-partitioned source: {@link #MINUTES_APPENDED}
   * minutes' worth of rows appended at the end of the last day; rows read ÷ rows in the dirty
   * minutes, beside the rows of the day files those minutes lie in.
   */
  private static void minuteView(
      BenchContext ctx, BenchLake lake, ViewRefresher refresher, ScenarioResult result)
      throws Exception {
    int rowsPerDay = ctx.quick() ? 500_000 : 2_000_000;
    int appended = rowsPerDay / 1440 * MINUTES_APPENDED;
    Table sorted =
        lake.catalog()
            .buildTable(TableIdentifier.of("market", "trades_sorted"), Trades.SCHEMA)
            .withPartitionSpec(Trades.BY_DAY)
            .withSortOrder(SortOrder.builderFor(Trades.SCHEMA).asc("ts").build())
            .withProperty("format-version", "2")
            .withProperties(SORTED_LAYOUT)
            .create();
    Trades generator = new Trades(7);
    ctx.progress(
        NAME, "writing " + MINUTE_DAYS + " days of " + rowsPerDay + " trades, sorted by time");
    for (int d = 0; d < MINUTE_DAYS; d++) {
      // The generator's rows are in time order: each day file is sorted by ts.
      Instant day = FIRST_DAY.plus(Duration.ofDays(d));
      TableWrites.append(sorted, generator.between(day, day.plus(Duration.ofDays(1)), rowsPerDay));
    }
    ViewDefinition minute =
        ViewDefinition.of("ohlcv_1m", MINUTE_QUERY, TableName.parse("lake.analytics.ohlcv_1m"));
    long s1 = sorted.currentSnapshot().snapshotId();
    ctx.progress(NAME, "first refresh of the 1-minute view");
    refresher.refresh(
        RefreshRequest.of(BenchLake.compiled(minute), s1, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);

    Instant end = FIRST_DAY.plus(Duration.ofDays(MINUTE_DAYS));
    long s2 =
        TableWrites.append(
            sorted,
            generator.between(end.minus(Duration.ofMinutes(MINUTES_APPENDED)), end, appended));
    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                sorted,
                s2,
                List.of(BucketedView.of(CompiledView.compile(minute, 0))),
                ManifestWork.LOCAL_READS)
            .get(minute.name());
    RefreshOutcome refreshed =
        refresher.refresh(
            RefreshRequest.of(BenchLake.compiled(minute), s2, s1, dirty),
            ViewRefresher.ProgressListener.NONE);

    // The rows in the dirty minutes, counted from the source at the refreshed snapshot, and the
    // rows of the files a scan of those minutes opens (the last day's file and the appended one).
    long first = dirty.ranges().ranges().get(0).start();
    long last = dirty.ranges().ranges().get(dirty.ranges().ranges().size() - 1).end();
    Expression minutes =
        Expressions.and(
            Expressions.greaterThanOrEqual("ts", first), Expressions.lessThan("ts", last));
    long dirtyRows = 0;
    try (CloseableIterable<Record> rows =
        IcebergGenerics.read(sorted).useSnapshot(s2).where(minutes).select("ts").build()) {
      for (Record row : rows) {
        if (dirty.contains(micros((OffsetDateTime) row.getField("ts")))) {
          dirtyRows++;
        }
      }
    }
    long dayRows = 0;
    try (CloseableIterable<FileScanTask> tasks =
        sorted.newScan().useSnapshot(s2).filter(minutes).planFiles()) {
      for (FileScanTask task : tasks) {
        dayRows += task.file().recordCount();
      }
    }
    long dirtyMinutes = 0;
    for (BucketRange range : dirty.ranges().ranges()) {
      dirtyMinutes += (range.end() - range.start()) / 60_000_000L;
    }
    Table target = lake.catalog().loadTable(minute.target().identifier());
    Oracle.difference(target, sorted, sorted.name(), s2, minute.query())
        .ifPresentOrElse(
            d -> result.note("WRONG RESULT of " + minute.name() + ": " + d),
            () -> result.note(minute.name() + " equals the oracle after the refresh"));
    result
        .parameter("minuteDays", MINUTE_DAYS)
        .parameter("minuteRowsPerDay", rowsPerDay)
        .parameter("minuteRowsAppended", appended)
        .parameter("minuteLayout", new TreeMap<>(SORTED_LAYOUT))
        .parameter("minuteDirtyBuckets", dirtyMinutes)
        .parameter("minuteDirtyRows", dirtyRows)
        .parameter("minuteRowsRead", refreshed.work().rowsRead())
        .figure(
            new Figure(
                "rows read per row in the dirty buckets, 1-minute view",
                "rows",
                refreshed.work().rowsRead() / (double) dirtyRows,
                dayRows / (double) dirtyRows,
                "whole day files",
                true))
        .note(
            minute.name()
                + " (OHLCV and a median, which keeps no partial state: recomputed, not folded)"
                + " over "
                + MINUTE_DAYS
                + " days of "
                + rowsPerDay
                + " rows, one file a day sorted by ts, written with "
                + new TreeMap<>(SORTED_LAYOUT)
                + "; "
                + appended
                + " rows over the last "
                + MINUTES_APPENDED
                + " minutes of the last day appended, which already held rows of those minutes."
                + " Floe read "
                + refreshed.work().rowsRead()
                + " rows for the "
                + dirtyRows
                + " rows of the "
                + dirtyMinutes
                + " dirty minutes; the day files they lie in hold "
                + dayRows
                + " (the baseline reads them whole: no row-group or page pruning).");
  }

  private static long micros(OffsetDateTime ts) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(ts.toInstant());
  }

  /** A cost of Floe's refresh beside a baseline's, both divided by the rows appended. */
  private static Figure perRowAppended(
      String metric, String unit, long floe, long baseline, String baselineName) {
    return new Figure(
        metric, unit, floe / (double) APPENDED, baseline / (double) APPENDED, baselineName, true);
  }
}
