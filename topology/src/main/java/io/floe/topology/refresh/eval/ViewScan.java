package io.floe.topology.refresh.eval;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.refresh.eval.Vectors.Vector;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;

/**
 * Recomputes a view's rows for some buckets from planned files of one pinned source snapshot
 * (DESIGN §5): the files are split across workers, each reads its files into column batches ({@link
 * ParquetBatches}, or Iceberg's generic reader where that cannot) and aggregates them ({@link
 * PartialAggregation}); the partial states merge exactly into the view's output rows, sorted by
 * bucket then group keys, exactly what {@link CompiledQuery.Aggregation#results()} gives for the
 * same rows.
 *
 * <p>The calling thread is a worker too, and helpers on the executor join only while there is work
 * left, so a refresh never waits for a thread its executor cannot give it (no deadlock when the
 * refresh itself runs on that executor).
 */
public final class ViewScan {

  private ViewScan() {}

  private static final class Shared {
    private static final java.util.concurrent.atomic.AtomicInteger THREADS =
        new java.util.concurrent.atomic.AtomicInteger();

    // Daemon threads, as many as cores, for refreshers that are given no executor of their own.
    static final Executor EXECUTOR =
        java.util.concurrent.Executors.newFixedThreadPool(
            Runtime.getRuntime().availableProcessors(),
            runnable -> {
              Thread thread = new Thread(runnable, "floe-scan-" + THREADS.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  /** A process-wide pool of scan workers, created on first use. */
  public static Executor sharedExecutor() {
    return Shared.EXECUTOR;
  }

  /**
   * What to read.
   *
   * @param io the source table's file IO
   * @param schema the schema of the pinned snapshot, whose column positions index source rows
   * @param tasks the files planned from the pinned snapshot (the delta path: the appended ones)
   * @param columns the source columns the view reads ({@code ViewPlan#requiredColumns})
   * @param bucketColumn the view's bucket column
   * @param ranges the bucket ranges to recompute; rows outside them are ignored
   * @param nullBucket whether the null bucket is recomputed too
   * @param rowGroupFilter an Iceberg filter over the source selecting the same rows (or more),
   *     which prunes row groups by their statistics
   */
  public record Scan(
      FileIO io,
      Schema schema,
      List<FileScanTask> tasks,
      List<String> columns,
      String bucketColumn,
      BucketRangeSet ranges,
      boolean nullBucket,
      Expression rowGroupFilter) {
    public Scan {
      tasks = List.copyOf(tasks);
      columns = List.copyOf(columns);
      rowGroupFilter = rowGroupFilter == null ? Expressions.alwaysTrue() : rowGroupFilter;
    }
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
    ScanColumns columns =
        ScanColumns.of(
            scan.io(),
            scan.schema(),
            scan.columns(),
            scan.rowGroupFilter(),
            scan.bucketColumn(),
            scan.ranges(),
            scan.nullBucket());
    int bucketColumn =
        scan.schema().columns().indexOf(scan.schema().findField(scan.bucketColumn()));
    // Largest files first, so that the last file to finish is a small one.
    List<FileScanTask> ordered = new ArrayList<>(scan.tasks());
    ordered.sort(Comparator.comparingLong(FileScanTask::length).reversed());
    ConcurrentLinkedQueue<FileScanTask> queue = new ConcurrentLinkedQueue<>(ordered);
    Workers workers = new Workers();
    int helpers = Math.max(0, Math.min(parallelism, ordered.size()) - 1);
    for (int i = 0; i < helpers; i++) {
      try {
        executor.execute(
            () -> {
              if (workers.join()) {
                try {
                  workers.finish(work(query, scan, columns, bucketColumn, queue));
                } catch (Throwable e) {
                  queue.clear();
                  workers.fail(e);
                }
              }
            });
      } catch (RejectedExecutionException e) {
        break;
      }
    }
    Worker mine;
    try {
      mine = work(query, scan, columns, bucketColumn, queue);
    } catch (RuntimeException | Error e) {
      queue.clear();
      workers.close();
      throw e;
    }
    List<Worker> others = workers.close();
    for (Worker other : others) {
      mine.aggregation.merge(other.aggregation);
      mine.add(other);
    }
    return new Result(
        mine.aggregation.results(),
        new Stats(mine.rows, mine.bytes, mine.files, mine.rowGroupsRead, mine.rowGroupsSkipped));
  }

  private static Worker work(
      CompiledQuery query,
      Scan scan,
      ScanColumns columns,
      int bucketColumn,
      ConcurrentLinkedQueue<FileScanTask> queue) {
    Vector[] vectors = new Vector[scan.schema().columns().size()];
    for (int i = 0; i < columns.positions().length; i++) {
      Types.NestedField field = columns.projection().columns().get(i);
      vectors[columns.positions()[i]] = Vectors.forIceberg(field.type());
    }
    PartialAggregation aggregation =
        new PartialAggregation(query, vectors, bucketColumn, scan.ranges(), scan.nullBucket());
    BatchSink sink =
        new BatchSink() {
          @Override
          public Vector[] vectors() {
            return vectors;
          }

          @Override
          public void accept(int n) {
            aggregation.add(n);
          }
        };
    Worker worker = new Worker(aggregation);
    for (FileScanTask task; (task = queue.poll()) != null; ) {
      worker.files++;
      worker.bytes += task.length();
      ParquetBatches.Read read =
          ParquetBatches.accepts(task) ? ParquetBatches.read(columns, task, sink) : null;
      if (read == null) {
        worker.rows += RecordBatches.read(columns, task, sink);
      } else {
        worker.rows += read.rows();
        worker.rowGroupsRead += read.rowGroupsRead();
        worker.rowGroupsSkipped += read.rowGroupsSkipped();
      }
    }
    return worker;
  }

  /** One worker's partial aggregation and read counts. */
  private static final class Worker {
    final PartialAggregation aggregation;
    long rows;
    long bytes;
    int files;
    int rowGroupsRead;
    int rowGroupsSkipped;

    Worker(PartialAggregation aggregation) {
      this.aggregation = aggregation;
    }

    void add(Worker other) {
      rows += other.rows;
      bytes += other.bytes;
      files += other.files;
      rowGroupsRead += other.rowGroupsRead;
      rowGroupsSkipped += other.rowGroupsSkipped;
    }
  }

  /**
   * The helpers of one evaluation: a helper that starts after the caller ran out of work does
   * nothing, and the caller waits only for helpers that started before.
   */
  private static final class Workers {
    private final List<Worker> done = new ArrayList<>();
    private Throwable failure;
    private int running;
    private boolean closed;

    synchronized boolean join() {
      if (closed) {
        return false;
      }
      running++;
      return true;
    }

    synchronized void finish(Worker worker) {
      done.add(worker);
      running--;
      notifyAll();
    }

    synchronized void fail(Throwable e) {
      failure = e;
      running--;
      notifyAll();
    }

    synchronized List<Worker> close() {
      closed = true;
      boolean interrupted = false;
      while (running > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      if (failure != null) {
        if (failure instanceof RuntimeException e) {
          throw e;
        }
        if (failure instanceof Error e) {
          throw e;
        }
        throw new IllegalStateException(failure);
      }
      return List.copyOf(done);
    }
  }
}
