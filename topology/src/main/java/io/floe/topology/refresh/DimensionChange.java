package io.floe.topology.refresh;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.join.DimensionTable;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.ViewPlan;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
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
 * of the keys ({@link JoinKeyBuckets}). Where that cannot be bounded (another dimension table or
 * other columns, an expired snapshot, more than {@link #MAX_CHANGED_KEYS} keys, a join column whose
 * bounds cannot be compared exactly, a fact file without bounds on it) every bucket is dirty, with
 * the reason.
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
   * The dimension states a refresh of {@code read} is named by: those it pinned, or, when the
   * dimensions only compacted since the states {@code bookmark} records, those recorded.
   */
  DimensionStates named(RefreshRun.Pinned read, Bookmark bookmark) {
    return moved ? read.dimensionStates() : bookmark.parsedDimensionStates();
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
      DirtyBuckets joined = JoinKeyBuckets.of(read, dimension, keys.get(), manifests);
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
}
