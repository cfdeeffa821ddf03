package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.refresh.eval.join.DimensionTable;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.types.Types;

/**
 * The work of one chunk of a refresh (DESIGN §3.1, §5): recompute the chunk's buckets from the
 * pinned source snapshot (or, on the delta path, fold the rows appended since the bookmark into the
 * target rows of their groups), and replace the target rows of those buckets ({@link
 * BucketReplacement}). Nothing is committed here.
 */
final class ChunkRecompute {

  /**
   * What a chunk wrote.
   *
   * @param startingTarget the target snapshot the files were computed against, or null
   * @param added the new data files
   * @param removed the data files they replace
   * @param deletes the delete files that remove replaced rows (merge-on-read)
   * @param rowsWritten recomputed rows written
   * @param rowsReplaced target rows of the chunk's buckets replaced
   * @param read what reading the source cost
   * @param computeNanos the time spent reading the source and aggregating it
   * @param writeNanos the time spent writing the target's files
   */
  record Written(
      Snapshot startingTarget,
      List<DataFile> added,
      List<DataFile> removed,
      List<DeleteFile> deletes,
      long rowsWritten,
      long rowsReplaced,
      ViewScan.Stats read,
      long computeNanos,
      long writeNanos,
      StateWritten state) {

    /**
     * What a chunk wrote to the target ({@code replaced}), read and computed from {@code start}
     * (nanos) to {@code computed} and written from then to now.
     */
    static Written of(
        Snapshot startingTarget,
        BucketReplacement.Result replaced,
        ViewScan.Stats read,
        long start,
        long computed,
        StateWritten state) {
      return new Written(
          startingTarget,
          replaced.added(),
          replaced.removed(),
          replaced.deletes(),
          replaced.rowsWritten(),
          replaced.rowsReplaced(),
          read,
          computed - start,
          System.nanoTime() - computed,
          state);
    }
  }

  /**
   * What a chunk wrote to the view's state table, to be committed before the target.
   *
   * @param starting the state snapshot the rows were computed against, or null
   * @param added the new state files
   * @param removed the state files they replace
   */
  record StateWritten(Snapshot starting, List<DataFile> added, List<DataFile> removed) {}

  private final Table source;
  private final Schema schema;
  private final ViewPlan plan;
  private final CompiledQuery query;
  private final Table target;
  private final BucketColumnType bucketType;
  private final Executor scanThreads;
  private final ManifestWork manifests;
  private final Map<TableName, DimensionPin> dimensionPins;
  private final DimensionTables dimensionTables;

  /** The view's state table, or null for a view that keeps no partial states. */
  private final StateTable states;

  /**
   * Where the source's files are: on a remote store the chunk's files are read by more workers than
   * cores, on the pool of remote reads, each mostly waiting for its requests.
   */
  private final StorageKind sourceStorage;

  /** Workers of one recompute at most: its files are split across them. */
  private static final int SCAN_PARALLELISM = Runtime.getRuntime().availableProcessors();

  /**
   * @param read the pinned source snapshot, the view's plan bound to its schema and the compiled
   *     query
   * @param dimensionTables where the hash tables of the pinned dimensions are built and held
   * @param scanThreads where the recompute of a chunk runs its workers beside the calling thread
   * @param manifests where the target's scans read their manifests, and the pool of remote reads
   * @param states the view's state table, or null for a view that keeps no partial states
   */
  ChunkRecompute(
      RefreshRun.Pinned read,
      Table target,
      DimensionTables dimensionTables,
      Executor scanThreads,
      ManifestWork manifests,
      StateTable states) {
    this.states = states;
    this.manifests = manifests;
    this.dimensionPins = read.dimensions();
    this.dimensionTables = dimensionTables;
    this.source = read.source();
    this.schema = read.schema();
    this.plan = read.plan();
    this.query = read.query();
    this.target = target;
    this.bucketType = plan.bucketing().columnType();
    this.scanThreads = scanThreads;
    this.sourceStorage = StorageKind.of(source);
  }

  /**
   * Computes and writes one chunk.
   *
   * @param files the planned source files that may hold rows of the chunk ({@link
   *     DataExtent#overlapping}): all of the pinned snapshot's, or on the delta path those the
   *     snapshots since the bookmark appended
   * @param deltaBase the bookmark whose appended rows are folded in (the delta path), or null to
   *     recompute the chunk's buckets
   * @param operationId part of every new file's name
   * @param last whether this is the refresh's last chunk, whose newest bucket gets files of its own
   * @param rebuildStates whether the chunk's state rows replace every stored one (a full refresh's
   *     first chunk), not only those of its buckets
   */
  Written compute(
      ChunkPlan.Chunk chunk,
      List<FileScanTask> files,
      Long deltaBase,
      String operationId,
      boolean last,
      boolean rebuildStates) {
    // The target as loaded, or as the previous chunk's commit left it: no second read. Another
    // writer's commit since fails this chunk's guarded commit, and the refresh plans again.
    Snapshot startingTarget = target.currentSnapshot();

    // 1. Recompute the chunk's buckets from the pinned source snapshot.
    long start = System.nanoTime();
    ViewScan.Scan scan = scan(chunk, files);
    if (states != null) {
      return computeWithStates(
          chunk, scan, deltaBase != null, operationId, last, rebuildStates, start);
    }
    ViewScan.Result recomputed;
    try (RequestStage.Scope reading = RequestStage.READ.enter()) {
      recomputed =
          ViewScan.evaluate(
              query,
              scan,
              manifests.readersFor(sourceStorage, scanThreads),
              sourceStorage.scanParallelism());
    }
    List<Object[]> rows = recomputed.rows();
    toTargetBuckets(rows, outputPosition(plan.bucketOutput()));
    DeltaMerger delta =
        deltaBase == null
            ? null
            : new DeltaMerger(
                plan.outputSchema(), target.schema(), query.decomposition().orElseThrow(), rows);

    // 2. Replace the target rows of those buckets, copy-on-write or merge-on-read.
    long computed = System.nanoTime();
    BucketReplacement.Result replaced;
    try (RequestStage.Scope writing = RequestStage.WRITE.enter()) {
      replaced =
          new BucketReplacement(target, plan, operationId, scanThreads, SCAN_PARALLELISM, manifests)
              .replace(chunk, rows, delta, startingTarget != null, last);
    }
    return Written.of(startingTarget, replaced, recomputed.stats(), start, computed, null);
  }

