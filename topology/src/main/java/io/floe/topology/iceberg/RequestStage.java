package io.floe.topology.iceberg;

import java.util.Locale;
import java.util.concurrent.Executor;

/**
 * The step of Floe's work that the current thread does, so that {@link CountingFileIO} counts each
 * object-store request by what it was for (issue 21: requests, not bytes, are the cost on a remote
 * store) and {@link StageCpu} charges the thread's CPU time to it (issue 23: CPU per refresh by
 * stage). A step enters its stage for as long as it works ({@code try (RequestStage.Scope scope =
 * RequestStage.PLAN.enter())}); requests outside any count as {@link #OTHER}, CPU time outside any
 * is charged to none. The stage, and the {@link RequestTally} of the refresh around it, follow the
 * work onto Floe's worker pools through {@link #propagating(Executor)}.
 */
public enum RequestStage {
  /** Resolving a commit notice to its snapshots, or pinning a source's current snapshot. */
  RESOLVE,
  /** Turning a snapshot's files into dirty buckets. */
  DETECT,
  /** Loading the source and target of a refresh and planning the files it reads. */
  PLAN,
  /** Reading the source rows of the recomputed buckets. */
  READ,
  /** Writing the target's new files (and reading the target rows they replace). */
  WRITE,
  /** The guarded commit to the target: manifests, manifest list, metadata. */
  COMMIT,
  /** Compaction and snapshot expiry of the target after a refresh, in its slot. */
  MAINTAIN,
  /** Anything else: publishing views, watching catalogs, requests outside Floe's steps. */
  OTHER;

  /** Where the current thread's requests are counted. */
  private record Context(RequestStage stage, RequestTally tally) {}

  private static final Context NONE = new Context(OTHER, null);

  private static final ThreadLocal<Context> CURRENT = ThreadLocal.withInitial(() -> NONE);

  /** Restores what the current thread counted under before the scope opened. */
  public interface Scope extends AutoCloseable {
    @Override
    void close();
  }

  /** The name in metrics, logs and refresh events. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Counts the current thread's requests under this stage until the scope closes. */
  public Scope enter() {
    Context previous = CURRENT.get();
    return install(new Context(this, previous.tally()), previous);
  }

  /** The stage the current thread's requests count under. */
  public static RequestStage current() {
    return CURRENT.get().stage();
  }

  /** The executor, running each task under the stage and tally of the thread that submits it. */
  public static Executor propagating(Executor executor) {
    return task -> executor.execute(propagating(task));
  }

  /** The task, run under the stage and tally current now, wherever it runs. */
  public static Runnable propagating(Runnable task) {
    Context captured = CURRENT.get();
    return () -> {
      Context previous = switchTo(captured);
      try {
        task.run();
      } finally {
        switchTo(previous);
      }
    };
  }

  /** Counts the current thread's requests in {@code tally} too, until the scope closes. */
  static Scope counting(RequestTally tally) {
    Context previous = CURRENT.get();
    return install(new Context(previous.stage(), tally), previous);
  }

  /** The tally the current thread's requests are added to besides the process's, or null. */
  static RequestTally currentTally() {
    return CURRENT.get().tally();
  }

  private static Scope install(Context context, Context previous) {
    switchTo(context);
    return () -> switchTo(previous);
  }

  /**
   * Makes {@code next} the current thread's context, charging its CPU time since the last switch to
   * the stage it leaves (none when it was in no stage).
   *
   * @return the context it leaves
   */
  private static Context switchTo(Context next) {
    Context previous = CURRENT.get();
    StageCpu.charge(previous == NONE ? null : previous.stage());
    CURRENT.set(next);
    return previous;
  }
}
