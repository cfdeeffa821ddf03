package io.floe.topology.processor;

import io.floe.topology.iceberg.RequestStage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Catalog and manifest I/O that a processor hands to one of Floe's executors, so that it never runs
 * on a stream thread inside an exactly-once transaction (DESIGN §6): at most one job per key, whose
 * results the stream thread collects and folds into its stores. What a job is for is recorded in a
 * store by the processor, so that a crash or a rebalance runs it again; a job's result is only ever
 * applied by the processor instance that started it.
 *
 * <p>Not thread-safe: used by one processor on its stream thread. The executor may run a job on the
 * calling thread (tests do), in which case it is collected by the next {@link #collect}.
 *
 * @param <K> what a job is for, such as a table name
 * @param <R> its result
 */
final class Jobs<K, R> {

  /** A finished job: its result, or why it failed. */
  record Done<K, R>(K key, R result, Throwable failure) {
    boolean failed() {
      return failure != null;
    }
  }

  private final Executor executor;
  private final Map<K, CompletableFuture<R>> running = new HashMap<>();
  private final Queue<K> finished = new ConcurrentLinkedQueue<>();

  Jobs(Executor executor) {
    this.executor = executor;
  }

  boolean isRunning(K key) {
    return running.containsKey(key);
  }

  /**
   * Starts the job for {@code key}, its object-store requests counted under {@code stage}; there
   * must be none running for it.
   */
  void start(K key, RequestStage stage, Supplier<R> job) {
    if (running.containsKey(key)) {
      throw new IllegalStateException("A job for " + key + " is already running");
    }
    CompletableFuture<R> future =
        CompletableFuture.supplyAsync(
            () -> {
              try (RequestStage.Scope scope = stage.enter()) {
                return job.get();
              }
            },
            executor);
    running.put(key, future);
    future.whenComplete((result, failure) -> finished.add(key));
  }

  /** The jobs that finished since the last call, in the order they finished. */
  List<Done<K, R>> collect() {
    List<Done<K, R>> done = new ArrayList<>();
    for (K key = finished.poll(); key != null; key = finished.poll()) {
      CompletableFuture<R> future = running.remove(key);
      if (future == null) {
        continue;
      }
      try {
        done.add(new Done<>(key, future.join(), null));
      } catch (CompletionException e) {
        done.add(new Done<>(key, null, e.getCause() == null ? e : e.getCause()));
      }
    }
    return done;
  }

  /** Forgets every running job: their results will not be collected (the task is closing). */
  void abandonAll() {
    running.values().forEach(future -> future.cancel(false));
    running.clear();
    finished.clear();
  }
}
