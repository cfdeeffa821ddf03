package io.floe.app.metrics;

import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.RequestKind;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.processor.FloeMetrics;
import io.floe.topology.refresh.RefreshOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * Floe's metrics (DESIGN §7) in a Prometheus registry: per view refreshes by mode, refresh
 * duration, source-commit to target-commit lag, rows and bytes read, rows written, pending dirty
 * bucket ranges and errors; per table commit notices and snapshots; dead letters; plus the JVM's
 * and Kafka Streams' own metrics.
 */
public final class FloeMeters implements FloeMetrics {

  private static final Duration[] SLOS = {
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofSeconds(2),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofMinutes(1),
    Duration.ofMinutes(5)
  };

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Map<String, AtomicLong> pending = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> failing = new ConcurrentHashMap<>();

  public FloeMeters() {
    // Kafka Streams tags a store's metrics by its kind (in-memory-state-id, rocksdb-state-id);
    // Prometheus needs one set of tag keys per metric name, and Floe has stores of both kinds.
    for (String kind : new String[] {"in.memory.state.id", "rocksdb.state.id"}) {
      registry.config().meterFilter(MeterFilter.renameTag("kafka.stream.state", kind, "state.id"));
    }
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
  }

  /**
   * Adds Kafka Streams' own metrics, and counts what its stores restore from their changelogs
   * ({@code floe.state.restored.records}, {@code floe.state.restores} by store): the time a task
   * takes to move or to recover after a crash. Call before the streams start.
   */
  public void bind(KafkaStreams streams) {
    new KafkaStreamsMetrics(streams).bindTo(registry);
    streams.setGlobalStateRestoreListener(
        new StateRestoreListener() {
          @Override
          public void onRestoreStart(
              TopicPartition partition, String store, long startOffset, long endOffset) {
            Counter.builder("floe.state.restores")
                .description("Restorations of a store's partition from its changelog")
                .tag("store", store)
                .register(registry)
                .increment();
          }

          @Override
          public void onBatchRestored(
              TopicPartition partition, String store, long batchEndOffset, long restored) {
            Counter.builder("floe.state.restored.records")
                .description("Changelog records replayed into a store")
                .tag("store", store)
                .register(registry)
                .increment(restored);
          }

          @Override
          public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {}
        });
  }

  /** Changelog records replayed into any store since this process started. */
  public long restoredRecords() {
    return (long)
        registry.find("floe.state.restored.records").counters().stream()
            .mapToDouble(Counter::count)
            .sum();
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    registerObjectStoreMeters();
    return registry.scrape();
  }

  /**
   * The process's object-store requests ({@code floe.object.store.requests} by kind and stage) and
   * bytes ({@code floe.object.store.bytes} by direction and stage) as {@link CountingFileIO} counts
   * them, registered as they first occur: most kinds never occur in most stages.
   */
  private void registerObjectStoreMeters() {
    RequestTally process = RequestTally.process();
    for (RequestStage stage : RequestStage.values()) {
      for (RequestKind kind : RequestKind.values()) {
        if (process.requests(kind, stage) > 0) {
          FunctionCounter.builder(
                  "floe.object.store.requests", process, tally -> tally.requests(kind, stage))
              .description("Object-store requests, by what they fetched or did and the stage")
              .tags("kind", kind.label(), "stage", stage.label())
              .register(registry);
        }
      }
      if (process.bytesRead(stage) > 0) {
        objectStoreBytes(process, stage, "read", tally -> tally.bytesRead(stage));
      }
      if (process.bytesWritten(stage) > 0) {
        objectStoreBytes(process, stage, "written", tally -> tally.bytesWritten(stage));
      }
    }
  }

  private void objectStoreBytes(
      RequestTally process,
      RequestStage stage,
      String direction,
      java.util.function.ToDoubleFunction<RequestTally> bytes) {
    FunctionCounter.builder("floe.object.store.bytes", process, bytes)
        .description("Bytes read from and written to the object store, by stage")
        .baseUnit("bytes")
        .tags("direction", direction, "stage", stage.label())
        .register(registry);
  }

  @Override
  public void commitEvent(String table) {
    registry.counter("floe.commit.events", "table", table).increment();
  }

  @Override
  public void snapshotPublished(String table) {
    registry.counter("floe.snapshots", "table", table).increment();
  }

  @Override
  public void deadLettered(String processor, String reason) {
    registry.counter("floe.dlq.records", "processor", processor).increment();
  }

  @Override
  public void commitEventIngested(String format, String outcome) {
    registry.counter("floe.events.ingested", "format", format, "outcome", outcome).increment();
  }

