package io.floe.dev.bench;

import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;

/**
 * Scenario 4: one late row and one fresh row in one commit. Buckets a 1-minute view recomputes ÷
 * buckets the rows touched (2), beside iceberg-ivm, which recomputes every bucket between the
 * commit's smallest and largest timestamp.
 */
final class LateDataScenario {

  static final String NAME = "late-data";
  private static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.%s GROUP BY 1, 2";
  private static final Instant NOW = Instant.parse("2026-06-10T12:00:00Z");
  private static final Instant LATE = NOW.minus(Duration.ofDays(3));

  private LateDataScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "One commit with a row 3 days late and a fresh row, into a 1-minute view: buckets"
                    + " recomputed ÷ buckets touched (2).")
            .parameter("lateBy", "3 days");
    try (BenchLake lake = new BenchLake(ctx.dir(NAME))) {
      result.figure(measure(lake, "trades", Trades.BY_DAY, "day-partitioned source"));
      result.figure(
          measure(lake, "trades_flat", PartitionSpec.unpartitioned(), "unpartitioned source"));
      result.note(
          "Floe dirties the buckets of each file's [min, max] bounds: a day-partitioned writer"
              + " puts the late and the fresh row in two files, two small ranges. An unpartitioned"
              + " writer puts both in one file whose bounds span the three days; Floe then"
              + " recomputes the span, as iceberg-ivm always does.");
    }
    return result;
  }

  private static Figure measure(BenchLake lake, String table, PartitionSpec spec, String label) {
    Table trades = lake.createTrades(table, spec);
    Trades generator = new Trades(4);
    TableWrites.append(trades, generator.between(LATE.minus(Duration.ofDays(1)), NOW, 10_000));
    ViewDefinition view =
        ViewDefinition.of(
            "minute_" + table,
            String.format(QUERY, table),
            TableName.parse("lake.analytics.minute_" + table));
    List<Record> rows = List.of(generator.next(LATE), generator.next(NOW));
    long snapshot = TableWrites.append(trades, rows);
    DirtyBuckets dirty;
    try {
      dirty =
          DirtyBucketDetector.detect(
                  trades,
                  snapshot,
                  List.of(BucketedView.of(CompiledView.compile(view, 0))),
                  ManifestWork.LOCAL_READS)
              .get(view.name());
    } catch (io.floe.topology.view.InvalidViewException e) {
      throw new IllegalStateException(e);
    }
    if (dirty.full()) {
      throw new IllegalStateException("expected bucket ranges, got a full refresh: " + dirty);
    }
    Bucketing minutes = Bucketing.utc(Granularity.MINUTE, BucketColumnType.TIMESTAMPTZ);
    long floeBuckets = 0;
    for (BucketRange range : dirty.ranges().ranges()) {
      floeBuckets += (range.end() - range.start()) / 60_000_000L;
    }
    BucketRange span =
        minutes.expand(
            BucketColumnType.TIMESTAMPTZ.fromInstant(LATE),
            BucketColumnType.TIMESTAMPTZ.fromInstant(NOW));
    long ivmBuckets = (span.end() - span.start()) / 60_000_000L;
    return new Figure(
        "buckets recomputed per bucket touched, " + label,
        "buckets",
        floeBuckets / 2.0,
        ivmBuckets / 2.0,
        "min..max range (iceberg-ivm)",
        true);
  }
}
