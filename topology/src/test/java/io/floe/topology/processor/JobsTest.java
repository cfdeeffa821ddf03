package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.testing.ManualExecutor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Work off the stream thread, collected on the processor's punctuation. */
class JobsTest {

  private final ManualExecutor io = new ManualExecutor();
  private final Jobs<String, String> jobs = new Jobs<>(io);

  @Test
  void shouldCollectWorkAnotherExecutorRunsOnceItFinishes() {
    // Given a refresh that another executor runs
    CompletableFuture<String> refresh = new CompletableFuture<>();
    jobs.track("bars", refresh, () -> {});
    assertThat(jobs.collect()).isEmpty();

    // When it finishes
    refresh.complete("committed");

    // Then
    assertThat(jobs.collect()).containsExactly(new Jobs.Done<>("bars", "committed", null));
    assertThat(jobs.isRunning("bars")).isFalse();
  }

  @Test
  void shouldReportTheFailureOfTrackedWork() {
    CompletableFuture<String> refresh = new CompletableFuture<>();
    jobs.track("bars", refresh, () -> {});
    IllegalStateException failure = new IllegalStateException("commit failed");

    refresh.completeExceptionally(failure);

    assertThat(jobs.collect()).containsExactly(new Jobs.Done<>("bars", null, failure));
  }

  @Test
  void shouldStopAbandonedWorkAndNeverCollectIt() {
    // Given
    AtomicInteger cancelled = new AtomicInteger();
    CompletableFuture<String> refresh = new CompletableFuture<>();
    jobs.track("bars", refresh, cancelled::incrementAndGet);

    // When
    jobs.abandon("bars");
    refresh.complete("committed");

    // Then
    assertThat(cancelled).hasValue(1);
    assertThat(jobs.collect()).isEmpty();
    assertThat(jobs.keys()).isEmpty();
  }

  @Test
  void shouldNotWaitForAJobStartedAgainWhenTheAbandonedOneUnderItsKeyFinishes() {
    // Given a job abandoned, and one started again for the same key that has not run yet
    jobs.start("trades", RequestStage.RESOLVE, () -> "first");
    jobs.abandon("trades");
    jobs.start("trades", RequestStage.RESOLVE, () -> "second");

    // When the first one's end is collected, it neither blocks nor reports
    assertThat(jobs.collect()).isEmpty();
    io.runAll();

    // Then only the second one's result is collected
    assertThat(jobs.collect()).containsExactly(new Jobs.Done<>("trades", "second", null));
  }

  @Test
  void shouldStopEveryJobWhenAllAreAbandoned() {
    AtomicInteger cancelled = new AtomicInteger();
    jobs.track("bars", new CompletableFuture<>(), cancelled::incrementAndGet);
    jobs.start("trades", RequestStage.RESOLVE, () -> "walked");

    jobs.abandonAll();
    io.runAll();

    assertThat(cancelled).hasValue(1);
    assertThat(jobs.collect()).isEmpty();
  }
}
