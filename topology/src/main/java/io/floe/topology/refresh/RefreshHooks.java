package io.floe.topology.refresh;

/**
 * Points in a refresh where a test can stop the process, to check that a crash at each of them
 * loses nothing and applies nothing twice. Production code passes {@link #NONE}.
 */
public interface RefreshHooks {

  RefreshHooks NONE = new RefreshHooks() {};

  /** The new target data files of a chunk are written; nothing is committed yet. */
  default void filesWritten(String view, ChunkId chunk) {}

  /**
   * A chunk's partial states are committed to the view's state table ({@link StateTable}); the
   * chunk is not committed to the target yet.
   */
  default void stateCommitted(String view, ChunkId chunk) {}

  /** A chunk is committed to the target; its refresh event is not published yet. */
  default void committed(String view, ChunkId chunk) {}

  /** A compaction of the target is committed, after refresh {@code refresh}; nothing follows. */
  default void compacted(String view, RefreshId refresh) {}
}
