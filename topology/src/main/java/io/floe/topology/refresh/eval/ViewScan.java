package io.floe.topology.refresh.eval;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.agg.PartialAggregation;
import io.floe.topology.refresh.eval.join.DimensionTable;
import io.floe.topology.refresh.eval.join.JoinProbe;
import io.floe.topology.refresh.eval.scan.ParquetBatches;
import io.floe.topology.refresh.eval.scan.RecordBatches;
import io.floe.topology.refresh.eval.scan.ScanColumns;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.ThreadPools;

/**
 * Recomputes a view's rows for some buckets from planned files of one pinned source snapshot
 * (DESIGN §5): the files are split across workers, each reads its files into column batches ({@link
 * ParquetBatches}, or Iceberg's generic reader where that cannot) and aggregates them ({@link
 * PartialAggregation}); the partial states merge exactly into the view's output rows, sorted by
 * bucket then group keys, as one aggregation of all the rows would give them.
 *
 * <p>The calling thread is a worker too, and helpers on the executor join only while there is work
 * left ({@link SharedWork}), so a refresh never waits for a thread its executor cannot give it.
 */
public final class ViewScan {

  private ViewScan() {}

  /**
   * A new pool of scan workers: daemon threads named {@code floe-scan-N}, as many as cores. The
   * service builds one beside its refresh and I/O pools and shuts it down with them.
   */
  public static ExecutorService newExecutor() {
    return ThreadPools.newFixedThreadPool("floe-scan", Runtime.getRuntime().availableProcessors());
  }

  /**
   * What to read.
   *
   * @param io the source table's file IO
   * @param storage where the source's files are ({@link StorageKind#of(Table)}), which decides
   *     whether a small file is read whole once and kept
   * @param schema the schema of the pinned snapshot, whose column positions index source rows
   * @param tasks the files planned from the pinned snapshot (the delta path: the appended ones)
   * @param columns the source columns the view reads ({@code ViewPlan#requiredColumns})
   * @param bucketColumn the view's bucket column
   * @param ranges the bucket ranges to recompute; rows outside them are ignored
   * @param nullBucket whether the null bucket is recomputed too
   * @param rowGroupFilter an Iceberg filter over the source selecting the same rows (or more),
   *     which prunes row groups by their statistics
   * @param nameMapping the source table's name mapping, through which files written without field
   *     ids are read ({@link #nameMapping(Table)}); null when it has none
   * @param dimensions the hash table of each dimension the view joins ({@link
   *     CompiledQuery#joins}), at the snapshots the refresh pinned, in join order; empty for a view
   *     of one table
   */
  public record Scan(
      FileIO io,
      StorageKind storage,
      Schema schema,
      List<FileScanTask> tasks,
      List<String> columns,
      String bucketColumn,
      BucketRangeSet ranges,
      boolean nullBucket,
      Expression rowGroupFilter,
      NameMapping nameMapping,
      List<DimensionTable> dimensions) {
    public Scan {
      tasks = List.copyOf(tasks);
      columns = List.copyOf(columns);
      rowGroupFilter = rowGroupFilter == null ? Expressions.alwaysTrue() : rowGroupFilter;
      dimensions = List.copyOf(dimensions);
    }
  }

  /**
   * The table's name mapping ({@code schema.name-mapping.default}), or null when it has none: how
   * Iceberg's readers find the columns of files written without field ids.
   */
  public static NameMapping nameMapping(Table table) {
    String json = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    return json == null ? null : NameMappingParser.fromJson(json);
  }

  /** What a recompute read. */
  public record Stats(
      long rowsRead, long bytesRead, int filesRead, int rowGroupsRead, int rowGroupsSkipped) {}

  /** The view's output rows over the scanned rows and what reading them cost. */
  public record Result(List<Object[]> rows, Stats stats) {}

  /**
   * Evaluates the view over the scan.
   *
   * @param executor runs the helper workers (the refresh threads)
   * @param parallelism workers at most, the calling thread included
   */
  public static Result evaluate(
      CompiledQuery query, Scan scan, Executor executor, int parallelism) {
    Worker all = aggregate(query, scan, executor, parallelism);
    return new Result(all.aggregation.results(), all.stats());
  }

