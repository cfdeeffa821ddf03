package io.floe.app.it;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Pauses the stream threads of one Floe instance, as a long GC pause or a stopped process would:
 * configured as the main consumer's interceptor ({@code main.consumer.interceptor.classes}) with
 * {@code main.consumer.pause.gate=<name>}, it holds the thread inside {@code poll()} while the gate
 * of that name is closed. The consumer's heartbeat thread runs on, so the instance leaves the group
 * only once {@code max.poll.interval.ms} passes without a poll, exactly as a stuck instance does.
 * Test code only.
 */
public final class PausingInterceptor implements ConsumerInterceptor<byte[], byte[]> {

  static final String GATE_CONFIG = "pause.gate";

  /** A gate that stream threads wait at while it is closed. */
  static final class Gate {
    private boolean closed;
    private int held;

    synchronized void close() {
      closed = true;
    }

    synchronized void open() {
      closed = false;
      notifyAll();
    }

    /** Whether a stream thread is being held at the gate now. */
    synchronized boolean isHolding() {
      return held > 0;
    }

    private synchronized void pass() {
      long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
      held++;
      try {
        // Bounded, so that a failed test cannot leave a thread parked forever.
        while (closed && System.nanoTime() < deadline) {
          wait(Duration.ofNanos(deadline - System.nanoTime()).toMillis() + 1);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        held--;
      }
    }
  }

  private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

  /** The gate of that name, shared by every interceptor configured with it. */
  static Gate gate(String name) {
    return GATES.computeIfAbsent(name, n -> new Gate());
  }

  private Gate gate;

  @Override
  public void configure(Map<String, ?> configs) {
    gate = gate(String.valueOf(configs.get(GATE_CONFIG)));
  }

  @Override
  public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
    gate.pass();
    return records;
  }

  @Override
  public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

  @Override
  public void close() {}
}
