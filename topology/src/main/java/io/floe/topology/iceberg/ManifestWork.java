package io.floe.topology.iceberg;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Scan;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.util.ThreadPools;

/**
 * Where Iceberg reads the manifests of Floe's scans and commits: on the calling thread when there
 * are few, in Iceberg's worker pool when there are many.
 *
 * <p>Iceberg hands a scan's or a commit's manifests to its worker pool by default and then waits
 * for them by polling every 10 ms ({@code ParallelIterable}, {@code Tasks}), so that planning a
 * source of ten manifests took 35 ms where reading them one after the other takes 4 ms, and every
 * commit waited at least 10 ms for each of its steps that touch manifests. Floe's tables mostly
 * have few manifests (Iceberg merges them at 100 by default), and a refresh plans and commits
 * several times.
 *
 * <p>On a remote store ({@link StorageKind}) a manifest read is a request of tens of milliseconds,
 * which one thread would make one after the other: there every scan reads its manifests on the pool
 * of remote reads this was made with ({@link #overlappingRemoteReadsOn}), a pool sized for the
 * requests' latency, however few they are, and every commit reads and writes its manifests on a
 * pool of remote commits beside it. A commit's steps that touch manifests (filtering out the
 * replaced files, writing the new files' manifest, merging, the manifest list's entries) each hand
 * Iceberg's executor a few tasks and wait for them: on the pool of remote reads they queued behind
 * the recomputes' reads of every view refreshing at once (16 threads, each held for a request), and
 * a commit waited for reads that were not its own. The pools belong to whoever made them (the
 * service creates them with itself and shuts them down on close, {@link #newRemoteReadsPool},
 * {@link #newRemoteCommitsPool}); without them ({@link #LOCAL_READS}) a remote table's manifests
 * are read as a local table's are.
 */
public final class ManifestWork {

  /**
   * The system property that makes Iceberg plan scans on the calling thread unless a scan is given
   * an executor ({@code iceberg.scan.plan-in-worker-pool}); read once, when Iceberg's scan classes
   * load.
   */
  public static final String PLAN_IN_WORKER_POOL = "iceberg.scan.plan-in-worker-pool";

  /** Manifests at most that are read on the calling thread; more go to the worker pool. */
  public static final int CALLING_THREAD_MAX_MANIFESTS = 16;

  /**
   * Iceberg's shared worker pool, for the tools and tests that own no pool ({@link #LOCAL_READS});
   * the service gives a pool of its own ({@link #withWorkerPool}).
   */
  private static final ExecutorService ICEBERG_WORKER_POOL =
      new Forwarding(task -> ThreadPools.getWorkerPool().execute(RequestStage.propagating(task)));

  /** Reads every table's manifests as a local table's: no pool of remote reads. */
  public static final ManifestWork LOCAL_READS = new ManifestWork(null, null, null);

  /** The name of the threads of the pool of remote reads, before their number. */
  private static final String REMOTE_READS_THREADS = "floe-remote-reads";

  /** The name of the threads of the pool of remote commits, before their number. */
  private static final String REMOTE_COMMITS_THREADS = "floe-remote-commits";

  /** The name of the threads of a worker pool of Floe's own, before their number. */
  private static final String WORKER_THREADS = "floe-manifests";

  private final Executor remoteReads;
  private final ExecutorService remoteManifests;
  private final ExecutorService remoteCommits;
  private final ExecutorService workers;

  private ManifestWork(
      Executor remoteReads, ExecutorService remoteManifests, ExecutorService remoteCommits) {
    this(remoteReads, remoteManifests, remoteCommits, ICEBERG_WORKER_POOL);
  }

  private ManifestWork(
      Executor remoteReads,
      ExecutorService remoteManifests,
      ExecutorService remoteCommits,
      ExecutorService workers) {
    this.remoteReads = remoteReads;
    this.remoteManifests = remoteManifests;
    this.remoteCommits = remoteCommits;
    this.workers = workers;
  }

  /**
   * Reads the manifests and files of tables on a remote store on {@code reads} (made by {@link
   * #newRemoteReadsPool}) and makes their commits' manifest work on {@code commits} (made by {@link
   * #newRemoteCommitsPool}), which no read occupies, their requests counted for the stage and
   * refresh that handed them the work ({@link RequestStage#propagating}). The pools stay their
   * owner's to shut down.
   */
  public static ManifestWork overlappingRemoteReadsOn(Executor reads, Executor commits) {
    Executor propagating = RequestStage.propagating(reads);
    return new ManifestWork(
        propagating,
        new Forwarding(propagating),
        new Forwarding(RequestStage.propagating(commits)));
  }

