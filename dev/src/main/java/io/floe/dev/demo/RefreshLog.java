package io.floe.dev.demo;

import io.floe.app.config.FloeConfig;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The demo's console: one compact line per refresh Floe publishes on {@code floe.refreshes} (what a
 * downstream consumer sees), and per notable source commit.
 */
final class RefreshLog implements AutoCloseable {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

  private final PrintWriter out;
  private final KafkaConsumer<String, RefreshEvent> consumer;
  private final Thread thread;
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicLong refreshes = new AtomicLong();

  RefreshLog(FloeConfig config, PrintWriter out) {
    this.out = out;
    Map<String, Object> settings = new HashMap<>(config.clientProperties());
    settings.put(ConsumerConfig.GROUP_ID_CONFIG, "floe-demo-log");
    settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    this.consumer =
        new KafkaConsumer<>(
            settings, new StringDeserializer(), config.serdes().refreshEvent().deserializer());
    consumer.subscribe(List.of(config.topics().refreshes()));
    this.thread = new Thread(this::run, "floe-demo-log");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** How many refresh events have been printed. */
  long refreshes() {
    return refreshes.get();
  }

  private void run() {
    try {
      while (running.get()) {
        for (ConsumerRecord<String, RefreshEvent> record : consumer.poll(Duration.ofMillis(500))) {
          print(record.value());
          refreshes.incrementAndGet();
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      consumer.close();
    }
  }

  private synchronized void print(RefreshEvent e) {
    String mode = e.getMode().name().toLowerCase();
    String what =
        e.getError() != null
            ? "FAILED: " + e.getError()
            : String.format(
                "%-11s %-17s %6d rows written %7d read%s",
                mode,
                e.getMode() == RefreshMode.FULL
                    ? "every bucket"
                    : e.getDirtyRanges().size()
                        + " bucket range"
                        + (e.getDirtyRanges().size() == 1 ? "" : "s"),
                e.getRowsWritten(),
                e.getRowsRead(),
                e.getLagMs() == null ? "" : String.format("  lag %.1f s", e.getLagMs() / 1000.0));
    String reason =
        e.getReason() == null || e.getError() != null ? "" : "  (" + e.getReason() + ")";
    line(e.getFinishTime(), String.format("%-22s %s%s", e.getView(), what, reason));
  }

  /** A source commit, as the demo's writer reports it. */
  synchronized void source(String kind, String description) {
    line(Instant.now(), String.format("%-22s %s", "source " + kind, description));
  }

  synchronized void line(Instant at, String text) {
    LocalTime time =
        LocalTime.ofInstant(at.truncatedTo(ChronoUnit.SECONDS), ZoneId.systemDefault());
    out.println(TIME.format(time) + "  " + text);
    out.flush();
  }

  @Override
  public void close() {
    running.set(false);
    consumer.wakeup();
    try {
      thread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
