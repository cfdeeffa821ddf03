package io.floe.topology.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.streams.state.internals.BlockBasedTableConfigWithAccessibleCache;
import org.junit.jupiter.api.Test;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class BoundedRocksDbMemoryTest {

  static {
    RocksDB.loadLibrary();
  }

  @Test
  void shouldGiveEveryStoreTheProcesssOneCacheAndWriteBufferManager() {
    // Given the options of two stores, as Kafka Streams builds them
    Map<String, Object> configs = Map.of(BoundedRocksDbMemory.BYTES_CONFIG, "67108864");
    try (Options first = storeOptions();
        Options second = storeOptions()) {

      // When Floe's setter configures both
      new BoundedRocksDbMemory().setConfig("view-state", first, configs);
      new BoundedRocksDbMemory().setConfig("file-bounds", second, configs);

      // Then they share one block cache, which their memtables count against too
      BlockBasedTableConfigWithAccessibleCache a =
          (BlockBasedTableConfigWithAccessibleCache) first.tableFormatConfig();
      BlockBasedTableConfigWithAccessibleCache b =
          (BlockBasedTableConfigWithAccessibleCache) second.tableFormatConfig();
      assertThat(a.blockCache()).isNotNull().isSameAs(b.blockCache());
      assertThat(first.writeBufferManager()).isNotNull().isSameAs(second.writeBufferManager());
      assertThat(BoundedRocksDbMemory.sharedBytes()).isEqualTo(67_108_864L);
    }
  }

  @Test
  void shouldLeaveRocksDbsDefaultsWithoutABound() {
    // Given the options of a store
    try (Options options = storeOptions()) {
      // When the setter sees no bound
      new BoundedRocksDbMemory().setConfig("view-state", options, Map.of());

      // Then the store keeps its own cache
      assertThat(
              ((BlockBasedTableConfigWithAccessibleCache) options.tableFormatConfig()).blockCache())
          .isNull();
      assertThat(options.writeBufferManager()).isNull();
    }
  }

  private static Options storeOptions() {
    Options options = new Options();
    options.setTableFormatConfig(new BlockBasedTableConfigWithAccessibleCache());
    return options;
  }
}
