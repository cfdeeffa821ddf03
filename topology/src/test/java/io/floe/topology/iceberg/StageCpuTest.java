package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** CPU time charged to the stage the thread worked in, on whichever thread the work ran. */
class StageCpuTest {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final long MS = 1_000_000L;

  /** Where the spinning work goes, so that the JIT cannot drop it. */
  private static volatile long blackhole;

  private final ExecutorService pool = Executors.newSingleThreadExecutor();

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  @Test
  void shouldChargeTheCpuTimeSpentInAStageToThatStage() {
    // Given
    long before = StageCpu.nanos(RequestStage.READ);

    // When
    try (RequestStage.Scope reading = RequestStage.READ.enter()) {
      burn(60 * MS);
    }

    // Then
    assertThat(StageCpu.nanos(RequestStage.READ) - before).isGreaterThanOrEqualTo(60 * MS);
  }

  @Test
  void shouldChargeANestedStageToItselfAndTheRestToTheStageAroundIt() {
    // Given
    long planBefore = StageCpu.nanos(RequestStage.PLAN);
    long writeBefore = StageCpu.nanos(RequestStage.WRITE);

    // When
    try (RequestStage.Scope planning = RequestStage.PLAN.enter()) {
      burn(40 * MS);
      try (RequestStage.Scope writing = RequestStage.WRITE.enter()) {
        burn(40 * MS);
      }
      burn(40 * MS);
    }

    // Then
    long plan = StageCpu.nanos(RequestStage.PLAN) - planBefore;
    long write = StageCpu.nanos(RequestStage.WRITE) - writeBefore;
    assertThat(plan).isGreaterThanOrEqualTo(80 * MS);
    assertThat(write).isGreaterThanOrEqualTo(40 * MS).isLessThan(80 * MS);
  }

  @Test
  void shouldChargeATaskOnAPoolToTheStageOfTheThreadThatSubmittedIt() throws Exception {
    // Given
    long before = StageCpu.nanos(RequestStage.COMMIT);

    // When
    try (RequestStage.Scope committing = RequestStage.COMMIT.enter()) {
      pool.submit(RequestStage.propagating(() -> burn(60 * MS))).get(30, TimeUnit.SECONDS);
    }

    // Then
    assertThat(StageCpu.nanos(RequestStage.COMMIT) - before).isGreaterThanOrEqualTo(60 * MS);
  }

  @Test
  void shouldChargeNoStageWithTheTimeAThreadSpentOutsideEvery() throws Exception {
    // Given: a thread that works outside any stage, then enters one for a moment
    long before = StageCpu.nanos(RequestStage.MAINTAIN);

    // When
    pool.submit(
            () -> {
              burn(80 * MS);
              try (RequestStage.Scope maintaining = RequestStage.MAINTAIN.enter()) {
                burn(1 * MS);
              }
              burn(80 * MS);
            })
        .get(30, TimeUnit.SECONDS);

    // Then
    assertThat(StageCpu.nanos(RequestStage.MAINTAIN) - before)
        .isGreaterThanOrEqualTo(1 * MS)
        .isLessThan(40 * MS);
  }

  /** Spins until the current thread has used {@code nanos} more CPU time. */
  private static void burn(long nanos) {
    long until = THREADS.getCurrentThreadCpuTime() + nanos;
    long sink = 0;
    while (THREADS.getCurrentThreadCpuTime() < until) {
      for (int i = 0; i < 10_000; i++) {
        sink += i * 31L ^ sink;
      }
    }
    blackhole = sink;
  }
}
