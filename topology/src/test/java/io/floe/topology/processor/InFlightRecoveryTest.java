package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.TableRef;
import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.testing.ManualExecutor;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Catalog reads run off the stream thread and the stores record them in flight (DESIGN §6): when a
 * task closes with a walk or a detection still running, the next owner of the task, finding the
 * same store, runs it again and publishes exactly what the first would have. The stores outlive the
 * processors here as a changelog outlives a crashed instance.
 */
class InFlightRecoveryTest {

  private static final String BARS =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
          + " FROM lake.market.trades GROUP BY 1, 2";

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final ViewIndex views = new ViewIndex();

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

  private static <V> KeyValueStore<String, V> store(
      MockProcessorContext<?, ?> context, String name, Class<V> type) {
    KeyValueStore<String, V> store =
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(name), Serdes.String(), JsonSerde.of(type))
            .withLoggingDisabled()
            .build();
    context.setCurrentSystemTimeMs(Instant.parse("2026-04-08T12:00:00Z").toEpochMilli());
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
    return store;
  }

  private ResolveSnapshotsProcessor resolver(Executor io) {
    return new ResolveSnapshotsProcessor(TopologySettings.defaults(), services(io));
  }

  /** The services of the processors under test: the lake's catalog, reads on {@code io}. */
  private TopologyServices services(Executor io) {
    return new TopologyServices(
        name -> lake.catalog(),
        views,
        io,
        new RefreshExecutor(new ViewRefresher(name -> lake.catalog()), Runnable::run),
        FloeMetrics.NONE);
  }

  private static void tick(MockProcessorContext<?, ?> context) {
    context.scheduledPunctuators().forEach(p -> p.getPunctuator().punctuate(0));
  }

  @Test
  void shouldWalkAgainTheTableWhoseWalkWasInFlightWhenTheTaskClosed() {
    long s1 =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 1.0, 1L, "B")));
    MockProcessorContext<String, Object> first = new MockProcessorContext<>();
    KeyValueStore<String, TableCursor> cursors =
        store(first, StoreNames.TABLE_CURSORS, TableCursor.class);
    ManualExecutor held = new ManualExecutor();
    ResolveSnapshotsProcessor crashed = resolver(held);
    crashed.init(first);
    crashed.process(
        new Record<>(
            "lake.market.trades",
            TableCommitted.newBuilder()
                .setCatalog("lake")
                .setNamespace(List.of("market"))
                .setTable("trades")
                .setEventTime(Instant.EPOCH)
                .setProducer("test")
                .build(),
            0L));
    crashed.close();
    assertThat(first.forwarded()).isEmpty();
    assertThat(cursors.get("lake.market.trades").requested()).isTrue();

    // The next owner finds the walk owed in the store.
    MockProcessorContext<String, Object> second = new MockProcessorContext<>();
    second.setCurrentSystemTimeMs(first.currentSystemTimeMs());
    second.addStateStore(cursors);
    ResolveSnapshotsProcessor owner = resolver(Runnable::run);
    owner.init(second);
    tick(second);

    assertThat(second.forwarded())
        .singleElement()
        .satisfies(
            f -> assertThat(((SnapshotEvent) f.record().value()).getSnapshotId()).isEqualTo(s1));
    assertThat(cursors.get("lake.market.trades"))
        .isEqualTo(TableCursor.at(trades.uuid().toString(), s1, trades.schema().schemaId(), ""));
    // The abandoned walk, should it finish late, is never applied.
    held.runAll();
    tick(first);
    assertThat(first.forwarded()).isEmpty();
  }

  @Test
  void shouldDetectAgainTheSnapshotsWhoseDetectionWasInFlightWhenTheTaskClosed() {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 1.0, 1L, "B")));
    Snapshot s2 =
        trades.snapshot(
            lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:07:30Z", 2.0, 1L, "S"))));
    MockProcessorContext<String, DirtyUpdate> first = new MockProcessorContext<>();
    KeyValueStore<String, QueuedSnapshots> queue =
        store(first, StoreNames.DETECT_QUEUE, QueuedSnapshots.class);
    ManualExecutor held = new ManualExecutor();
    DetectDirtyBucketsProcessor crashed =
        new DetectDirtyBucketsProcessor(TopologySettings.defaults(), services(held));
    crashed.init(first);
    crashed.process(new Record<>("lake.market.trades", event(s2), 0L));
    crashed.close();
    assertThat(queue.get("lake.market.trades").snapshots()).hasSize(1);

    MockProcessorContext<String, DirtyUpdate> second = new MockProcessorContext<>();
    second.setCurrentSystemTimeMs(first.currentSystemTimeMs());
    second.addStateStore(queue);
    DetectDirtyBucketsProcessor owner =
        new DetectDirtyBucketsProcessor(TopologySettings.defaults(), services(Runnable::run));
    owner.init(second);
    tick(second);

    assertThat(second.forwarded())
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.record().key()).isEqualTo("bars");
              DirtyUpdate.Change change = (DirtyUpdate.Change) f.record().value();
              assertThat(change.snapshot().snapshotId()).isEqualTo(s2.snapshotId());
              assertThat(change.dirty().toDirtyBuckets().ranges().ranges()).hasSize(1);
            });
    assertThat(queue.get("lake.market.trades")).isNull();
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