  /**
   * A new pool for the reads of remote files (manifests of a scan or a commit, data files of a
   * recompute), of {@value StorageKind#REMOTE_READS} daemon threads named {@code
   * floe-remote-reads-N} whatever the cores: they wait, they do not compute. Its threads start with
   * the first tasks, so a process on local files never starts them. The caller shuts it down.
   */
  public static ExecutorService newRemoteReadsPool() {
    return ThreadPools.newFixedThreadPool(REMOTE_READS_THREADS, StorageKind.REMOTE_READS);
  }

  /**
   * A new pool for the manifests of large scans and commits of tables on local files, and for the
   * plans of snapshot expiries, where Iceberg would use its shared worker pool: of {@link
   * ThreadPools#WORKER_THREAD_POOL_SIZE} daemon threads named {@code floe-manifests-N}, whose
   * threads start with the first tasks. The caller shuts it down ({@link #withWorkerPool}).
   */
  public static ExecutorService newWorkerPool() {
    return ThreadPools.newFixedThreadPool(WORKER_THREADS, ThreadPools.WORKER_THREAD_POOL_SIZE);
  }

  /**
   * This, with the manifest work that would go to Iceberg's shared worker pool going to {@code
   * pool} (made by {@link #newWorkerPool}) instead, its requests counted for the stage of the
   * caller. Iceberg's pool is an "exiting" executor that its own JVM shutdown hook shuts down the
   * moment the JVM begins to exit, beside Floe's own hook that is still closing Kafka Streams and
   * waiting for the refreshes in flight: their manifest work was then rejected ({@code
   * RejectedExecutionException}). A pool of the service's is shut down by the service, after the
   * refreshes that use it. The pool stays the caller's to shut down.
   */
  public ManifestWork withWorkerPool(ExecutorService pool) {
    return new ManifestWork(
        remoteReads,
        remoteManifests,
        remoteCommits,
        new Forwarding(task -> pool.execute(RequestStage.propagating(task))));
  }

  /**
   * The expiry, planning which files it may delete (reading the expired snapshots' manifests) on
   * the worker pool of this ({@link #withWorkerPool}), or Iceberg's shared one without it.
   */
  public ExpireSnapshots expiry(ExpireSnapshots expire) {
    return expire.planWith(workers);
  }

  /**
   * A new pool for the manifest work of commits to tables on a remote store (reading the manifests
   * a commit filters, writing the ones it rewrites and the new files' manifest), of {@value
   * StorageKind#REMOTE_READS} daemon threads named {@code floe-remote-commits-N}: apart from the
   * pool of remote reads, so that a commit never waits for the reads of other refreshes. Its
   * threads start with the first tasks. The caller shuts it down.
   */
  public static ExecutorService newRemoteCommitsPool() {
    return ThreadPools.newFixedThreadPool(REMOTE_COMMITS_THREADS, StorageKind.REMOTE_READS);
  }

  /**
   * Where a recompute of a table on {@code storage} runs its readers: the pool of remote reads on a
   * remote store, when there is one; else {@code scanThreads}.
   */
  public Executor readersFor(StorageKind storage, Executor scanThreads) {
    return storage.isRemote() && remoteReads != null ? remoteReads : scanThreads;
  }

  /**
   * Makes Iceberg plan scans on the calling thread unless told otherwise ({@link #scan}), when
   * neither the property nor its environment variable ({@code ICEBERG_SCAN_PLAN_IN_WORKER_POOL}) is
   * set already. Floe's entry points call it first: it takes effect only before Iceberg plans its
   * first scan in the JVM.
   */
  public static void planOnCallingThreadByDefault() {
    if (System.getProperty(PLAN_IN_WORKER_POOL) == null
        && System.getenv("ICEBERG_SCAN_PLAN_IN_WORKER_POOL") == null) {
      System.setProperty(PLAN_IN_WORKER_POOL, "false");
    }
  }

