package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.FloeProperties;
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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Scenario: what a target costs to write and to read while Floe refreshes it every 200 ms. A
 * 1-minute view over 500 symbols with a day of history, then a commit touching the current minute
 * every 200 ms of (simulated) time for a minute (one in ten also carrying a late trade), each
 * refreshed at once, copy-on-write and merge-on-read side by side: target bytes written per refresh
 * ÷ bytes of the dirty buckets' rows (those rows written alone, as the target writes files), with
 * and without the compactions that ran in the refreshes' slots, the target's live data and delete
 * files at the end, and the time to scan the whole target beside a freshly compacted copy of it.
 */
final class TargetWriteScenario {

  static final String NAME = "target-write";
  private static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open,"
          + " max(price) AS high, min(price) AS low, max_by(price, ts) AS close,"
          + " sum(quantity) AS volume, count(*) AS trade_count"
          + " FROM lake.market.trades GROUP BY symbol, date_trunc('minute', ts)";
  private static final Instant NOW = Instant.parse("2026-06-10T12:00:00Z");
  private static final int SYMBOLS = 500;
  private static final int TRADES_PER_COMMIT = 20;
  private static final Duration COMMIT_INTERVAL = Duration.ofMillis(200);

  /** Every this many commits, one trade of the commit is late: 1 to 23 hours old. */
  private static final int LATE_EVERY = 10;

  /** Tables the scenario writes beside the target: Parquet as Floe writes targets. */
  private static final java.util.Map<String, String> COPY_PROPERTIES =
      java.util.Map.of("format-version", "2", "write.parquet.compression-codec", "zstd");

