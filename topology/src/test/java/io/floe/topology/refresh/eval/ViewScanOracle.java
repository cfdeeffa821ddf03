package io.floe.topology.refresh.eval;

import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * The columnar recompute ({@link ViewScan}) of a view over a real table, and its rows compared with
 * the oracle's: the view query evaluated by DuckDB from every live row of the snapshot.
 */
final class ViewScanOracle {

  private ViewScanOracle() {}

  /** A view query bound and compiled over a table's current schema. */
  record View(String sql, ViewPlan plan, CompiledQuery query) {
    static View of(Table table, String sql) throws InvalidViewException {
      ViewPlan plan =
          ViewQueryBinder.bind(ViewQueryParser.parse(sql), table.schema(), ZoneOffset.UTC);
      return new View(sql, plan, CompiledQuery.compile(plan));
    }
  }

  /** Every bucket, as a range. */
  static BucketRange all() {
    return new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE);
  }

  /**
   * Recomputes {@code ranges} (and the null bucket when asked) from the current snapshot, its files
   * taken to be on {@code storage}.
   */
  static ViewScan.Result scan(
      Table table,
      View view,
      BucketRangeSet ranges,
      boolean nullBucket,
      StorageKind storage,
      Executor executor,
      int parallelism) {
    long snapshot = table.currentSnapshot().snapshotId();
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        table.newScan().useSnapshot(snapshot).planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String bucketColumn = view.plan().bucketColumn();
    BucketRange first = ranges.ranges().get(0);
    Expression rowGroups =
        first.start() == Long.MIN_VALUE
            ? Expressions.alwaysTrue()
            : Expressions.and(
                Expressions.greaterThanOrEqual(bucketColumn, first.start()),
                Expressions.lessThan(bucketColumn, first.end()));
    return ViewScan.evaluate(
        view.query(),
        new ViewScan.Scan(
            table.io(),
            storage,
            table.schema(),
            tasks,
            view.plan().requiredColumns(),
            bucketColumn,
            ranges,
            nullBucket,
            rowGroups,
            null,
            List.of()),
        executor,
        parallelism);
  }

  /**
   * Output rows of the view (native values), normalized as the oracle gives its rows: the bucket as
   * the target holds it ({@code Bucketing#toTargetValue}, as a refresh writes it).
   */
  static List<List<Object>> normalized(View view, List<Object[]> rows) {
    List<Types.NestedField> columns = view.plan().outputSchema().columns();
    List<List<Object>> generic = new ArrayList<>(rows.size());
    for (Object[] row : rows) {
      List<Object> values = new ArrayList<>(row.length);
      for (int c = 0; c < row.length; c++) {
        Object value = row[c];
        if (columns.get(c).name().equals(view.plan().bucketOutput()) && value instanceof Long v) {
          value = view.plan().bucketing().toTargetValue(v);
        }
        values.add(IcebergValues.toIceberg(columns.get(c).type(), value));
      }
      generic.add(values);
    }
    return Oracle.normalized(generic);
  }

  /**
   * How the rows differ from the view evaluated by the oracle over every live row of the table's
   * current snapshot, or empty when they are the same.
   */
  static Optional<String> differenceFromOracle(Table table, View view, List<Object[]> rows) {
    return differenceFromOracle(table, view, rows, BucketRangeSet.of(all()), true);
  }

  /**
   * The same for a recompute of some buckets: the oracle's rows of those buckets (whose ranges are
   * whole buckets), and of the null bucket when asked.
   */
  static Optional<String> differenceFromOracle(
      Table table, View view, List<Object[]> rows, BucketRangeSet ranges, boolean nullBucket) {
    long snapshot = table.currentSnapshot().snapshotId();
    String sourceName = view.plan().source().toString();
    List<BucketRange> targetRanges = new ArrayList<>();
    ranges
        .ranges()
        .forEach(r -> targetRanges.add(view.plan().bucketing().columnType().toTargetRange(r)));
    BucketRangeSet inTarget = BucketRangeSet.of(targetRanges);
    int bucket = bucketPosition(view);
    List<List<Object>> expected = new ArrayList<>();
    for (List<Object> row : Oracle.expected(table, sourceName, snapshot, view.sql())) {
      Object value = row.get(bucket);
      if (value == null ? nullBucket : inTarget.contains(bucketValue(value))) {
        expected.add(row);
      }
    }
    return Oracle.difference(view.sql().strip(), snapshot, expected, normalized(view, rows));
  }

  private static int bucketPosition(View view) {
    List<Types.NestedField> columns = view.plan().outputSchema().columns();
    for (int c = 0; c < columns.size(); c++) {
      if (columns.get(c).name().equals(view.plan().bucketOutput())) {
        return c;
      }
    }
    throw new IllegalStateException("No bucket column in " + view.sql());
  }

  /** A normalized bucket ({@code ts:<micros>} or {@code date:<days>}) as the target holds it. */
  private static long bucketValue(Object normalized) {
    String value = normalized.toString();
    return Long.parseLong(value.substring(value.indexOf(':') + 1));
  }
}
