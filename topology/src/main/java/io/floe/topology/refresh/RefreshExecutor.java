package io.floe.topology.refresh;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs refreshes on Floe's own threads, so that a long refresh never holds a stream thread past its
 * poll or transaction deadlines (DESIGN §6). The stream thread submits and later collects the
 * outcome. A refresh id submitted while the same refresh is still running joins it instead of
 * starting a second one.
 */
public final class RefreshExecutor implements AutoCloseable {

  private final ViewRefresher refresher;
  private final Executor executor;
  private final ExecutorService owned;
  private final Map<String, CompletableFuture<RefreshOutcome>> running = new ConcurrentHashMap<>();
  private final Map<String, String> progress = new ConcurrentHashMap<>();

  /** Runs refreshes on a pool of {@code threads} daemon threads. */
  public RefreshExecutor(ViewRefresher refresher, int threads) {
    this.refresher = refresher;
    this.owned = Executors.newFixedThreadPool(threads, new Named());
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
    String id = request.refreshId();
    CompletableFuture<RefreshOutcome> existing = running.get(id);
    if (existing != null && !existing.isDone()) {
      return existing;
    }
    String view = request.view().name();
    CompletableFuture<RefreshOutcome> future = new CompletableFuture<>();
    running.put(id, future);
    executor.execute(
        () -> {
          try {
            future.complete(refresher.refresh(request, now -> progress.put(view, now.toString())));
          } catch (Throwable e) {
            future.completeExceptionally(e);
          } finally {
            running.remove(id, future);
            progress.remove(view);
          }
        });
    return future;
  }

  /**
   * How far the view's running chunked refresh has come, such as {@code 4320/14400 buckets (chunk
   * 3/10)}.
   */
  public Optional<String> progress(String view) {
    return Optional.ofNullable(progress.get(view));
  }

  /** Refreshes currently running. */
  public int runningCount() {
    return running.size();
  }

  @Override
  public void close() throws InterruptedException {
    if (owned != null) {
      owned.shutdownNow();
      owned.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  private static final class Named implements ThreadFactory {
    private final AtomicInteger count = new AtomicInteger();

    @Override
    public Thread newThread(Runnable runnable) {
      Thread thread = new Thread(runnable, "floe-refresh-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    }
  }
}