  /**
   * The scan, planned on the pool of remote reads when the table is on a remote store; else in
   * Iceberg's worker pool when the snapshot it reads has many manifests; otherwise as Iceberg plans
   * by default (on the calling thread in Floe's processes).
   *
   * @param snapshot the snapshot the scan reads, or null for none
   */
  public <S extends Scan<S, ?, ?>> S scan(S scan, Table table, Snapshot snapshot) {
    if (remoteManifests != null && StorageKind.of(table).isRemote()) {
      return scan.planWith(remoteManifests);
    }
    // Iceberg takes an executor as a scan's own only when it is not its worker pool itself.
    return isLarge(table, snapshot) ? scan.planWith(workers) : scan;
  }

  /**
   * The commit, reading and writing its manifests on the pool of remote commits when the table is
   * on a remote store; else on the calling thread unless the snapshot it builds on has many, then
   * in Iceberg's worker pool. Their requests count for the stage of the caller.
   *
   * @param base the snapshot the commit builds on (the table's current one), or null for none
   */
  public <U extends SnapshotUpdate<U>> U commit(U update, Table table, Snapshot base) {
    return commit(update, StorageKind.of(table), table, base);
  }

  /**
   * The FileIO a commit to a table on {@code storage} writes its manifests and manifest list
   * through: on a remote store, one that uploads them on the pool of remote commits while the
   * commit goes on ({@link WriteBehindFileIO}), which the commit waits for before its metadata
   * file; else {@code io} itself.
   */
  public FileIO commitFiles(FileIO io, StorageKind storage) {
    return remoteCommits != null && storage.isRemote()
        ? new WriteBehindFileIO(io, remoteCommits)
        : io;
  }

  /**
   * The commit ({@link #commit(SnapshotUpdate, Table, Snapshot)}) of a table on {@code storage}.
   */
  <U extends SnapshotUpdate<U>> U commit(
      U update, StorageKind storage, Table table, Snapshot base) {
    // Writes too, on a pool that counts their requests for the commit (Iceberg's own would count
    // them under no stage), as many at once as Iceberg would write (it splits the files among
    // them).
    if (remoteCommits != null && storage.isRemote()) {
      return update
          .scanManifestsWith(remoteCommits)
          .writeManifestsWith(remoteCommits, ThreadPools.WORKER_THREAD_POOL_SIZE);
    }
    return isLarge(table, base)
        ? update
            .scanManifestsWith(workers)
            .writeManifestsWith(workers, ThreadPools.WORKER_THREAD_POOL_SIZE)
        : update.scanManifestsWith(CALLING_THREAD).writeManifestsWith(CALLING_THREAD, 1);
  }

  /**
   * Reads {@code manifests} of {@code table} at once on the pool of remote reads when the table is
   * on a remote store ({@link StorageKind#of}), there is such a pool and the table's FileIO is
   * Floe's counting FileIO, so that the walk that reads them next, one after the other on the
   * calling thread, finds each in {@link FileCaches}: on a remote store each is a request of tens
   * of milliseconds. The reads are started, not waited for: the walk joins those in flight ({@link
   * CountingFileIO#readAhead}). On local files, with the caches off or without a pool ({@link
   * #LOCAL_READS}) nothing happens, {@code manifests} is not even asked, and the walk reads them as
   * before.
   */
  public void readAhead(Table table, Supplier<? extends Collection<ManifestFile>> manifests) {
    if (remoteManifests != null
        && table.io() instanceof CountingFileIO counting
        && StorageKind.of(table).isRemote()) {
      counting.readAhead(manifests.get(), remoteManifests);
    }
  }

  /** Whether the manifests of the snapshot go to Iceberg's worker pool. */
  static boolean isLarge(Table table, Snapshot snapshot) {
    return snapshot != null
        && snapshot.allManifests(table.io()).size() > CALLING_THREAD_MAX_MANIFESTS;
  }

  private static final ExecutorService CALLING_THREAD = new Forwarding(Runnable::run);

  /**
   * An executor service that hands each task to an executor (the calling thread, before {@code
   * execute} returns, Iceberg's worker pool, or the pool of remote reads), as Iceberg's planning
   * takes one. Shutting it down does nothing: the executor is not its own.
   */
  private static final class Forwarding extends AbstractExecutorService {
    private final Executor executor;

    Forwarding(Executor executor) {
      this.executor = executor;
    }

    @Override
    public void execute(Runnable command) {
      executor.execute(command);
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return false;
    }
  }
}
