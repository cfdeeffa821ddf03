package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The part of {@code refresh-cost} that measures views whose aggregates merge but do not decompose
 * (issue 22): OHLCV bars ({@code min_by}/{@code max_by}) and a VWAP (an expression over two sums),
 * each over a day and a week bucket, over 14 days of trades (1 M rows with {@code --quick}, else 10
 * M). Three changes follow, each refreshed in every view: an append of {@value #APPENDED} rows to
 * the last day, one late row into an earlier day of the last week, and the delete of one row (a
 * position delete). Per view and change, the source rows Floe's refresh read ÷ the rows appended
 * (the append) or ÷ the rows of the hour the change lies in (the dirty sub-bucket: the late row,
 * the delete), beside the rows of the whole dirty bucket, which a recompute of it reads
 * (iceberg-ivm and a view that keeps no partial states). Whatever path Floe takes is what is
 * measured: each refresh's mode and reason are in the notes. Every view is checked against the
 * oracle at the end.
 */
final class MergeableViewsCost {

  private static final String SOURCE = "lake.market.trades_mergeable";

  private static final String OHLCV =
      "SELECT symbol, date_trunc('%s', ts) AS bucket_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume FROM "
          + SOURCE
          + " GROUP BY 1, 2";

  private static final String VWAP =
      "SELECT symbol, date_trunc('%s', ts) AS bucket_ts,"
          + " sum(price * quantity) / sum(quantity) AS vwap, sum(quantity) AS volume FROM "
          + SOURCE
          + " GROUP BY 1, 2";

  private static final int DAYS = 14;
  private static final int APPENDED = 1_000;

  /** A Monday, so that the 14 days are two whole ISO weeks. */
  private static final Instant FIRST_DAY = Instant.parse("2026-06-01T00:00:00Z");

  private static final String BUCKET_BASELINE = "whole dirty bucket (recompute)";

  private MergeableViewsCost() {}

  /** One change of the source: its snapshot and the hour it lies in, or null for the append. */
  private record Change(String name, long snapshot, long previous, Instant hour) {}

  static void run(
      BenchContext ctx, BenchLake lake, ViewRefresher refresher, ScenarioResult result) {
    int rows = ctx.quick() ? 1_000_000 : 10_000_000;
    int rowsPerDay = rows / DAYS;
    Table trades = lake.createTrades("trades_mergeable", Trades.BY_DAY);
    Trades generator = new Trades(11);
    String name = RefreshCostScenario.NAME;
    ctx.progress(name, "writing " + DAYS + " days of " + rowsPerDay + " trades (OHLCV, VWAP)");
    for (int d = 0; d < DAYS; d++) {
      Instant day = FIRST_DAY.plus(Duration.ofDays(d));
      TableWrites.append(trades, generator.between(day, day.plus(Duration.ofDays(1)), rowsPerDay));
    }
    List<ViewDefinition> views = new ArrayList<>();
    for (String unit : List.of("day", "week")) {
      views.add(view("ohlcv_" + unit, OHLCV.formatted(unit)));
      views.add(view("vwap_" + unit, VWAP.formatted(unit)));
    }
    long first = trades.currentSnapshot().snapshotId();
    Map<String, Long> fullRows = new LinkedHashMap<>();
    for (ViewDefinition view : views) {
      ctx.progress(name, "first (full) refresh of " + view.name());
      RefreshOutcome full =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(view), first, null, DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
      fullRows.put(view.name(), full.work().rowsRead());
    }

    Instant lastDay = FIRST_DAY.plus(Duration.ofDays(DAYS - 1L));
    long appended =
        TableWrites.append(
            trades,
            generator.between(
                lastDay.plus(Duration.ofHours(12)), lastDay.plus(Duration.ofHours(13)), APPENDED));
    Change append = new Change("append", appended, first, null);
    // A trade three days late: into the last week, but not into its last day.
    Instant lateAt = lastDay.minus(Duration.ofDays(3)).plus(Duration.ofMinutes(10 * 60 + 30));
    long late = TableWrites.append(trades, List.of(generator.next(lateAt)));
    Change lateRow = new Change("late row", late, appended, lateAt.truncatedTo(ChronoUnit.HOURS));
    // One trade of the afternoon two days back, cancelled: its id, from the generator's order.
    long cancelled = 11L * rowsPerDay + rowsPerDay * 14L / 24 + 1;
    Instant[] deletedAt = new Instant[1];
    long deleted =
        TableWrites.deleteByPosition(
            trades,
            row -> {
              boolean match = (Long) row.getField("id") == cancelled;
              if (match) {
                deletedAt[0] = ((OffsetDateTime) row.getField("ts")).toInstant();
              }
              return match;
            });
    if (deletedAt[0] == null) {
      throw new IllegalStateException("No trade " + cancelled + " to delete in " + trades.name());
    }
    Change delete = new Change("delete", deleted, late, deletedAt[0].truncatedTo(ChronoUnit.HOURS));

    RowCounts counts = new RowCounts(trades);
    for (Change change : List.of(append, lateRow, delete)) {
      ctx.progress(name, "refreshing the OHLCV and VWAP views after the " + change.name());
      Map<String, DirtyBuckets> dirty = detect(trades, change.snapshot(), views);
      long hourRows =
          change.hour() == null
              ? APPENDED
              : counts.rows(
                  change.snapshot(),
                  DirtyBuckets.of(
                      BucketRangeSet.of(
                          List.of(
                              new BucketRange(
                                  micros(change.hour()),
                                  micros(change.hour().plus(Duration.ofHours(1)))))),
                      false));
      for (ViewDefinition view : views) {
        DirtyBuckets buckets = dirty.get(view.name());
        RefreshOutcome outcome =
            refresher.refresh(
                RefreshRequest.of(
                    BenchLake.compiled(view), change.snapshot(), change.previous(), buckets),
                ViewRefresher.ProgressListener.NONE);
        long bucketRows = counts.rows(change.snapshot(), buckets);
        long read = outcome.work().rowsRead();
        String metric =
            change.hour() == null
                ? "rows read per row appended, " + view.name()
                : "rows read per row of the dirty hour after a "
                    + change.name()
                    + ", "
                    + view.name();
        result.figure(
            new Figure(
                metric,
                "rows",
                read / (double) hourRows,
                bucketRows / (double) hourRows,
                BUCKET_BASELINE,
                true));
        String key = "mergeable." + view.name() + "." + change.name().replace(' ', '-');
        if (change.hour() != null) {
          result.parameter(key + ".dirtyHourRows", hourRows);
        }
        result
            .parameter(key + ".mode", outcome.mode().label())
            .parameter(key + ".rowsRead", read)
            .parameter(key + ".dirtyBucketRows", bucketRows)
            .note(
                view.name()
                    + " after the "
                    + change.name()
                    + ": "
                    + outcome.mode().label()
                    + (outcome.reason() == null ? "" : " (" + outcome.reason() + ")")
                    + ", read "
                    + read
                    + " source rows"
                    + (change.hour() == null ? "" : " for the " + hourRows + " of the dirty hour")
                    + "; the dirty bucket holds "
                    + bucketRows);
      }
    }
    for (ViewDefinition view : views) {
      result.parameter(
          "mergeable." + view.name() + ".fullRefreshRowsRead", fullRows.get(view.name()));
      Table target = lake.catalog().loadTable(view.target().identifier());
      Oracle.difference(target, trades, SOURCE, delete.snapshot(), view.query())
          .ifPresentOrElse(
              d -> result.note("WRONG RESULT of " + view.name() + ": " + d),
              () -> result.note(view.name() + " equals the oracle after the three changes"));
    }
    result.parameter("mergeableRows", (long) rowsPerDay * DAYS).parameter("mergeableDays", DAYS);
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  private static Map<String, DirtyBuckets> detect(
      Table trades, long snapshot, List<ViewDefinition> views) {
    List<BucketedView> bucketed = new ArrayList<>();
    for (ViewDefinition view : views) {
      bucketed.add(BucketedView.of(BenchLake.compiled(view)));
    }
    return DirtyBucketDetector.detect(trades, snapshot, bucketed, ManifestWork.LOCAL_READS);
  }

  private static long micros(Instant instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(instant);
  }

  /** Source rows in dirty buckets, counted at a snapshot from the rows themselves, once each. */
  private static final class RowCounts {
    private final Table table;
    private final Map<String, Long> counted = new HashMap<>();

    RowCounts(Table table) {
      this.table = table;
    }

    long rows(long snapshot, DirtyBuckets dirty) {
      return counted.computeIfAbsent(snapshot + " " + dirty, k -> count(snapshot, dirty));
    }

    private long count(long snapshot, DirtyBuckets dirty) {
      List<BucketRange> ranges = dirty.ranges().ranges();
      if (ranges.isEmpty()) {
        return 0;
      }
      Expression filter =
          Expressions.and(
              Expressions.greaterThanOrEqual("ts", ranges.get(0).start()),
              Expressions.lessThan("ts", ranges.get(ranges.size() - 1).end()));
      long rows = 0;
      try (CloseableIterable<Record> records =
          IcebergGenerics.read(table).useSnapshot(snapshot).where(filter).select("ts").build()) {
        for (Record row : records) {
          if (dirty.contains(micros(((OffsetDateTime) row.getField("ts")).toInstant()))) {
            rows++;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return rows;
    }
  }
}
