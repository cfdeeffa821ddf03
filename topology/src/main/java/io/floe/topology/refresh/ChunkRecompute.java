package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
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
   * @param dirtySubBuckets for a view whose states are kept per sub-bucket, the sub-buckets whose
   *     rows changed since the bookmark, which alone are recomputed; null to recompute every
   *     sub-bucket of the chunk
   */
  Written compute(
      ChunkPlan.Chunk chunk,
      List<FileScanTask> files,
      DirtyBuckets dirtySubBuckets,
      Long deltaBase,
      String operationId,
      boolean last,
      boolean rebuildStates) {
    // The target as loaded, or as the previous chunk's commit left it: no second read. Another
    // writer's commit since fails this chunk's guarded commit, and the refresh plans again.
    Snapshot startingTarget = target.currentSnapshot();
    Snapshot startingState = states == null ? null : states.table().currentSnapshot();

    // 1. Compute the chunk's buckets from the pinned source snapshot.
    long start = System.nanoTime();
    Computed computed =
        states == null
            ? recompute(chunk, files, deltaBase)
            : throughStates(chunk, files, deltaBase != null, dirtySubBuckets);

    // 2. Replace the state rows and the target rows of those buckets, copy-on-write or
    // merge-on-read.
    long computedAt = System.nanoTime();
    BucketReplacement.Result replaced;
    StateWritten stateWritten = null;
    try (RequestStage.Scope writing = RequestStage.WRITE.enter()) {
      if (computed.stateRows() != null) {
        stateWritten =
            writeStates(
                chunk, computed.stateRows(), startingState, operationId, last, rebuildStates);
      }
      replaced =
          new BucketReplacement(target, plan, operationId, scanThreads, SCAN_PARALLELISM, manifests)
              .replace(chunk, computed.rows(), computed.delta(), startingTarget != null, last);
    }
    return Written.of(startingTarget, replaced, computed.read(), start, computedAt, stateWritten);
  }

  /**
   * What a chunk computed.
   *
   * @param rows the view's rows of the chunk's buckets
   * @param delta on the delta path of a decomposable view, how they fold into the target's rows
   * @param stateRows for a view that keeps partial states, the state rows of the chunk's buckets
   * @param read what reading the source cost
   */
  private record Computed(
      List<Object[]> rows, DeltaMerger delta, List<Object[]> stateRows, ViewScan.Stats read) {}

  /**
   * The view's rows of the chunk's buckets, recomputed from the source; on the delta path (from
   * {@code deltaBase}) the rows of the appended files, to fold into the target's.
   */
  private Computed recompute(ChunkPlan.Chunk chunk, List<FileScanTask> files, Long deltaBase) {
    ViewScan.Result recomputed;
    try (RequestStage.Scope reading = RequestStage.READ.enter()) {
      recomputed =
          ViewScan.evaluate(
              query,
              scan(chunk, files),
              manifests.readersFor(sourceStorage, scanThreads),
              sourceStorage.scanParallelism());
    }
    List<Object[]> rows = recomputed.rows();
    toTargetBuckets(rows, outputPosition(plan.bucketOutput()), plan.bucketing());
    DeltaMerger delta =
        deltaBase == null
            ? null
            : new DeltaMerger(
                plan.outputSchema(), target.schema(), query.decomposition().orElseThrow(), rows);
    return new Computed(rows, delta, null, recomputed.stats());
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
   * The rows of a chunk of a view that keeps partial states ({@link StateTable}), per sub-bucket
   * where its bucket has sub-buckets: the states of the sub-buckets read from the source (on the
   * delta path the rows appended since the bookmark, merged into the stored states; else the
   * chunk's dirty sub-buckets, which replace their stored states, or every sub-bucket of the
   * chunk), and the states of the chunk's other sub-buckets as stored. The view's rows are computed
   * from the states merged per bucket, so every target row of the chunk's buckets is written anew,
   * as a recompute writes it.
   *
   * @param dirtySubBuckets the sub-buckets whose rows changed since the bookmark (source values),
   *     or null when that is not known finer than the chunk's buckets
   */
  private Computed throughStates(
      ChunkPlan.Chunk chunk,
      List<FileScanTask> files,
      boolean delta,
      DirtyBuckets dirtySubBuckets) {
    StateTable.Layout layout = states.layout();
    ChunkPlan.Chunk recomputed =
        delta || dirtySubBuckets == null || dirtySubBuckets.full()
            ? chunk
            : within(chunk, dirtySubBuckets);
    Map<List<Object>, Object[]> stored =
        delta || recomputed != chunk
            ? states.read(bucketType.toTargetRanges(chunk.ranges()), chunk.nullBucket())
            : new LinkedHashMap<>();
    if (!delta && recomputed != chunk) {
      BucketRangeSet replaced = bucketType.toTargetRanges(recomputed.ranges());
      stored
          .values()
          .removeIf(
              row ->
                  row[layout.bucketKey()] instanceof Number subBucket
                      ? replaced.contains(subBucket.longValue())
                      : recomputed.nullBucket());
    }
    ViewScan.Result aggregated;
    if (recomputed.ranges().isEmpty() && !recomputed.nullBucket()) {
      aggregated = new ViewScan.Result(List.of(), new ViewScan.Stats(0, 0, 0, 0, 0));
    } else {
      List<FileScanTask> read =
          recomputed == chunk
              ? files
              : DataExtent.overlapping(
                  files,
                  schema.findField(plan.bucketColumn()),
                  layout.subBuckets().orElseThrow(),
                  recomputed);
      try (RequestStage.Scope reading = RequestStage.READ.enter()) {
        aggregated =
            ViewScan.partialStates(
                layout.aggregating(),
                scan(recomputed, read),
                manifests.readersFor(sourceStorage, scanThreads),
                sourceStorage.scanParallelism());
      }
    }
    toTargetBuckets(
        aggregated.rows(), layout.bucketKey(), layout.subBuckets().orElse(plan.bucketing()));
    Map<List<Object>, Object[]> groups = states.merge(stored, aggregated.rows());
    List<Object[]> stateRows = new ArrayList<>(groups.size());
    for (Object[] group : groups.values()) {
      stateRows.add(states.stateRow(group));
    }
    List<Object[]> rows = query.finishPartials(states.viewGroups(groups.values()));
    return new Computed(rows, null, stateRows, aggregated.stats());
  }

  /**
   * Writes the state rows of a chunk's buckets in place of the stored ones (of every stored one
   * when {@code rebuild}: a full refresh's first chunk), computed against {@code starting}.
   */
  private StateWritten writeStates(
      ChunkPlan.Chunk chunk,
      List<Object[]> stateRows,
      Snapshot starting,
      String operationId,
      boolean last,
      boolean rebuild) {
    List<DataFile> removed = new ArrayList<>();
    if (rebuild) {
      removed.addAll(states.liveFiles());
    }
    BucketReplacement.Result replaced =
        new BucketReplacement(
                states.table(),
                plan,
                states.schema(),
                operationId + "-state",
                scanThreads,
                SCAN_PARALLELISM,
                manifests)
            .replace(chunk, stateRows, null, starting != null && !rebuild, last);
    removed.addAll(replaced.removed());
    return new StateWritten(starting, replaced.added(), removed);
  }

  /** The part of {@code chunk} inside {@code dirty}: its dirty sub-buckets. */
  private static ChunkPlan.Chunk within(ChunkPlan.Chunk chunk, DirtyBuckets dirty) {
    BucketRangeSet inside = BucketRangeSet.empty();
    for (BucketRange range : chunk.ranges().ranges()) {
      inside = inside.union(dirty.ranges().intersect(range));
    }
    return new ChunkPlan.Chunk(
        inside, chunk.nullBucket() && dirty.nullBucket(), chunk.buckets(), chunk.rows());
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

  /**
   * The bucket values (of {@code bucketing}) at {@code position} of {@code rows}, as the target's
   * column holds them.
   */
  private static void toTargetBuckets(List<Object[]> rows, int position, Bucketing bucketing) {
    for (Object[] row : rows) {
      if (row[position] instanceof Long value) {
        row[position] = bucketing.toTargetValue(value);
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