  @Override
  public void refreshed(String view, RefreshOutcome outcome, long durationMs, Long lagMs) {
    String mode =
        outcome.status() == RefreshOutcome.Status.TARGET_AHEAD
            ? "skipped"
            : outcome.full() ? "full" : outcome.delta() ? "delta" : "incremental";
    Tags tags = Tags.of("view", view);
    Counter.builder("floe.refreshes")
        .description("Refreshes, by mode")
        .tags(tags.and("mode", mode))
        .register(registry)
        .increment();
    Timer.builder("floe.refresh.duration")
        .description("Time from the start of a refresh to its last commit")
        .tags(tags)
        .serviceLevelObjectives(SLOS)
        .register(registry)
        .record(Duration.ofMillis(durationMs));
    if (lagMs != null) {
      Timer.builder("floe.refresh.lag")
          .description("Time from the source commit to the target commit")
          .tags(tags)
          .serviceLevelObjectives(SLOS)
          .register(registry)
          .record(Duration.ofMillis(lagMs));
    }
    registry.counter("floe.refresh.rows.read", tags).increment(outcome.work().rowsRead());
    registry.counter("floe.refresh.bytes.read", tags).increment(outcome.work().bytesRead());
    registry.counter("floe.refresh.rows.written", tags).increment(outcome.work().rowsWritten());
    DistributionSummary.builder("floe.refresh.chunks")
        .tags(tags)
        .register(registry)
        .record(outcome.work().chunks());
  }

  @Override
  public void compacted(String view, RefreshOutcome.Compaction compaction) {
    Tags tags = Tags.of("view", view);
    Counter.builder("floe.compactions")
        .description("Compactions of the view's target, run in its refresh slot")
        .tags(tags)
        .register(registry)
        .increment();
    registry
        .counter("floe.compaction.files.rewritten", tags.and("kind", "data"))
        .increment(compaction.dataFilesRewritten());
    registry
        .counter("floe.compaction.files.rewritten", tags.and("kind", "delete"))
        .increment(compaction.deleteFilesRemoved());
    registry.counter("floe.compaction.bytes.written", tags).increment(compaction.bytesWritten());
    Timer.builder("floe.compaction.duration")
        .description("Time a compaction of the target took")
        .tags(tags)
        .serviceLevelObjectives(SLOS)
        .register(registry)
        .record(Duration.ofMillis(compaction.durationMs()));
  }

  @Override
  public void refreshFailed(String view, String error) {
    registry.counter("floe.refresh.errors", "view", view).increment();
  }

  @Override
  public void viewStatus(String view, String status, long pendingRanges, Long lagMs) {
    viewGauge(
            pending,
            "floe.view.pending.ranges",
            "Dirty bucket ranges waiting for a refresh (-1: every bucket)",
            view)
        .set(pendingRanges);
    viewGauge(failing, "floe.view.error", "1 while the view's last refresh failed", view)
        .set("ERROR".equals(status) ? 1 : 0);
  }

  // Staleness, per view this instance maintains, set from its view states at each
  // scrape,
  // so that the figure is as of the scrape and a view that moved to another instance disappears.
  private final Map<String, ViewStaleness> staleness = new ConcurrentHashMap<>();
  private final Map<String, List<Meter.Id>> stalenessMeters = new ConcurrentHashMap<>();

  /**
   * Sets {@code floe.view.staleness} and {@code floe.view.staleness.objective} (seconds, tagged
   * {@code view}) to {@code views}, the views this instance maintains now; the gauges of views no
   * longer among them are removed.
   */
  public void viewStaleness(Map<String, ViewStaleness> views) {
    staleness.putAll(views);
    for (String view : List.copyOf(stalenessMeters.keySet())) {
      if (!views.containsKey(view)) {
        stalenessMeters.remove(view).forEach(registry::remove);
        staleness.remove(view);
      }
    }
    for (String view : views.keySet()) {
      stalenessMeters.computeIfAbsent(
          view,
          v ->
              List.of(
                  Gauge.builder("floe.view.staleness", staleness, s -> seconds(s, v, false))
                      .description(
                          "Time since the oldest source commit the view's target does not reflect"
                              + " yet; 0 when current")
                      .baseUnit("seconds")
                      .tag("view", v)
                      .register(registry)
                      .getId(),
                  Gauge.builder(
                          "floe.view.staleness.objective", staleness, s -> seconds(s, v, true))
                      .description("The view's staleness objective (refresh.max_staleness)")
                      .baseUnit("seconds")
                      .tag("view", v)
                      .register(registry)
                      .getId()));
    }
  }

  private static double seconds(Map<String, ViewStaleness> all, String view, boolean objective) {
    ViewStaleness s = all.get(view);
    return s == null ? Double.NaN : (objective ? s.objectiveMs() : s.stalenessMs()) / 1000.0;
  }

  /** The value behind a per-view gauge, registered on first use. */
  private AtomicLong viewGauge(
      Map<String, AtomicLong> values, String name, String description, String view) {
    return values.computeIfAbsent(
        view,
        v -> {
          AtomicLong value = new AtomicLong();
          Gauge.builder(name, value, AtomicLong::get)
              .description(description)
              .tag("view", v)
              .register(registry);
          return value;
        });
  }
}
