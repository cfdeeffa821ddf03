package io.floe.dev.bench;

import io.floe.dev.EmbeddedStack;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.LongPredicate;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Scenario {@value #NAME}: what a refresh of a view that joins its fact table to a dimension costs
 * (DESIGN §3.10), on Floe's defaults. Five-minute volume per sector ({@code date_bin}), trades
 * joined to a dimension of the sector of each of many symbols. After a fact append, and after a
 * dimension change of one key (one symbol moved to another sector), the source rows the refresh
 * read ÷ the fact rows in the buckets the change affects (for the append, its dirty buckets; for
 * the dimension change, the buckets holding a trade of that symbol), beside a full refresh. The
 * requests are those the maintain stage makes: the detected changes of the append, and a catch-up
 * that pins the dimension's new snapshot for the dimension commit.
 */
final class JoinScenario {

  static final String NAME = "join";

  private static final String QUERY =
      "SELECT s.sector, date_bin(INTERVAL '5' MINUTE, t.ts) AS bar_ts,"
          + " sum(t.quantity) AS volume, count(*) AS trades"
          + " FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol"
          + " GROUP BY s.sector, date_bin(INTERVAL '5' MINUTE, t.ts)";

  private static final TableName SYMBOLS = TableName.parse("lake.ref.symbols");

  private static final Schema SYMBOLS_SCHEMA =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));

  private static final int SECTORS = 11;

  private static final long BUCKET_MICROS = Duration.ofMinutes(5).toNanos() / 1_000;

  private static final int APPENDED = 1_000;

  /** The minutes at the end of the last day that the append covers. */
  private static final int MINUTES_APPENDED = 5;

  private static final Instant FIRST_DAY = Instant.parse("2026-06-01T00:00:00Z");

  private JoinScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    int days = ctx.quick() ? 2 : 7;
    int rowsPerDay = ctx.quick() ? 50_000 : 500_000;
    // About one bucket in six holds a trade of a given symbol, in either size.
    int symbolCount = ctx.quick() ? 1_000 : 10_000;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "Five-minute volume per sector: trades (day-partitioned, written in time order)"
                    + " joined to a dimension of the sector of each symbol. Source rows read per"
                    + " fact row in the buckets the change affects, after "
                    + APPENDED
                    + " trades appended over the last "
                    + MINUTES_APPENDED
                    + " minutes and after one symbol moved to another sector, Floe beside a full"
                    + " refresh.")
            .parameter("days", days)
            .parameter("rowsPerDay", rowsPerDay)
            .parameter("symbols", symbolCount)
            .parameter("sectors", SECTORS)
            .parameter("rowsAppended", APPENDED);
    try (BenchLake lake = new BenchLake(ctx.dir(NAME))) {
      EmbeddedStack.createNamespaces(lake.catalog(), Namespace.of("ref"));
      Table trades = lake.createTrades("trades", Trades.BY_DAY);
      Table symbols =
          lake.catalog()
              .buildTable(SYMBOLS.identifier(), SYMBOLS_SCHEMA)
              .withPartitionSpec(PartitionSpec.unpartitioned())
              .withProperty("format-version", "2")
              .create();
      Random random = new Random(11);
      List<Record> dimension = new ArrayList<>();
      for (int i = 0; i < symbolCount; i++) {
        dimension.add(symbolRow(symbol(i), "sector-" + (i % SECTORS)));
      }
      TableWrites.append(symbols, dimension);
      ctx.progress(NAME, "writing " + days + " days of " + rowsPerDay + " trades");
      long id = 0;
      for (int d = 0; d < days; d++) {
        Instant day = FIRST_DAY.plus(Duration.ofDays(d));
        TableWrites.append(
            trades, trades(random, day, day.plus(Duration.ofDays(1)), rowsPerDay, symbolCount, id));
        id += rowsPerDay;
      }
      ViewRefresher refresher = new ViewRefresher(lake::catalog, lake.scanThreads());
      ViewDefinition view =
          ViewDefinition.of("sectors_5m", QUERY, TableName.parse("lake.analytics.sectors_5m"));
      ViewDefinition copy =
          ViewDefinition.of(
              "sectors_5m_full", QUERY, TableName.parse("lake.analytics.sectors_5m_full"));
      CompiledView compiled = BenchLake.compiled(view);
      long s1 = trades.currentSnapshot().snapshotId();
      ctx.progress(NAME, "first refresh of the view");
      refresher.refresh(
          RefreshRequest.of(compiled, s1, null, DirtyBuckets.none()),
          ViewRefresher.ProgressListener.NONE);

      // A fact append: its dirty buckets are detected from file statistics, as the detect stage
      // does, and refreshed.
      Instant end = FIRST_DAY.plus(Duration.ofDays(days));
      long s2 =
          TableWrites.append(
              trades,
              trades(
                  random,
                  end.minus(Duration.ofMinutes(MINUTES_APPENDED)),
                  end,
                  APPENDED,
                  symbolCount,
                  id));
      DirtyBuckets dirty =
          DirtyBucketDetector.detect(
                  trades,
                  s2,
                  List.of(BucketedView.of(CompiledView.compile(view, 0))),
                  ManifestWork.LOCAL_READS)
              .get(view.name());
      ctx.progress(NAME, "refresh after a fact append");
      RefreshOutcome afterAppend =
          refresher.refresh(
              RefreshRequest.of(compiled, s2, s1, dirty), ViewRefresher.ProgressListener.NONE);
      check(result, lake, view, trades, s2, symbols, "after the fact append");

      // A dimension change of one key: the maintain stage asks for a catch-up at the fact's
      // snapshot, which pins the dimension's new snapshot.
      String moved = symbol(random.nextInt(symbolCount));
      String was = "sector-" + (Integer.parseInt(moved.substring(1)) % SECTORS);
      String now = "sector-" + ((Integer.parseInt(moved.substring(1)) + 1) % SECTORS);
      TableWrites.overwrite(
          symbols, r -> moved.equals(r.getField("symbol")), List.of(symbolRow(moved, now)));
      ctx.progress(NAME, "refresh after " + moved + " moved from " + was + " to " + now);
      RefreshOutcome afterDimension =
          refresher.refresh(
              new RefreshRequest(
                  compiled,
                  RefreshId.of(view.name(), compiled.version(), s2),
                  null,
                  s2,
                  new RefreshRequest.CatchUp(DirtyBuckets.none())),
              ViewRefresher.ProgressListener.NONE);
      check(result, lake, view, trades, s2, symbols, "after the dimension change");

      ctx.progress(NAME, "full refresh of a copy of the view");
      RefreshOutcome full =
          refresher.refresh(
              RefreshRequest.of(BenchLake.compiled(copy), s2, null, DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
      check(result, lake, copy, trades, s2, symbols, "after its full refresh");

      // The fact rows in the buckets each change affects, counted from the fact at s2.
      Map<Long, Long> rowsPerBucket = new HashMap<>();
      Set<Long> bucketsOfMoved = new HashSet<>();
      long totalRows = 0;
      try (CloseableIterable<Record> rows =
          IcebergGenerics.read(trades).useSnapshot(s2).select("symbol", "ts").build()) {
        for (Record row : rows) {
          long bucket =
              Math.floorDiv(
                  BucketColumnType.TIMESTAMPTZ.fromInstant(
                      ((OffsetDateTime) row.getField("ts")).toInstant()),
                  BUCKET_MICROS);
          rowsPerBucket.merge(bucket, 1L, Long::sum);
          if (moved.equals(row.getField("symbol"))) {
            bucketsOfMoved.add(bucket);
          }
          totalRows++;
        }
      }
      long appendRows = rowsIn(rowsPerBucket, b -> dirty.contains(b * BUCKET_MICROS));
      long appendBuckets =
          rowsPerBucket.keySet().stream().filter(b -> dirty.contains(b * BUCKET_MICROS)).count();
      long dimensionRows = rowsIn(rowsPerBucket, bucketsOfMoved::contains);
      String rowsRead = "rows read per row in the affected buckets";
      result
          .parameter("factRows", totalRows)
          .parameter("buckets", rowsPerBucket.size())
          .parameter("appendAffectedBuckets", appendBuckets)
          .parameter("appendAffectedRows", appendRows)
          .parameter("appendRowsRead", afterAppend.work().rowsRead())
          .parameter("appendMode", afterAppend.mode().label())
          .parameter("dimensionKey", moved)
          .parameter("dimensionAffectedBuckets", bucketsOfMoved.size())
          .parameter("dimensionAffectedRows", dimensionRows)
          .parameter("dimensionRowsRead", afterDimension.work().rowsRead())
          .parameter("dimensionMode", afterDimension.mode().label())
          .parameter("fullRowsRead", full.work().rowsRead())
          .figure(
              new Figure(
                  rowsRead + ", after a fact append",
                  "rows",
                  afterAppend.work().rowsRead() / (double) appendRows,
                  full.work().rowsRead() / (double) appendRows,
                  "full refresh",
                  true))
          .figure(
              new Figure(
                  rowsRead + ", after a dimension change of one key",
                  "rows",
                  afterDimension.work().rowsRead() / (double) dimensionRows,
                  full.work().rowsRead() / (double) dimensionRows,
                  "full refresh",
                  true))
          .note(
              "After the append Floe refreshed "
                  + afterAppend.mode().label()
                  + " ("
                  + (afterAppend.reason() == null ? "its dirty buckets" : afterAppend.reason())
                  + "), reading "
                  + afterAppend.work().rowsRead()
                  + " fact rows; the "
                  + appendBuckets
                  + " dirty buckets hold "
                  + appendRows
                  + ". After "
                  + moved
                  + " moved from "
                  + was
                  + " to "
                  + now
                  + " Floe refreshed "
                  + afterDimension.mode().label()
                  + " ("
                  + afterDimension.reason()
                  + "), reading "
                  + afterDimension.work().rowsRead()
                  + " fact rows; the "
                  + bucketsOfMoved.size()
                  + " of "
                  + rowsPerBucket.size()
                  + " buckets holding a trade of "
                  + moved
                  + " hold "
                  + dimensionRows
                  + ". A full refresh reads all "
                  + full.work().rowsRead()
                  + ".");
    }
    return result;
  }

  private static long rowsIn(Map<Long, Long> rowsPerBucket, LongPredicate affected) {
    long rows = 0;
    for (Map.Entry<Long, Long> bucket : rowsPerBucket.entrySet()) {
      if (affected.test(bucket.getKey())) {
        rows += bucket.getValue();
      }
    }
    return rows;
  }

  /** Notes whether the view's target equals the oracle over the fact and the dimension. */
  private static void check(
      ScenarioResult result,
      BenchLake lake,
      ViewDefinition view,
      Table trades,
      long factSnapshot,
      Table symbols,
      String when) {
    symbols.refresh();
    Table target = lake.catalog().loadTable(view.target().identifier());
    Oracle.difference(
            "view " + view.name(),
            factSnapshot,
            Oracle.expected(
                new Oracle.Source(trades, "lake.market.trades", factSnapshot),
                List.of(
                    new Oracle.Source(
                        symbols, SYMBOLS.toString(), symbols.currentSnapshot().snapshotId())),
                view.query()),
            Oracle.actual(target))
        .ifPresentOrElse(
            d -> result.note("WRONG RESULT of " + view.name() + " " + when + ": " + d),
            () -> result.note(view.name() + " equals the oracle " + when));
  }

  /** {@code count} trades of uniformly drawn symbols between {@code from} and {@code to}. */
  private static List<Record> trades(
      Random random, Instant from, Instant to, int count, int symbols, long firstId) {
    long span = Duration.between(from, to).toNanos() / 1_000;
    List<Record> rows = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      Instant ts = from.plusNanos(span * i / count * 1_000);
      rows.add(
          Trades.of(
              firstId + i,
              symbol(random.nextInt(symbols)),
              ts,
              10 + random.nextInt(1_000) / 10.0,
              1 + random.nextInt(500),
              random.nextBoolean() ? "B" : "S"));
    }
    return rows;
  }

  private static String symbol(int i) {
    return String.format("S%05d", i);
  }

  private static Record symbolRow(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SYMBOLS_SCHEMA);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }
}
