package io.floe.topology.testing;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;

/**
 * An executor that runs nothing until the test says so: a refresh or a catalog read can be held
 * "running" while the test commits, rebalances or closes the topology.
 */
public final class ManualExecutor implements Executor {

  private final Deque<Runnable> queued = new ArrayDeque<>();

  @Override
  public synchronized void execute(Runnable command) {
    queued.add(command);
  }

  /** Runs everything queued, and what that queues in turn. */
  public void runAll() {
    for (Runnable next = poll(); next != null; next = poll()) {
      next.run();
    }
  }

  /** Runs the oldest queued task; false when none is queued. */
  public boolean runOne() {
    Runnable next = poll();
    if (next == null) {
      return false;
    }
    next.run();
    return true;
  }

  /** How many tasks are queued. */
  public synchronized int queued() {
    return queued.size();
  }

  private synchronized Runnable poll() {
    return queued.poll();
  }
}
