package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableRef;
import io.floe.testing.IcebergFixture;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoreNames;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How detection treats a table it cannot read: three tries a snapshot, then all dirty. */
class DetectDirtyBucketsProcessorTest {

  private static final String BARS =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
          + " FROM lake.market.trades GROUP BY 1, 2";

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final ViewIndex views = new ViewIndex();
  private final AtomicInteger loads = new AtomicInteger();

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    views.put(ViewDefinition.of("bars", BARS, TableName.parse("lake.analytics.bars")), 0);
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldDetectTheBucketsOfASnapshotWhoseTableLoadsOnTheThirdTry() {
    // Given
    Snapshot snapshot = appended();
    Catalog catalog = failingLoads(2);

    // When
    List<DirtyUpdate.Change> changes = detect(catalog, snapshot);

    // Then
    assertThat(changes)
        .singleElement()
        .satisfies(
            change -> {
              assertThat(change.snapshot().snapshotId()).isEqualTo(snapshot.snapshotId());
              DirtyBuckets dirty = change.dirty().toDirtyBuckets();
              assertThat(dirty.full()).isFalse();
              assertThat(dirty.ranges().ranges()).hasSize(1);
            });
    assertThat(loads).hasValue(3);
  }

  @Test
  void shouldMarkEveryViewFullyDirtyAfterThreeFailedLoads() {
    // Given
    Snapshot snapshot = appended();
    Catalog catalog = failingLoads(Integer.MAX_VALUE);

    // When
    List<DirtyUpdate.Change> changes = detect(catalog, snapshot);

    // Then
    assertThat(changes)
        .singleElement()
        .satisfies(
            change -> {
              assertThat(change.snapshot().snapshotId()).isEqualTo(snapshot.snapshotId());
              assertThat(change.dirty().toDirtyBuckets().full()).isTrue();
            });
    assertThat(loads).hasValue(3);
  }

  private Snapshot appended() {
    return trades.snapshot(
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:07:30Z", 2.0, 1L, "S"))));
  }

  /** Detects one snapshot event on the caller's thread and returns what the stage forwarded. */
  private List<DirtyUpdate.Change> detect(Catalog catalog, Snapshot snapshot) {
    MockProcessorContext<String, DirtyUpdate> context = new MockProcessorContext<>();
    KeyValueStore<String, QueuedSnapshots> queue =
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(StoreNames.DETECT_QUEUE),
                Serdes.String(),
                JsonSerde.of(QueuedSnapshots.class))
            .withLoggingDisabled()
            .build();
    queue.init(context.getStateStoreContext(), queue);
    context.addStateStore(queue);
    DetectDirtyBucketsProcessor detect =
        new DetectDirtyBucketsProcessor(
            TopologySettings.defaults(),
            new TopologyServices(
                name -> catalog,
                views,
                Runnable::run,
                new RefreshExecutor(new ViewRefresher(name -> catalog), Runnable::run),
                FloeMetrics.NONE));
    detect.init(context);
    detect.process(new Record<>("lake.market.trades", event(snapshot), 0L));
    context.scheduledPunctuators().forEach(p -> p.getPunctuator().punctuate(0));
    return context.forwarded().stream().map(f -> (DirtyUpdate.Change) f.record().value()).toList();
  }

  /** The real catalog, whose first {@code failures} table loads throw. */
  private Catalog failingLoads(int failures) {
    Catalog real = lake.catalog();
    return (Catalog)
        Proxy.newProxyInstance(
            Catalog.class.getClassLoader(),
            new Class<?>[] {Catalog.class},
            (proxy, method, args) -> {
              if (method.getName().equals("loadTable") && loads.incrementAndGet() <= failures) {
                throw new ServiceUnavailableException("catalog unreachable");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private SnapshotEvent event(Snapshot snapshot) {
    return SnapshotEvent.newBuilder()
        .setTable(
            TableRef.newBuilder()
                .setCatalog("lake")
                .setNamespace(List.of("market"))
                .setName("trades")
                .setUuid(trades.uuid().toString())
                .build())
        .setSnapshotId(snapshot.snapshotId())
        .setParentId(snapshot.parentId())
        .setSequenceNumber(snapshot.sequenceNumber())
        .setTimestamp(Instant.ofEpochMilli(snapshot.timestampMillis()))
        .setOperation(snapshot.operation())
        .setSummary(Map.of())
        .build();
  }
}
