package io.floe.topology.refresh.eval;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * Items of one refresh's work shared between the calling thread and helpers on an executor: every
 * worker takes items from one queue until it is empty. The caller is a worker too, and a helper
 * that starts after the queue ran dry does nothing, so the caller waits only for helpers that
 * started before, never for a thread its executor cannot give it (no deadlock when the caller
 * itself runs on that executor, as a refresh runs on the refresh pool).
 */
public final class SharedWork {

  private SharedWork() {}

  /** One worker's state: the items it processed leave their result in it. */
  public interface Worker<T> {
    void process(T item);
  }

  /**
   * Processes every item on the caller and on up to {@code parallelism - 1} helpers.
   *
   * @param items processed in this order, as workers free up
   * @param newWorker a worker's state; called on the thread that works with it
   * @return the caller's worker and those of the helpers that started, in that order (a helper that
   *     found the queue empty returns a worker that processed nothing)
   * @throws RuntimeException the first failure of any worker (the caller's first, with the helpers'
   *     suppressed), after every started one stopped; items not yet taken are skipped
   */
  public static <T, W extends Worker<T>> List<W> drain(
      List<T> items, Supplier<W> newWorker, Executor executor, int parallelism) {
    ConcurrentLinkedQueue<T> queue = new ConcurrentLinkedQueue<>(items);
    Helpers<W> helpers = new Helpers<>();
    int wanted = Math.max(0, Math.min(parallelism, items.size()) - 1);
    for (int i = 0; i < wanted; i++) {
      try {
        executor.execute(
            () -> {
              if (helpers.join()) {
                try {
                  helpers.finish(work(queue, newWorker));
                } catch (Throwable e) {
                  queue.clear();
                  helpers.fail(e);
                }
              }
            });
      } catch (RejectedExecutionException e) {
        break;
      }
    }
    W mine;
    try {
      mine = work(queue, newWorker);
    } catch (RuntimeException | Error e) {
      queue.clear();
      try {
        helpers.close();
      } catch (RuntimeException | Error helperFailure) {
        e.addSuppressed(helperFailure);
      }
      throw e;
    }
    List<W> all = new ArrayList<>();
    all.add(mine);
    all.addAll(helpers.close());
    return all;
  }

  private static <T, W extends Worker<T>> W work(
      ConcurrentLinkedQueue<T> queue, Supplier<W> newWorker) {
    W worker = newWorker.get();
    for (T item; (item = queue.poll()) != null; ) {
      worker.process(item);
    }
    return worker;
  }

  /** The helpers of one drain that started: the caller waits for them, and only for them. */
  private static final class Helpers<W> {
    private final List<W> done = new ArrayList<>();
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

    synchronized void finish(W worker) {
      done.add(worker);
      running--;
      notifyAll();
    }

    synchronized void fail(Throwable e) {
      if (failure == null) {
        failure = e;
      }
      running--;
      notifyAll();
    }

    synchronized List<W> close() {
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
