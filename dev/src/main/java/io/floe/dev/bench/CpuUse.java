package io.floe.dev.bench;

import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.StageCpu;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.EnumMap;
import java.util.Map;

/**
 * The CPU time this process used up to a moment, split the way a capacity model needs it: Floe's
 * stages ({@link StageCpu}), Floe's threads as a whole, the embedded broker's threads and the
 * bench's own (its main thread and its writers), so that the broker and the workload, which a
 * deployment runs elsewhere, are not charged to Floe. The difference of two is the CPU of what ran
 * between them.
 *
 * <p>Threads are told apart by name: Floe's are its pools ({@code floe-*}, Iceberg's {@code
 * iceberg-worker-pool-*}) and its Kafka Streams client (named after the application id, and the
 * Kafka clients' threads {@code ... | <application id>...}); the bench's are {@code main} and
 * {@value #WRITER_PREFIX}{@code *}; the rest are the broker's (and the few of the bench's commit
 * notice producer). A thread that ended between two moments is missing from the split, not from the
 * process total.
 */
record CpuUse(
    long processNanos,
    long floeThreadNanos,
    long otherNanos,
    long benchNanos,
    Map<RequestStage, Long> stageNanos) {

  /** How the bench names the threads of its writers. */
  static final String WRITER_PREFIX = "bench-writer-";

  /** The CPU used so far; {@code applicationId} names Floe's Kafka Streams threads. */
  static CpuUse now(String applicationId) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long floe = 0;
    long other = 0;
    long bench = 0;
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info == null) {
        continue;
      }
      long nanos = threads.getThreadCpuTime(info.getThreadId());
      if (nanos < 0) {
        continue;
      }
      String name = info.getThreadName();
      if (name.equals("main") || name.startsWith(WRITER_PREFIX)) {
        bench += nanos;
      } else if (name.startsWith("floe-")
          || name.startsWith("iceberg-worker-pool")
          || name.startsWith(applicationId)
          || name.contains("| " + applicationId)) {
        floe += nanos;
      } else {
        other += nanos;
      }
    }
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return new CpuUse(os.getProcessCpuTime(), floe, other, bench, StageCpu.snapshot());
  }

  /** What was used from {@code earlier} to this. */
  CpuUse since(CpuUse earlier) {
    Map<RequestStage, Long> stages = new EnumMap<>(RequestStage.class);
    stageNanos.forEach((stage, nanos) -> stages.put(stage, nanos - earlier.stageNanos.get(stage)));
    return new CpuUse(
        processNanos - earlier.processNanos,
        floeThreadNanos - earlier.floeThreadNanos,
        otherNanos - earlier.otherNanos,
        benchNanos - earlier.benchNanos,
        stages);
  }

  /** CPU time of Floe's threads outside every stage: stream threads, Kafka clients, pool work. */
  long outsideStagesNanos() {
    return floeThreadNanos - stageNanos.values().stream().mapToLong(Long::longValue).sum();
  }
}
