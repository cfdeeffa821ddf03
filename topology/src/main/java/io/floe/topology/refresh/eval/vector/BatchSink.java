package io.floe.topology.refresh.eval.vector;

import io.floe.topology.refresh.eval.vector.Vectors.Vector;

/** Where a reader puts batches: vectors indexed by source column, then a call per batch. */
public interface BatchSink {
  /** The vectors to fill, one per source schema column (null for columns not read). */
  Vector[] vectors();

  /** Rows {@code [0, n)} of the vectors are filled. */
  void accept(int n);
}