  /**
   * Aggregates the scan into the partial state of each group (see {@link
   * io.floe.topology.refresh.eval.agg.PartialAggregation#partials}), for a view whose states are
   * kept apart from its rows.
   *
   * @param executor runs the helper workers (the refresh threads)
   * @param parallelism workers at most, the calling thread included
   */
  public static Result partialStates(
      CompiledQuery query, Scan scan, Executor executor, int parallelism) {
    Worker all = aggregate(query, scan, executor, parallelism);
    return new Result(
        all.aggregation.partials(query.partialStates().orElseThrow().states()), all.stats());
  }

  /** The scan read and aggregated by the workers, their partial aggregations merged in one. */
  private static Worker aggregate(
      CompiledQuery query, Scan scan, Executor executor, int parallelism) {
    ScanColumns columns =
        ScanColumns.of(
            scan.io(),
            scan.storage(),
            scan.schema(),
            scan.columns(),
            scan.rowGroupFilter(),
            scan.bucketColumn(),
            scan.ranges(),
            scan.nullBucket(),
            scan.nameMapping());
    int bucketColumn =
        scan.schema().columns().indexOf(scan.schema().findField(scan.bucketColumn()));
    // Largest files first, so that the last file to finish is a small one.
    List<FileScanTask> ordered = new ArrayList<>(scan.tasks());
    ordered.sort(Comparator.comparingLong(FileScanTask::length).reversed());
    List<Worker> workers =
        SharedWork.drain(
            ordered, () -> new Worker(query, scan, columns, bucketColumn), executor, parallelism);
    Worker mine = workers.get(0);
    for (Worker other : workers.subList(1, workers.size())) {
      mine.aggregation.merge(other.aggregation);
      mine.add(other);
    }
    return mine;
  }

  /** One worker's partial aggregation and read counts. */
  private static final class Worker implements SharedWork.Worker<FileScanTask> {
    final ScanColumns columns;
    final PartialAggregation aggregation;
    final BatchSink sink;
    long rows;
    long bytes;
    int files;
    int rowGroupsRead;
    int rowGroupsSkipped;

    Stats stats() {
      return new Stats(rows, bytes, files, rowGroupsRead, rowGroupsSkipped);
    }

    Worker(CompiledQuery query, Scan scan, ScanColumns columns, int bucketColumn) {
      this.columns = columns;
      Vector[] vectors = new Vector[query.sourceWidth()];
      for (int i = 0; i < columns.positions().length; i++) {
        Types.NestedField field = columns.projection().columns().get(i);
        vectors[columns.positions()[i]] = Vectors.forIceberg(field.type());
      }
      // With joins, the readers fill the fact columns of one set of vectors, and the probe writes
      // the joined rows to another, which the aggregation reads.
      Vector[] aggregated = query.joins().isEmpty() ? vectors : joinedVectors(vectors, query, scan);
      this.aggregation =
          new PartialAggregation(query, aggregated, bucketColumn, scan.ranges(), scan.nullBucket());
      BatchSink aggregate = BatchSink.of(aggregated, aggregation::add);
      this.sink =
          query.joins().isEmpty()
              ? aggregate
              : new JoinProbe(
                  vectors,
                  query.joins(),
                  scan.dimensions(),
                  aggregate,
                  bucketColumn,
                  scan.ranges(),
                  scan.nullBucket());
    }

    /** Vectors of joined rows: the fact columns read, then each dimension's held columns. */
    private static Vector[] joinedVectors(Vector[] fact, CompiledQuery query, Scan scan) {
      Vector[] joined = new Vector[fact.length];
      for (int c = 0; c < fact.length; c++) {
        if (fact[c] != null) {
          joined[c] = Vectors.like(fact[c]);
        }
      }
      JoinProbe.addDimensionVectors(joined, query.joins(), scan.dimensions());
      return joined;
    }

    @Override
    public void process(FileScanTask task) {
      files++;
      bytes += task.length();
      ParquetBatches.Read read =
          ParquetBatches.accepts(task) ? ParquetBatches.read(columns, task, sink) : null;
      if (read == null) {
        rows += RecordBatches.read(columns, task, sink);
      } else {
        rows += read.rows();
        rowGroupsRead += read.rowGroupsRead();
        rowGroupsSkipped += read.rowGroupsSkipped();
      }
    }

    void add(Worker other) {
      rows += other.rows;
      bytes += other.bytes;
      files += other.files;
      rowGroupsRead += other.rowGroupsRead;
      rowGroupsSkipped += other.rowGroupsSkipped;
    }
  }
}
