package io.floe.topology.store;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the off-heap memory of every RocksDB store of the process with one block cache that the
 * memtables are counted against too, as Kafka Streams' documentation recommends ("bounded memory
 * usage"). Each partition is a task per sub-topology with stores of its own, and RocksDB's
 * per-store defaults (a 50 MB block cache, up to three 16 MB memtables) would grow an instance's
 * memory with its partitions instead of with its data.
 *
 * <p>Kafka Streams builds one setter per store; the cache and the write-buffer manager are the
 * process's, sized by {@link #BYTES_CONFIG} when the first store opens, and never closed with a
 * store.
 */
public final class BoundedRocksDbMemory implements RocksDBConfigSetter {

  /** The bytes all stores share, an entry of the Streams configuration that Floe fills in. */
  public static final String BYTES_CONFIG = "floe.state.memory.bytes";

  /**
   * The share of the cache the memtables may take; the rest holds data, index and filter blocks.
   */
  private static final double MEMTABLE_RATIO = 0.25;

  /** Index and filter blocks are cached with high priority, so that data blocks evict first. */
  private static final double HIGH_PRIORITY_RATIO = 0.1;

  private static Cache cache;
  private static WriteBufferManager writeBuffers;
  private static long bytes;

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    Object configured = configs.get(BYTES_CONFIG);
    if (configured == null) {
      return;
    }
    long total = Long.parseLong(configured.toString());
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    synchronized (BoundedRocksDbMemory.class) {
      if (cache == null) {
        bytes = total;
        cache = new LRUCache(total, -1, false, HIGH_PRIORITY_RATIO);
        writeBuffers = new WriteBufferManager((long) (total * MEMTABLE_RATIO), cache);
      }
      table.setBlockCache(cache);
      options.setWriteBufferManager(writeBuffers);
    }
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(true);
    table.setPinTopLevelIndexAndFilter(true);
    options.setTableFormatConfig(table);
  }

  /** The bytes the process's stores share, or 0 before the first store opened. */
  public static synchronized long sharedBytes() {
    return bytes;
  }

  @Override
  public void close(String storeName, Options options) {
    // The cache and the write-buffer manager are shared by every store of the process.
  }
}
