package io.floe.topology.iceberg;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The CPU time this process's threads spent in each {@link RequestStage}, summed since the process
 * started: what a refresh costs in CPU by stage (resolve, detect, plan, read, write, commit,
 * maintain), whatever thread did the work, since a stage follows its tasks onto Floe's pools.
 * Measured as the thread's own CPU time ({@link ThreadMXBean#getCurrentThreadCpuTime}), not wall
 * time: on a shared, loaded machine wall time is noise, CPU time per refresh is not. Time a thread
 * spends in no stage (Kafka's threads, the stream threads' own work) is charged to none.
 */
public final class StageCpu {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private static final boolean MEASURED = THREADS.isCurrentThreadCpuTimeSupported();

  private static final LongAdder[] NANOS = new LongAdder[RequestStage.values().length];

  /**
   * The current thread's CPU time at its last switch of stage. A thread's first switch leaves no
   * stage, so the 0 it starts with is never charged.
   */
  private static final ThreadLocal<long[]> LAST_SWITCH = ThreadLocal.withInitial(() -> new long[1]);

  static {
    for (int i = 0; i < NANOS.length; i++) {
      NANOS[i] = new LongAdder();
    }
  }

  private StageCpu() {}

  /** CPU nanoseconds spent in {@code stage} so far, by every thread of the process. */
  public static long nanos(RequestStage stage) {
    return NANOS[stage.ordinal()].sum();
  }

  /** CPU nanoseconds spent in each stage so far. */
  public static Map<RequestStage, Long> snapshot() {
    Map<RequestStage, Long> nanos = new EnumMap<>(RequestStage.class);
    for (RequestStage stage : RequestStage.values()) {
      nanos.put(stage, nanos(stage));
    }
    return nanos;
  }

  /**
   * Charges the current thread's CPU time since its last switch to {@code leaving} (nothing when
   * null: the thread was in no stage), and starts the next period.
   */
  static void charge(RequestStage leaving) {
    if (!MEASURED) {
      return;
    }
    long now = THREADS.getCurrentThreadCpuTime();
    if (now < 0) {
      return; // measurement turned off (ThreadMXBean#setThreadCpuTimeEnabled)
    }
    long[] last = LAST_SWITCH.get();
    if (leaving != null && now > last[0]) {
      NANOS[leaving.ordinal()].add(now - last[0]);
    }
    last[0] = now;
  }
}
