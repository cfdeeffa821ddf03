package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;

/**
 * The work of one chunk of a refresh (DESIGN §3.1, §5): recompute the chunk's buckets from the
 * pinned source snapshot (or, on the delta path, fold the rows appended since the bookmark into the
 * target rows of their groups), and write the new target files, copy-on-write: every target file
 * holding rows of those buckets is rewritten without them. Nothing is committed here.
 */
final class ChunkRecompute {

  /**
   * What a chunk wrote.
   *
   * @param startingTarget the target snapshot the files were computed against, or null
   * @param added the new data files
   * @param removed the data files they replace
   * @param rowsWritten recomputed rows written
   * @param rowsReplaced target rows of the chunk's buckets replaced
   * @param read what reading the source cost
   */
  record Written(
      Snapshot startingTarget,
      List<DataFile> added,
      List<DataFile> removed,
      long rowsWritten,
      long rowsReplaced,
      ViewScan.Stats read) {}

  private final Table source;
  private final Snapshot snapshot;
  private final Schema schema;
  private final ViewPlan plan;
  private final CompiledQuery query;
  private final Table target;
  private final BucketColumnType bucketType;
  private final Executor scanThreads;

  /** Workers of one recompute at most: its files are split across them. */
  private static final int SCAN_PARALLELISM = Runtime.getRuntime().availableProcessors();

  /**
   * @param scanThreads where the recompute of a chunk runs its workers beside the calling thread
   */
  ChunkRecompute(
      Table source,
      Snapshot snapshot,
      Schema schema,
      ViewPlan plan,
      CompiledQuery query,
      Table target,
      Executor scanThreads) {
    this.source = source;
    this.snapshot = snapshot;
    this.schema = schema;
    this.plan = plan;
    this.query = query;
    this.target = target;
    this.bucketType = plan.bucketing().columnType();
    this.scanThreads = scanThreads;
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
   */
  Written compute(
      ChunkPlan.Chunk chunk, List<FileScanTask> files, Long deltaBase, String operationId) {
    target.refresh();
    Snapshot startingTarget = target.currentSnapshot();

    // 1. Recompute the chunk's buckets from the pinned source snapshot.
    Expression sourceFilter =
        BucketFilters.of(plan.bucketColumn(), bucketType, chunk.ranges(), chunk.nullBucket());
    ViewScan.Result recomputed =
        ViewScan.evaluate(
            query,
            new ViewScan.Scan(
                source.io(),
                schema,
                files,
                plan.requiredColumns(),
                plan.bucketColumn(),
                chunk.ranges(),
                chunk.nullBucket(),
                sourceFilter),
            scanThreads,
            SCAN_PARALLELISM);
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

    // 2. Rewrite the target files holding rows of those buckets, keeping the other rows.
    TargetWriter writer = new TargetWriter(target, plan.outputSchema(), operationId);
    List<DataFile> removed = new ArrayList<>();
    long replaced = 0;
    try {
      if (startingTarget != null) {
        replaced = rewriteTargetFiles(chunk, writer, removed, delta);
      }
      if (delta != null) {
        rows = delta.rows();
      }
      for (Object[] row : rows) {
        writer.writeOutputRow(row);
      }
    } catch (RuntimeException e) {
      writer.close();
      throw e;
    }
    return new Written(startingTarget, writer.complete(), removed, rows.size(), replaced, stats);
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

  /**
   * Copy-on-write: every target file overlapping the chunk is rewritten without the rows the
   * refresh replaces: all rows of the chunk's buckets, or on the delta path only those that the
   * delta absorbed (the other groups of those buckets did not change). Returns the rows replaced.
   */
  private long rewriteTargetFiles(
      ChunkPlan.Chunk chunk, TargetWriter writer, List<DataFile> removed, DeltaMerger delta) {
    BucketRangeSet targetRanges = toTargetRanges(chunk.ranges());
    Expression filter =
        BucketFilters.of(
            plan.bucketOutput(), bucketType.targetType(), targetRanges, chunk.nullBucket());
    Map<String, FileScanTask> files = new LinkedHashMap<>();
    try (CloseableIterable<FileScanTask> tasks = target.newScan().filter(filter).planFiles()) {
      for (FileScanTask task : tasks) {
        files.putIfAbsent(task.file().location(), task);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Schema targetSchema = target.schema();
    int bucketColumn = targetSchema.columns().indexOf(targetSchema.findField(plan.bucketOutput()));
    Types.NestedField bucketField = targetSchema.columns().get(bucketColumn);
    long replaced = 0;
    for (FileScanTask task : files.values()) {
      try (CloseableIterable<Record> records = readWholeFile(task, targetSchema)) {
        for (Record record : records) {
          Object value = record.get(bucketColumn);
          Object stored = value == null ? null : IcebergValues.toNative(bucketField.type(), value);
          boolean dirty =
              stored == null
                  ? chunk.nullBucket()
                  : targetRanges.contains(((Number) stored).longValue());
          if (dirty && (delta == null || delta.absorb(record))) {
            replaced++;
          } else {
            writer.write(record);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      removed.add(task.file());
    }
    return replaced;
  }

  private BucketRangeSet toTargetRanges(BucketRangeSet ranges) {
    List<BucketRange> converted = new ArrayList<>();
    for (BucketRange range : ranges.ranges()) {
      converted.add(bucketType.toTargetRange(range));
    }
    return BucketRangeSet.of(converted);
  }

  private CloseableIterable<Record> readWholeFile(FileScanTask task, Schema targetSchema) {
    DeleteFilter<Record> deletes =
        new GenericDeleteFilter(target.io(), task, targetSchema, targetSchema);
    CloseableIterable<Record> records =
        FormatModelRegistry.<Record, Object>readBuilder(
                task.file().format(), Record.class, target.io().newInputFile(task.file()))
            .project(deletes.requiredSchema())
            .idToConstant(
                PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant))
            .build();
    return deletes.filter(records);
  }
}
