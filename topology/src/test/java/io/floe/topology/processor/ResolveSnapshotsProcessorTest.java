package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.ViewIndex;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The resolve stage alone, over a store seeded as an earlier version left it. */
class ResolveSnapshotsProcessorTest {

  @Test
  void shouldDropACursorThatNamesNoTableRatherThanFailTheRetryTick() {
    MockProcessorContext<String, Object> context = new MockProcessorContext<>();
    KeyValueStore<String, TableCursor> cursors =
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(StoreNames.TABLE_CURSORS),
                Serdes.String(),
                JsonSerde.of(TableCursor.class))
            .withLoggingDisabled()
            .build();
    cursors.init(context.getStateStoreContext(), cursors);
    context.addStateStore(cursors);
    // Owed a walk, as a notice with an empty table name left it before names were checked.
    cursors.put("lake.market.", TableCursor.unwalked().requested(null));
    Function<String, Catalog> noCatalog =
        name -> {
          throw new IllegalStateException("no catalog may be asked");
        };
    ResolveSnapshotsProcessor resolve =
        new ResolveSnapshotsProcessor(
            TopologySettings.defaults(),
            new TopologyServices(
                noCatalog,
                new ViewIndex(),
                Runnable::run,
                new RefreshExecutor(new ViewRefresher(noCatalog), Runnable::run),
                FloeMetrics.NONE));
    resolve.init(context);

    context.scheduledPunctuators().get(0).getPunctuator().punctuate(1_000);

    assertThat(cursors.get("lake.market.")).isNull();
    assertThat(context.forwarded()).isEmpty();
  }
}