  private ViewScan.Scan scan(ChunkPlan.Chunk chunk, List<FileScanTask> files) {
    Expression sourceFilter =
        BucketFilters.of(plan.bucketColumn(), bucketType, chunk.ranges(), chunk.nullBucket());
    return new ViewScan.Scan(
        source.io(),
        sourceStorage,
        schema,
        files,
        plan.requiredColumns(),
        plan.bucketColumn(),
        chunk.ranges(),
        chunk.nullBucket(),
        sourceFilter,
        ViewScan.nameMapping(source),
        dimensions());
  }

  /**
   * A chunk of a view that keeps partial states ({@link StateTable}): the groups' states over the
   * files read, on the delta path (the rows appended since the bookmark) merged into the stored
   * states of the chunk's buckets; the state rows of those buckets replaced by them, and the target
   * rows of those buckets by the rows computed from them. Either way every target row of the
   * chunk's buckets is written anew, as a recompute writes it.
   */
  private Written computeWithStates(
      ChunkPlan.Chunk chunk,
      ViewScan.Scan scan,
      boolean delta,
      String operationId,
      boolean last,
      boolean rebuildStates,
      long start) {
    Snapshot startingTarget = target.currentSnapshot();
    Snapshot startingState = states.table().currentSnapshot();
    ViewScan.Result aggregated;
    try (RequestStage.Scope reading = RequestStage.READ.enter()) {
      aggregated =
          ViewScan.partialStates(
              query,
              scan,
              manifests.readersFor(sourceStorage, scanThreads),
              sourceStorage.scanParallelism());
    }
    CompiledQuery.PartialStates partials = query.partialStates().orElseThrow();
    toTargetBuckets(
        aggregated.rows(), partials.outputs().indexOf(outputPosition(plan.bucketOutput())));
    BucketRangeSet targetRanges = bucketType.toTargetRanges(chunk.ranges());
    Map<List<Object>, Object[]> groups =
        states.merge(
            delta ? states.read(targetRanges, chunk.nullBucket()) : new LinkedHashMap<>(),
            aggregated.rows());
    List<Object[]> merged = new ArrayList<>(groups.values());
    List<Object[]> stateRows = new ArrayList<>(merged.size());
    for (Object[] group : merged) {
      stateRows.add(states.stateRow(group));
    }
    List<Object[]> rows = query.finishPartials(merged);

    long computed = System.nanoTime();
    BucketReplacement.Result replaced;
    BucketReplacement.Result stateReplaced;
    List<DataFile> stateRemoved = new ArrayList<>();
    try (RequestStage.Scope writing = RequestStage.WRITE.enter()) {
      if (rebuildStates) {
        stateRemoved.addAll(states.liveFiles());
      }
      stateReplaced =
          new BucketReplacement(
                  states.table(),
                  plan,
                  states.schema(),
                  operationId + "-state",
                  scanThreads,
                  SCAN_PARALLELISM,
                  manifests)
              .replace(chunk, stateRows, null, startingState != null && !rebuildStates, last);
      stateRemoved.addAll(stateReplaced.removed());
      replaced =
          new BucketReplacement(target, plan, operationId, scanThreads, SCAN_PARALLELISM, manifests)
              .replace(chunk, rows, null, startingTarget != null, last);
    }
    return Written.of(
        startingTarget,
        replaced,
        aggregated.stats(),
        start,
        computed,
        new StateWritten(startingState, stateReplaced.added(), stateRemoved));
  }

  /**
   * The hash table of each dimension the view joins, in join order, at the snapshot the refresh
   * pinned: every chunk of a refresh joins the same versions (held once built, or built again from
   * the same snapshot).
   */
  private List<DimensionTable> dimensions() {
    List<DimensionTable> tables = new ArrayList<>();
    for (ViewPlan.Dimension dimension : plan.dimensions()) {
      DimensionPin pin = dimensionPins.get(dimension.table());
      if (pin == null) {
        throw new IllegalStateException("dimension " + dimension.table() + " was not pinned");
      }
      try {
        tables.add(
            dimensionTables.tableOf(
                pin.table(), pin.snapshotId(), dimension.keys(), dimension.requiredColumns()));
      } catch (DimensionTable.DimensionTooLargeException e) {
        // Not transient: a retry reads the same rows into the same bound.
        throw new ViewRefreshException(e.getMessage());
      }
    }
    return tables;
  }

  /** The bucket values at {@code position} of {@code rows}, as the target's column holds them. */
  private void toTargetBuckets(List<Object[]> rows, int position) {
    for (Object[] row : rows) {
      if (row[position] instanceof Long value) {
        row[position] = plan.bucketing().toTargetValue(value);
      }
    }
  }

  private int outputPosition(String column) {
    List<Types.NestedField> columns = plan.outputSchema().columns();
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(column)) {
        return i;
      }
    }
    throw new IllegalStateException("no output column " + column);
  }
}
