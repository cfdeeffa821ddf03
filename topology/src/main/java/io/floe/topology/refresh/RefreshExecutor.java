package io.floe.topology.refresh;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.util.ThreadPools;

/**
 * Runs refreshes on Floe's own threads, so that a long refresh never holds a stream thread past its
 * poll or transaction deadlines (DESIGN §6). The stream thread submits and later collects the
 * outcome. A refresh id submitted while the same refresh is still running joins it instead of
 * starting a second one. The pool serves refreshes in the order they were submitted, and each view
 * has at most one at a time, so views share it fairly.
 */
public final class RefreshExecutor implements AutoCloseable {

  private final ViewRefresher refresher;
  private final Executor executor;
  private final ExecutorService owned;
  private final Map<RefreshId, Job> running = new ConcurrentHashMap<>();
  private final Map<String, String> progress = new ConcurrentHashMap<>();
  private final Object activity = new Object();
  private long lastActiveNanos = System.nanoTime(); // Guarded by activity.

  /** A submitted refresh. */
  private record Job(CompletableFuture<RefreshOutcome> future, AtomicBoolean cancelled) {}

  /** Runs refreshes on a pool of {@code threads} daemon threads. */
  public RefreshExecutor(ViewRefresher refresher, int threads) {
    this.refresher = refresher;
    this.owned = ThreadPools.newFixedThreadPool("floe-refresh", threads);
    this.executor = owned;
  }

  /** Runs refreshes on the given executor, for example the caller's thread in tests. */
  public RefreshExecutor(ViewRefresher refresher, Executor executor) {
    this.refresher = refresher;
    this.owned = null;
    this.executor = executor;
  }

  /** Starts a refresh, or joins the running refresh with the same id. */
  public synchronized CompletableFuture<RefreshOutcome> submit(RefreshRequest request) {
    RefreshId id = request.id();
    Job existing = running.get(id);
    if (existing != null && !existing.future().isDone() && !existing.cancelled().get()) {
      return existing.future();
    }
    String view = request.view().name();
    Job job = new Job(new CompletableFuture<>(), new AtomicBoolean());
    running.put(id, job);
    active();
    executor.execute(
        () -> {
          try {
            if (job.cancelled().get()) {
              throw new RefreshCancelledException(id);
            }
            job.future()
                .complete(
                    refresher.refresh(
                        request, now -> progress.put(view, now.toString()), job.cancelled()::get));
          } catch (Throwable e) {
            job.future().completeExceptionally(e);
          } finally {
            running.remove(id, job);
            progress.remove(view);
            active();
          }
        });
    return job.future();
  }

  /**
   * Cancels a refresh: if it has not started it never will, and if it runs it commits nothing more
   * (its future fails with {@link RefreshCancelledException}).
   */
  public void cancel(RefreshId refreshId) {
    Job job = running.get(refreshId);
    if (job != null) {
      job.cancelled().set(true);
    }
  }

  /**
   * How far the view's running chunked refresh has come, such as {@code 4320/14400 buckets (chunk
   * 3/10)}.
   */
  public Optional<String> progress(String view) {
    return Optional.ofNullable(progress.get(view));
  }

  /** Refreshes currently running or queued. */
  public int runningCount() {
    return running.size();
  }

  /**
   * Blocks until no refresh has run or waited to run for {@code quiet}, counted from this call at
   * the earliest: background work that is not a refresh (the engine warm-up) takes its turns there,
   * so that it never shares the cores with the refreshes a restarted instance catches up with.
   */
  public void awaitQuiet(Duration quiet) throws InterruptedException {
    long called = System.nanoTime();
    synchronized (activity) {
      while (true) {
        long left =
            running.isEmpty()
                ? quiet.toNanos() - (System.nanoTime() - Math.max(called, lastActiveNanos))
                : quiet.toNanos();
        if (left <= 0) {
          return;
        }
        TimeUnit.NANOSECONDS.timedWait(activity, left);
      }
    }
  }

  private void active() {
    synchronized (activity) {
      lastActiveNanos = System.nanoTime();
      activity.notifyAll();
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (owned != null) {
      owned.shutdownNow();
      owned.awaitTermination(30, TimeUnit.SECONDS);
    }
  }
}
