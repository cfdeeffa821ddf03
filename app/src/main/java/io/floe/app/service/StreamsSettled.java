package io.floe.app.service;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Whether Kafka Streams has run without a rebalance for a while: the engine warm-up takes a round
 * only then. Right after a start or a rebalance the refreshes look idle because the tasks that will
 * run them are still being handed out and restored, not because there is nothing to do: in a
 * rolling restart of the failover bench, a restarted instance was RUNNING, then rebalanced at once
 * to take its tasks back, and the warm-up round that began in the 2 s between held the cores while
 * those views' first refreshes ran (22-28 s, at a load of 40 on 2 cores).
 */
final class StreamsSettled {

  private boolean running;
  private long runningSinceNanos;

  /** Follows Kafka Streams' state: call it from the state listener with each new state. */
  synchronized void changed(KafkaStreams.State now) {
    boolean nowRunning = now == KafkaStreams.State.RUNNING;
    if (nowRunning && !running) {
      runningSinceNanos = System.nanoTime();
    }
    running = nowRunning;
    notifyAll();
  }

  /** Whether Kafka Streams has been RUNNING, with no rebalance, for {@code quiet} now. */
  synchronized boolean hasRunFor(Duration quiet) {
    return running && System.nanoTime() - runningSinceNanos >= quiet.toNanos();
  }

  /** Blocks until Kafka Streams has been RUNNING, with no rebalance, for {@code quiet}. */
  synchronized void awaitRunningFor(Duration quiet) throws InterruptedException {
    while (true) {
      long left =
          running ? quiet.toNanos() - (System.nanoTime() - runningSinceNanos) : quiet.toNanos();
      if (left <= 0) {
        return;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }
}
