package io.floe.topology.refresh.eval.vector;

import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.util.function.IntConsumer;

/** Where a reader puts batches: vectors indexed by source column, then a call per batch. */
public interface BatchSink {
  /** The vectors to fill, one per source schema column (null for columns not read). */
  Vector[] vectors();

  /** Rows {@code [0, n)} of the vectors are filled. */
  void accept(int n);

  /** A sink of {@code vectors} that hands each batch's row count to {@code accept}. */
  static BatchSink of(Vector[] vectors, IntConsumer accept) {
    return new BatchSink() {
      @Override
      public Vector[] vectors() {
        return vectors;
      }

      @Override
      public void accept(int n) {
        accept.accept(n);
      }
    };
  }
}
