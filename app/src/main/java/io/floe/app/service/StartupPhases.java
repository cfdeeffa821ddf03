package io.floe.app.service;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How long each phase of the service's start-up took, from the JVM's start to the first time Kafka
 * Streams runs, for the one INFO line that says where a slow start-up spends its time. The phases
 * of the starting thread follow each other; Kafka Streams' way to RUNNING (joining the group, the
 * first rebalance, opening and restoring stores) is counted from its start and overlaps the phases
 * after it. The CPU the process used until then goes with it: on a busy node, or in a pod whose CPU
 * is limited, the wall-clock figures grow with the load while the CPU stays what the start costs.
 */
final class StartupPhases {

  private final long startedNanos = System.nanoTime();
  private final long beforeMillis = ManagementFactory.getRuntimeMXBean().getUptime();
  private final List<String> phases = new ArrayList<>();
  private long lastNanos = startedNanos;
  private long streamsStartedNanos;
  private boolean done;

  /**
   * Ends the phase {@code name} of the starting thread, which began when the previous one ended.
   */
  synchronized void ended(String name) {
    long now = System.nanoTime();
    phases.add(name + " " + TimeUnit.NANOSECONDS.toMillis(now - lastNanos) + " ms");
    lastNanos = now;
  }

  /** Ends the phase {@code name}, which started Kafka Streams. */
  synchronized void streamsStarted(String name) {
    ended(name);
    streamsStartedNanos = lastNanos;
  }

  /** The summary, once: when Kafka Streams first runs. */
  synchronized Optional<String> running() {
    if (done || streamsStartedNanos == 0) {
      return Optional.empty();
    }
    done = true;
    long now = System.nanoTime();
    long total = TimeUnit.NANOSECONDS.toMillis(now - startedNanos);
    return Optional.of(
        String.format(
            "Floe ready %d ms after the JVM started, %d ms of CPU (%d ms before the service, %d ms"
                + " starting it: %s; Kafka Streams to RUNNING %d ms after its start)",
            beforeMillis + total,
            processCpuMillis(),
            beforeMillis,
            total,
            String.join(", ", phases),
            TimeUnit.NANOSECONDS.toMillis(now - streamsStartedNanos)));
  }

  /** CPU time of every thread of the process so far, or -1 where the JVM does not tell it. */
  private static long processCpuMillis() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun
        ? TimeUnit.NANOSECONDS.toMillis(sun.getProcessCpuTime())
        : -1;
  }
}
