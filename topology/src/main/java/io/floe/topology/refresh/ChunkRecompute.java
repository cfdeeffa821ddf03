package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
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
      long writeNanos) {}

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
   */
  ChunkRecompute(
      RefreshRun.Pinned read,
      Table target,
      DimensionTables dimensionTables,
      Executor scanThreads,
      ManifestWork manifests) {
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
   */
  Written compute(
      ChunkPlan.Chunk chunk,
      List<FileScanTask> files,
      Long deltaBase,
      String operationId,
      boolean last) {
    // The target as loaded, or as the previous chunk's commit left it: no second read. Another
    // writer's commit since fails this chunk's guarded commit, and the refresh plans again.
    Snapshot startingTarget = target.currentSnapshot();

    // 1. Recompute the chunk's buckets from the pinned source snapshot.
    long start = System.nanoTime();
    Expression sourceFilter =
        BucketFilters.of(plan.bucketColumn(), bucketType, chunk.ranges(), chunk.nullBucket());
    ViewScan.Result recomputed;
    try (RequestStage.Scope reading = RequestStage.READ.enter()) {
      recomputed =
          ViewScan.evaluate(
              query,
              new ViewScan.Scan(
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
                  dimensions()),
              manifests.readersFor(sourceStorage, scanThreads),
              sourceStorage.scanParallelism());
    }
    ViewScan.Stats stats = recomputed.stats();
    List<Object[]> rows = recomputed.rows();
    int bucketOutput = outputPosition(plan.bucketOutput());
    for (Object[] row : rows) {
      if (row[bucketOutput] instanceof Long value) {
        row[bucketOutput] = plan.bucketing().toTargetValue(value);
      }
    }
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
    return new Written(
        startingTarget,
        replaced.added(),
        replaced.removed(),
        replaced.deletes(),
        replaced.rowsWritten(),
        replaced.rowsReplaced(),
        stats,
        computed - start,
        System.nanoTime() - computed);
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
