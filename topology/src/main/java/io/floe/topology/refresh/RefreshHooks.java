package io.floe.topology.refresh;

/**
 * Points in a refresh where a test can stop the process, to check that a crash at each of them
 * loses nothing and applies nothing twice. Production code passes {@link #NONE}.
 */
public interface RefreshHooks {

  RefreshHooks NONE = new RefreshHooks() {};

  /** The new target data files of a chunk are written; nothing is committed yet. */
  default void filesWritten(String view, String chunkId) {}

  /** A chunk is committed to the target; its refresh event is not published yet. */
  default void committed(String view, String chunkId) {}

  /** A compaction of the target is committed, after refresh {@code refreshId}; nothing follows. */
  default void compacted(String view, String refreshId) {}
}
