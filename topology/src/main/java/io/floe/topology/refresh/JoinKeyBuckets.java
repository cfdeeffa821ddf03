package io.floe.topology.refresh;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.FileBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The fact buckets whose rows may carry one of a dimension's changed join keys (DESIGN §3.10), from
 * the fact files' statistics alone: a live file at the pinned snapshot whose lower and upper bounds
 * on the join columns can hold a key contributes its bucket range, by the detector's rule ({@link
 * FileBuckets}); a file whose join column is all null joins nothing. Every bucket, with the reason,
 * where the statistics cannot tell: a file without bounds on a join column, a join column whose
 * bounds do not order as SQL's equality compares (floating point), a key not of its type.
 */
final class JoinKeyBuckets {

  private JoinKeyBuckets() {}

  /**
   * The buckets of the fact's live files at the pinned snapshot whose bounds on the join columns
   * can hold one of {@code keys}.
   */
  static DirtyBuckets of(
      RefreshRun.Pinned read,
      ViewPlan.Dimension dimension,
      Set<List<Object>> keys,
      ManifestWork manifests) {
    if (keys.isEmpty()) {
      return DirtyBuckets.none();
    }
    List<Types.NestedField> columns = new ArrayList<>();
    List<Comparator<Object>> orders = new ArrayList<>();
    for (String factKey : dimension.factKeys()) {
      Types.NestedField column = read.schema().findField(factKey);
      Comparator<Object> order = column == null ? null : orderOf(column.type());
      if (order == null) {
        return DirtyBuckets.all(
            "join column "
                + factKey
                + (column == null ? " is gone" : " of type " + column.type())
                + " cannot be bounded by file statistics");
      }
      columns.add(column);
      orders.add(order);
    }
    List<List<Object>> values = new ArrayList<>();
    for (List<Object> key : keys) {
      List<Object> value = new ArrayList<>(key.size());
      for (int k = 0; k < key.size(); k++) {
        Object v = valueOf(columns.get(k).type(), key.get(k));
        if (v == null) {
          return DirtyBuckets.all(
              "a key of " + dimension.table() + " does not compare as " + columns.get(k).type());
        }
        value.add(v);
      }
      values.add(value);
    }
    // Ordered on the first join column: a file's keys are a run of it, found by binary search.
    Comparator<Object> first = orders.get(0);
    values.sort((a, b) -> first.compare(a.get(0), b.get(0)));
    Types.NestedField bucketField = read.schema().findField(read.plan().bucketColumn());
    FileBuckets.Union dirtied = new FileBuckets.Union(bucketField, read.plan().bucketing());
    Table fact = read.source();
    Snapshot snapshot = read.snapshot();
    try (CloseableIterable<FileScanTask> tasks =
        manifests
            .scan(
                fact.newScan().useSnapshot(snapshot.snapshotId()).includeColumnStats(),
                fact,
                snapshot)
            .planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        Boolean holds = mayHoldOneOf(file, columns, orders, values);
        if (holds == null) {
          return DirtyBuckets.all(
              "fact file " + file.location() + " has no bounds on join columns " + columns);
        }
        if (!holds) {
          continue;
        }
        if (!dirtied.add(file)) {
          return DirtyBuckets.all(
              "fact file " + file.location() + " has no bounds for bucket column " + bucketField);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot plan the files of " + fact.name(), e);
    }
    return dirtied.dirty();
  }

  /**
   * Whether {@code file} may hold a row whose join columns equal one of {@code keys} (ordered on
   * their first value); null when its statistics cannot tell (no bounds on a join column that is
   * not all null).
   */
  private static Boolean mayHoldOneOf(
      DataFile file,
      List<Types.NestedField> columns,
      List<Comparator<Object>> orders,
      List<List<Object>> keys) {
    Object[] lower = new Object[columns.size()];
    Object[] upper = new Object[columns.size()];
    for (int c = 0; c < columns.size(); c++) {
      Types.NestedField column = columns.get(c);
      Long nulls = value(file.nullValueCounts(), column.fieldId());
      if (nulls != null && nulls == file.recordCount()) {
        // A null key joins nothing.
        return false;
      }
      lower[c] = bound(column.type(), value(file.lowerBounds(), column.fieldId()));
      upper[c] = bound(column.type(), value(file.upperBounds(), column.fieldId()));
      if (lower[c] == null || upper[c] == null) {
        return null;
      }
    }
    Comparator<Object> first = orders.get(0);
    for (int k = firstAtLeast(keys, first, lower[0]);
        k < keys.size() && first.compare(keys.get(k).get(0), upper[0]) <= 0;
        k++) {
      List<Object> key = keys.get(k);
      boolean within = true;
      for (int c = 1; c < columns.size() && within; c++) {
        Comparator<Object> order = orders.get(c);
        within =
            order.compare(lower[c], key.get(c)) <= 0 && order.compare(key.get(c), upper[c]) <= 0;
      }
      if (within) {
        return true;
      }
    }
    return false;
  }

  /**
   * The index of the first of {@code keys}, ordered on their first value, not below {@code lower}.
   */
  private static int firstAtLeast(List<List<Object>> keys, Comparator<Object> order, Object lower) {
    int low = 0;
    int high = keys.size();
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (order.compare(keys.get(mid).get(0), lower) < 0) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low;
  }

  /**
   * How values of a join column of {@code type} order exactly as its bounds do, or null: floating
   * point is left out, since SQL's equality makes {@code -0.0} equal {@code 0.0} where bounds order
   * them apart.
   */
  private static Comparator<Object> orderOf(Type type) {
    return switch (type.typeId()) {
      case INTEGER, LONG, DATE, TIME, TIMESTAMP, TIMESTAMP_NANO ->
          Comparator.comparingLong(v -> ((Number) v).longValue());
      case STRING ->
          (a, b) -> Comparators.charSequences().compare((CharSequence) a, (CharSequence) b);
      case DECIMAL -> (a, b) -> ((BigDecimal) a).compareTo((BigDecimal) b);
      default -> null;
    };
  }

  /** A key value (as {@link DimensionTable} holds it) as a value of {@code type}, or null. */
  private static Object valueOf(Type type, Object key) {
    return switch (type.typeId()) {
      case INTEGER, LONG, DATE, TIME, TIMESTAMP, TIMESTAMP_NANO ->
          key instanceof Number ? key : null;
      case STRING -> key instanceof CharSequence ? key : null;
      case DECIMAL -> key instanceof BigDecimal ? key : null;
      default -> null;
    };
  }

  /** A decoded bound, or null when absent or not of the column's type. */
  private static Object bound(Type type, ByteBuffer bytes) {
    if (bytes == null) {
      return null;
    }
    try {
      return valueOf(type, Conversions.fromByteBuffer(type, bytes));
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static <T> T value(Map<Integer, T> map, int id) {
    return map == null ? null : map.get(id);
  }
}
