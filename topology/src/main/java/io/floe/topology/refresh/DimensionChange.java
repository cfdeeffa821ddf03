package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.FileBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.join.DimensionTable;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * What the changes of a view's dimensions since the target's bookmark dirty (DESIGN §3.10): the
 * fact buckets whose rows may carry a join key whose dimension rows changed.
 *
 * <p>The changed keys are those whose rows differ between the dimension's hash table at the
 * snapshot the bookmark records and at the pinned one ({@link DimensionTable#changedKeysSince}):
 * exact whatever the writer did (appends, copy-on-write overwrites that rewrite unchanged rows,
 * position or equality deletes), and the pinned table is the one the recompute joins anyway. A run
 * of {@code replace} snapshots (compaction) changes no row and reads nothing. The fact buckets are
 * those of the live fact files at the pinned snapshot whose bounds on the join columns can hold one
 * of the keys, by the detector's rule ({@link FileBuckets}). Where that cannot be bounded (another
 * dimension table or other columns, an expired snapshot, more than {@link #MAX_CHANGED_KEYS} keys,
 * a join column Iceberg's bounds cannot compare exactly, a fact file without bounds on it) every
 * bucket is dirty, with the reason.
 *
 * @param moved whether the dimensions' rows may differ from those the target reflects: false when
 *     the bookmark records the pinned states, or when only compactions came between
 * @param dirty the fact buckets to recompute for the dimensions' changes: none when they touch no
 *     fact row (or did not move), every bucket when they cannot be bounded
 */
record DimensionChange(boolean moved, DirtyBuckets dirty) {

  /**
   * Beyond this many changed keys, bounding their buckets costs more than it saves: nearly every
   * fact file then holds one.
   */
  static final int MAX_CHANGED_KEYS = 10_000;

  /** The dimensions are as the target reflects them. */
  static final DimensionChange NONE = new DimensionChange(false, DirtyBuckets.none());

  /** Every bucket is dirty, for {@code reason}. */
  static DimensionChange unbounded(String reason) {
    return new DimensionChange(true, DirtyBuckets.all(reason));
  }

  /**
   * What the dimensions {@code read} pinned change against the states {@code bookmark} records.
   *
   * @param tables the dimensions' hash tables, shared with the recompute
   * @param manifests where the fact's manifests are read
   */
  static DimensionChange since(
      Bookmark bookmark, RefreshRun.Pinned read, DimensionTables tables, ManifestWork manifests) {
    DimensionStates now = read.dimensionStates();
    if (Objects.equals(bookmark.dimensionStates(), now.format())) {
      return NONE;
    }
    if (bookmark.isEmpty() || !read.request().view().version().equals(bookmark.viewVersion())) {
      // Every bucket is recomputed anyway (DESIGN §3.4): no key is worth reading.
      return unbounded(Objects.requireNonNullElse(now.changesSince(DimensionStates.NONE), "new"));
    }
    DimensionStates recorded;
    try {
      recorded = bookmark.parsedDimensionStates();
    } catch (IllegalArgumentException e) {
      return unbounded(
          "the dimension states the target was computed from are unreadable ("
              + bookmark.dimensionStates()
              + ")");
    }
    String reason = now.changesSince(recorded);
    if (recorded.states().size() != now.states().size()) {
      return unbounded(reason);
    }
    boolean moved = false;
    DirtyBuckets dirty = DirtyBuckets.none();
    for (ViewPlan.Dimension dimension : read.plan().dimensions()) {
      DimensionStates.State state = stateOf(now, dimension);
      DimensionStates.State was = stateOf(recorded, dimension);
      if (was == null
          || !was.uuid().equals(state.uuid())
          || !was.columns().isSameAs(state.columns())) {
        return unbounded(reason);
      }
      if (Objects.equals(was.snapshotId(), state.snapshotId())) {
        continue;
      }
      DimensionPin pin = read.dimensions().get(dimension.table());
      if (onlyCompactions(pin.table(), was.snapshotId(), state.snapshotId())) {
        continue;
      }
      moved = true;
      Optional<Set<List<Object>>> keys = changedKeys(dimension, pin, was.snapshotId(), tables);
      if (keys.isEmpty()) {
        return unbounded(
            reason
                + " (more than "
                + MAX_CHANGED_KEYS
                + " keys of "
                + dimension.table()
                + " changed, or its rows at snapshot "
                + was.snapshotId()
                + " can no longer be read)");
      }
      DirtyBuckets joined = factBuckets(read, dimension, keys.get(), manifests);
      if (joined.full()) {
        return unbounded(reason + " (" + joined.reason() + ")");
      }
      dirty = dirty.union(joined);
    }
    return new DimensionChange(moved, dirty);
  }

  private static DimensionStates.State stateOf(
      DimensionStates states, ViewPlan.Dimension dimension) {
    return states.states().stream()
        .filter(s -> s.table().equals(dimension.table()))
        .findFirst()
        .orElse(null);
  }

  /**
   * Whether every snapshot after {@code from} up to {@code to} is a compaction ({@code replace}),
   * which changes no row: Iceberg's {@code replace} operation carries no logical change.
   */
  private static boolean onlyCompactions(Table dimension, Long from, Long to) {
    if (from == null
        || to == null
        || dimension.snapshot(from) == null
        || !SnapshotUtil.isAncestorOf(dimension, to, from)) {
      return false;
    }
    for (long id : SnapshotUtil.snapshotIdsBetween(dimension, from, to)) {
      Snapshot between = dimension.snapshot(id);
      if (between == null || !DataOperations.REPLACE.equals(between.operation())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The keys of {@code dimension} whose rows differ between snapshot {@code was} (null: none) and
   * the pinned one; empty when there are too many or the earlier rows cannot be read (expired).
   */
  private static Optional<Set<List<Object>>> changedKeys(
      ViewPlan.Dimension dimension, DimensionPin pin, Long was, DimensionTables tables) {
    long before = was == null ? DimensionTables.NO_SNAPSHOT : was;
    if (was != null && pin.table().snapshot(was) == null) {
      return Optional.empty();
    }
    try {
      DimensionTable then =
          tables.tableOf(pin.table(), before, dimension.keys(), dimension.requiredColumns());
      DimensionTable now =
          tables.tableOf(
              pin.table(), pin.snapshotId(), dimension.keys(), dimension.requiredColumns());
      return now.changedKeysSince(then, MAX_CHANGED_KEYS);
    } catch (DimensionTable.DimensionTooLargeException | IllegalArgumentException e) {
      // The earlier rows no longer fit or no longer read as the view's columns: unbounded. The
      // recompute reports a pinned table that does not fit.
      return Optional.empty();
    }
  }

  /**
   * The buckets of the fact's live files at the pinned snapshot whose bounds on the join columns
   * can hold one of {@code keys}.
   */
  private static DirtyBuckets factBuckets(
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
    List<BucketRange> ranges = new ArrayList<>();
    boolean nullBucket = false;
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
        FileBuckets buckets = FileBuckets.of(file, bucketField);
        if (!buckets.hasBounds()) {
          if (buckets.holdsOnlyNulls()) {
            nullBucket = true;
            continue;
          }
          return DirtyBuckets.all(
              "fact file " + file.location() + " has no bounds for bucket column " + bucketField);
        }
        ranges.add(buckets.range(read.plan().bucketing()));
        nullBucket |= buckets.mayHoldNulls();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot plan the files of " + fact.name(), e);
    }
    return DirtyBuckets.of(BucketRangeSet.of(ranges), nullBucket);
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