  private TargetWriteScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    Duration span = ctx.quick() ? Duration.ofSeconds(30) : Duration.ofSeconds(60);
    int commits = (int) (span.toMillis() / COMMIT_INTERVAL.toMillis());
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "A 1-minute view over "
                    + SYMBOLS
                    + " symbols with a day of history, then a commit touching the current minute"
                    + " every 200 ms for "
                    + span.toSeconds()
                    + " s, each refreshed: target bytes written per refresh ÷ bytes of the dirty"
                    + " buckets' rows, files at the end, and the time to scan the target beside a"
                    + " freshly compacted copy; copy-on-write and merge-on-read.")
            .parameter("symbols", SYMBOLS)
            .parameter("historyMinutes", 24 * 60)
            .parameter("commits", commits)
            .parameter("tradesPerCommit", TRADES_PER_COMMIT)
            .parameter("commitInterval", "200ms (simulated: each commit is refreshed at once)")
            .parameter("lateTrade", "one in every " + LATE_EVERY + " commits, 1 to 23 h late");
    for (String mode : List.of("copy-on-write", "merge-on-read")) {
      try (BenchLake lake = new BenchLake(ctx.dir(NAME + "-" + mode))) {
        measure(ctx, lake, mode, commits, result);
      }
    }
    result.note(
        "Bytes written per refresh count the data and delete files of the refresh's own commit;"
            + " 'and the compactions' adds the files the compactions in the refreshes' slots wrote."
            + " One commit in "
            + LATE_EVERY
            + " carries a late trade into the history, whose refresh meets a large file. The dirty buckets' rows are measured by writing them"
            + " alone into one Parquet file with the target's settings.");
    return result;
  }

  private static void measure(
      BenchContext ctx, BenchLake lake, String mode, int commits, ScenarioResult result)
      throws Exception {
    Table trades = lake.createTrades("trades", Trades.BY_DAY);
    Random random = new Random(14);
    long[] nextId = {1};
    ctx.progress(NAME, mode + ": writing a day of history for " + SYMBOLS + " symbols");
    List<Record> history = new ArrayList<>(SYMBOLS * 24 * 60);
    Instant start = NOW.minus(Duration.ofDays(1));
    for (int minute = 0; minute < 24 * 60; minute++) {
      Instant at = start.plus(Duration.ofMinutes(minute));
      for (int s = 0; s < SYMBOLS; s++) {
        history.add(trade(nextId, random, s, at.plusMillis(random.nextInt(60_000))));
      }
    }
    long snapshot = TableWrites.append(trades, history);
    history = null;

    ViewDefinition view =
        ViewDefinition.of("ohlcv_1m", QUERY, TableName.parse("lake.analytics.ohlcv_1m"));
    ViewRefresher refresher = new ViewRefresher(lake::catalog, lake.scanThreads());
    refresher.refresh(
        RefreshRequest.of(BenchLake.compiled(view), snapshot, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
    Table target = lake.catalog().loadTable(view.target().identifier());
    if (mode.equals("merge-on-read")) {
      target.updateProperties().set("write.merge.mode", "merge-on-read").commit();
    }
    Table scratch =
        lake.catalog()
            .buildTable(
                TableIdentifier.of("analytics", "dirty_rows_" + mode.replace('-', '_')),
                target.schema())
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperties(COPY_PROPERTIES)
            .create();

    ctx.progress(NAME, mode + ": " + commits + " commits touching the current minute");
    long written = 0;
    long dirtyBytes = 0;
    long lateWritten = 0;
    long lateDirtyBytes = 0;
    long compactionBytes = 0;
    int compactions = 0;
    double worst = 0;
    long refreshNanos = 0;
    for (int i = 0; i < commits; i++) {
      Instant at = NOW.plus(COMMIT_INTERVAL.multipliedBy(i));
      List<Record> rows = new ArrayList<>();
      for (int k = 0; k < TRADES_PER_COMMIT; k++) {
        rows.add(trade(nextId, random, random.nextInt(SYMBOLS), at.plusMillis(k)));
      }
      boolean late = i % LATE_EVERY == LATE_EVERY - 1;
      if (late) {
        Instant past = NOW.minus(Duration.ofMinutes(60 + random.nextInt(22 * 60)));
        rows.set(0, trade(nextId, random, random.nextInt(SYMBOLS), past));
      }
      if (i % 50 == 49) {
        ctx.progress(NAME, mode + ": " + (i + 1) + " commits refreshed");
      }
      long previous = snapshot;
      snapshot = TableWrites.append(trades, rows);
      DirtyBuckets dirty =
          DirtyBucketDetector.detect(
                  trades,
                  snapshot,
                  List.of(BucketedView.of(BenchLake.compiled(view))),
                  ManifestWork.LOCAL_READS)
              .get(view.name());
      long began = System.nanoTime();
      RefreshOutcome outcome =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(view), snapshot, previous, dirty),
              ViewRefresher.ProgressListener.NONE);
      refreshNanos += System.nanoTime() - began;
      target.refresh();
      if (outcome.target().snapshotId() == null) {
        throw new IllegalStateException("refresh " + i + " committed nothing: " + outcome);
      }
      Snapshot committed = target.snapshot(outcome.target().snapshotId());
      long bytes = addedBytes(target, committed);
      long dirtyRows = dirtyRowBytes(target, scratch, committed);
      if (late) {
        lateWritten += bytes;
        lateDirtyBytes += dirtyRows;
      } else {
        written += bytes;
        dirtyBytes += dirtyRows;
        worst = Math.max(worst, dirtyRows == 0 ? 0 : (double) bytes / dirtyRows);
      }
      if (outcome.compaction() != null) {
        compactions++;
        compactionBytes += outcome.compaction().bytesWritten();
      }
    }

    String label = " (" + mode + ")";
    result.figure(
        Figure.alone(
            "target bytes written ÷ dirty rows' bytes, current-minute refreshes" + label,
            "x",
            (double) written / dirtyBytes));
    result.figure(Figure.alone("worst single refresh, same ratio" + label, "x", worst));
    result.figure(
        Figure.alone(
            "same ratio, refreshes with a late trade" + label,
            "x",
            (double) lateWritten / lateDirtyBytes));
    result.figure(
        Figure.alone(
            "same ratio, all refreshes and the compactions" + label,
            "x",
            (double) (written + lateWritten + compactionBytes) / (dirtyBytes + lateDirtyBytes)));
    result.figure(
        Figure.alone(
            "bytes written per refresh" + label, "B", (double) (written + lateWritten) / commits));
    result.figure(Figure.alone("refresh time, mean" + label, "ms", refreshNanos / 1e6 / commits));
    result.figure(Figure.alone("compactions" + label, "", compactions));
    long[] files = files(target);
    result.figure(Figure.alone("live data files at the end" + label, "files", files[0]));
    result.figure(Figure.alone("live delete files at the end" + label, "files", files[1]));

    Table copy = compactedCopy(lake, target, mode);
    double scan = scanSeconds(target);
    double compactedScan = scanSeconds(copy);
    result.figure(
        new Figure(
            "full scan of the target" + label,
            "s",
            scan,
            compactedScan,
            "a freshly compacted copy",
            true));
    String difference =
        Oracle.difference(target, trades, trades.name(), snapshot, QUERY)
            .orElse("equals the oracle");
    result.note(
        mode
            + ": the target "
            + difference
            + String.format(
                Locale.ROOT,
                "; %d compactions; the compacted copy has %d data files",
                compactions,
                files(copy)[0]));
    ctx.progress(NAME, mode + ": done");
  }

  private static Record trade(long[] nextId, Random random, int symbol, Instant ts) {
    return Trades.of(
        nextId[0]++,
        String.format(Locale.ROOT, "S%03d", symbol),
        ts,
        100 + random.nextInt(10_000) / 100.0,
        1 + random.nextInt(500),
        random.nextBoolean() ? "B" : "S");
  }

  /** Bytes of the data and delete files a snapshot added. */
  private static long addedBytes(Table table, Snapshot snapshot) {
    long bytes = 0;
    for (DataFile file : snapshot.addedDataFiles(table.io())) {
      bytes += file.fileSizeInBytes();
    }
    for (DeleteFile file : snapshot.addedDeleteFiles(table.io())) {
      bytes += file.fileSizeInBytes();
    }
    return bytes;
  }

  /** The rows of the refresh's dirty buckets at its snapshot, written alone: their bytes. */
  private static long dirtyRowBytes(Table target, Table scratch, Snapshot snapshot) {
    DirtyBuckets dirty =
        DirtyBuckets.parse(snapshot.summary().get(FloeProperties.DIRTY_BUCKETS), null);
    Expression filter = Expressions.alwaysFalse();
    for (BucketRange range : dirty.ranges().ranges()) {
      filter =
          Expressions.or(
              filter,
              Expressions.and(
                  Expressions.greaterThanOrEqual("minute_ts", range.start()),
                  Expressions.lessThan("minute_ts", range.end())));
    }
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(target).useSnapshot(snapshot.snapshotId()).where(filter).build()) {
      records.forEach(r -> rows.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (rows.isEmpty()) {
      return 0;
    }
    return TableWrites.write(scratch, rows).stream().mapToLong(DataFile::fileSizeInBytes).sum();
  }

  /** Live data files and delete files of the table's current snapshot. */
  private static long[] files(Table table) {
    table.refresh();
    long data = 0;
    java.util.Set<String> deletes = new java.util.HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        data++;
        task.deletes().forEach(d -> deletes.add(d.location()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new long[] {data, deletes.size()};
  }

  /** Every live row of the target, sorted, in one file per partition of a new table. */
  private static Table compactedCopy(BenchLake lake, Table target, String mode) {
    Table copy =
        lake.catalog()
            .buildTable(
                TableIdentifier.of("analytics", "compacted_" + mode.replace('-', '_')),
                target.schema())
            .withPartitionSpec(target.spec())
            .withSortOrder(target.sortOrder())
            .withProperties(COPY_PROPERTIES)
            .create();
    List<Record> rows = Oracle.rows(target, target.currentSnapshot().snapshotId());
    rows.sort(
        Comparator.comparing((Record r) -> (OffsetDateTime) r.getField("minute_ts"))
            .thenComparing(r -> (String) r.getField("symbol")));
    var append = copy.newAppend();
    TableWrites.write(copy, rows).forEach(append::appendFile);
    append.commit();
    return copy;
  }

  /** The best of three full scans, deletes applied, in seconds. */
  private static double scanSeconds(Table table) {
    double best = Double.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      long began = System.nanoTime();
      long rows = 0;
      try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
        for (Record ignored : records) {
          rows++;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (rows < 0) {
        throw new IllegalStateException();
      }
      best = Math.min(best, (System.nanoTime() - began) / 1e9);
    }
    return best;
  }
}
