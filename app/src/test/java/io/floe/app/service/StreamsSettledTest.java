package io.floe.app.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StreamsSettledTest {

  private static final Duration QUIET = Duration.ofMillis(300);

  private final ExecutorService waiter = Executors.newSingleThreadExecutor();
  private final StreamsSettled settled = new StreamsSettled();

  @AfterEach
  void tearDown() {
    waiter.shutdownNow();
  }

  @Test
  void shouldHoldTheWarmUpWhileKafkaStreamsRebalancesAfterItsFirstRun() throws Exception {
    // Given Kafka Streams that ran and went straight into a rebalance, as a restarted instance
    // does when it takes its tasks back
    settled.changed(KafkaStreams.State.REBALANCING);
    settled.changed(KafkaStreams.State.RUNNING);
    settled.changed(KafkaStreams.State.REBALANCING);

    // When the warm-up waits for its turn
    CompletableFuture<Void> turn = await();

    // Then it waits for as long as the rebalance lasts, and for the quiet after it
    assertThat(turn).failsWithin(QUIET.multipliedBy(3));
    long ranAgain = System.nanoTime();
    settled.changed(KafkaStreams.State.RUNNING);
    assertThat(turn).succeedsWithin(Duration.ofSeconds(10));
    assertThat(System.nanoTime() - ranAgain).isGreaterThanOrEqualTo(QUIET.toNanos());
    assertThat(settled.hasRunFor(QUIET)).isTrue();
  }

  @Test
  void shouldStartTheQuietAgainAfterEachRebalance() {
    // Given Kafka Streams that has run for the quiet
    settled.changed(KafkaStreams.State.RUNNING);
    assertThat(await()).succeedsWithin(Duration.ofSeconds(10));

    // When it rebalances and runs again
    settled.changed(KafkaStreams.State.REBALANCING);
    settled.changed(KafkaStreams.State.RUNNING);

    // Then it has not run for the quiet yet
    assertThat(settled.hasRunFor(QUIET)).isFalse();
  }

  private CompletableFuture<Void> await() {
    return CompletableFuture.runAsync(
        () -> {
          try {
            settled.awaitRunningFor(QUIET);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        },
        waiter);
  }
}
