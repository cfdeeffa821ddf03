package io.floe.topology.processor;

import io.floe.topology.iceberg.RequestStage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Work a processor runs off its stream thread, so that catalog and manifest I/O and refreshes never
 * run inside an exactly-once transaction (DESIGN §6): at most one job per key, whose results the
 * stream thread collects on its punctuation and folds into its stores. A job is either a task this
 * class hands to an executor ({@link #start}) or work another executor already runs, such as a
 * refresh on the refresh executor ({@link #track}). What a job is for is recorded in a store by the
 * processor, so that a crash or a rebalance runs it again; a job's result is only ever applied by
 * the processor instance that started it.
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

  /** A job that runs: its result to come, and how to stop it. */
  private record Running<R>(CompletableFuture<R> future, Runnable cancel) {}

  private final Executor executor;
  private final Map<K, Running<R>> running = new HashMap<>();
  private final Queue<K> finished = new ConcurrentLinkedQueue<>();

  Jobs(Executor executor) {
    this.executor = executor;
  }

  /** Jobs that only {@link #track} work other executors run. */
  static <K, R> Jobs<K, R> tracking() {
    return new Jobs<>(
        task -> {
          throw new UnsupportedOperationException("These jobs run on executors of their own");
        });
  }

  boolean isRunning(K key) {
    return running.containsKey(key);
  }

  /** The keys of the jobs that run or finished uncollected. */
  Set<K> keys() {
    return Collections.unmodifiableSet(running.keySet());
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
    track(key, future, () -> future.cancel(false));
  }

  /**
   * Collects the result of work that another executor runs for {@code key}, in place of any job for
   * it whose result is then never collected; {@code cancel} stops the work when it is abandoned.
   */
  void track(K key, CompletableFuture<R> future, Runnable cancel) {
    running.put(key, new Running<>(future, cancel));
    future.whenComplete((result, failure) -> finished.add(key));
  }

  /** The jobs that finished since the last call, in the order they finished. */
  List<Done<K, R>> collect() {
    List<Done<K, R>> done = new ArrayList<>();
    for (K key = finished.poll(); key != null; key = finished.poll()) {
      Running<R> job = running.get(key);
      // An abandoned job that finishes names its key, which a new job may hold by now.
      if (job == null || !job.future().isDone()) {
        continue;
      }
      running.remove(key);
      try {
        done.add(new Done<>(key, job.future().join(), null));
      } catch (CompletionException e) {
        done.add(new Done<>(key, null, e.getCause() == null ? e : e.getCause()));
      }
    }
    return done;
  }

  /** Stops the job for {@code key}, if one runs: its result will not be collected. */
  void abandon(K key) {
    Running<R> job = running.remove(key);
    if (job != null) {
      job.cancel().run();
    }
  }

  /** Stops the jobs whose keys match {@code keys}: their results will not be collected. */
  void abandonIf(Predicate<K> keys) {
    List.copyOf(running.keySet()).stream().filter(keys).forEach(this::abandon);
  }

  /** Stops every running job: their results will not be collected (the task is closing). */
  void abandonAll() {
    running.values().forEach(job -> job.cancel().run());
    running.clear();
    finished.clear();
  }
}
