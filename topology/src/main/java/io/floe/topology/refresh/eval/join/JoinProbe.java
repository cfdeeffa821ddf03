package io.floe.topology.refresh.eval.join;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.DoubleVector;
import io.floe.topology.refresh.eval.vector.Vectors.LongVector;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The hash join of one worker of a refresh: batches of fact rows come in from the readers, each row
 * of the chunk's buckets probes every dimension's hash table with its keys, and the joined rows
 * (the fact row, then each dimension's columns) go out in batches to the aggregation, before it
 * groups them. A LEFT join's unmatched row gets nulls, an INNER join's is dropped; a key held by
 * several dimension rows yields one joined row per match (per combination, with several such
 * dimensions), as SQL's join does. Not thread-safe: one per worker.
 */
public final class JoinProbe implements BatchSink {

  private final Vector[] in;
  private final Vector[] out;
  private final int[] factColumns;
  private final List<JoinStep> steps;
  private final DimensionTable[] tables;
  private final int[][] outPositions;
  private final BatchSink downstream;
  private final int bucketColumn;
  private final BucketRangeSet ranges;
  private final boolean nullBucket;
  private final int[] heads;
  private final int[] current;
  private final Object[][] keyValues;

  /**
   * @param in the fact vectors the readers fill, one per joined-row position (null where not read)
   * @param steps the view's joins, in order
   * @param tables the hash table of each join's dimension, in the same order
   * @param downstream receives the joined batches: its vectors, one per joined-row position, hold
   *     the fact columns read and the dimensions' held columns
   * @param bucketColumn the fact position of the bucket column: rows outside {@code ranges} (and
   *     the null bucket unless {@code nullBucket}) are not joined
   */
  public JoinProbe(
      Vector[] in,
      List<JoinStep> steps,
      List<DimensionTable> tables,
      BatchSink downstream,
      int bucketColumn,
      BucketRangeSet ranges,
      boolean nullBucket) {
    if (steps.size() != tables.size()) {
      throw new IllegalArgumentException(
          "The view joins " + steps.size() + " dimensions, given " + tables.size() + " tables");
    }
    this.in = in;
    this.out = downstream.vectors();
    this.steps = List.copyOf(steps);
    this.tables = tables.toArray(new DimensionTable[0]);
    this.downstream = downstream;
    this.bucketColumn = bucketColumn;
    this.ranges = ranges;
    this.nullBucket = nullBucket;
    this.factColumns = IntStream.range(0, in.length).filter(c -> in[c] != null).toArray();
    this.outPositions = new int[this.tables.length][];
    this.keyValues = new Object[this.tables.length][];
    for (int d = 0; d < this.tables.length; d++) {
      JoinStep step = this.steps.get(d);
      DimensionTable table = this.tables[d];
      if (table.width() != step.width() || !Arrays.equals(table.keyPositions(), step.keys())) {
        throw new IllegalArgumentException(
            "The hash table of "
                + table.name()
                + " was built for other keys or another schema than the view joins on");
      }
      int[] positions = table.columnPositions();
      outPositions[d] = new int[positions.length];
      for (int c = 0; c < positions.length; c++) {
        outPositions[d][c] = step.offset() + positions[c];
      }
      keyValues[d] = new Object[step.factKeys().length];
    }
    this.heads = new int[this.tables.length];
    this.current = new int[this.tables.length];
  }

  /**
   * Puts into {@code joined} a vector for each column the dimensions hold, at its joined-row
   * position.
   */
  public static void addDimensionVectors(
      Vector[] joined, List<JoinStep> steps, List<DimensionTable> tables) {
    for (int d = 0; d < Math.min(steps.size(), tables.size()); d++) {
      DimensionTable table = tables.get(d);
      int[] positions = table.columnPositions();
      for (int c = 0; c < positions.length; c++) {
        joined[steps.get(d).offset() + positions[c]] = Vectors.forIceberg(table.columnTypes()[c]);
      }
    }
  }

  @Override
  public Vector[] vectors() {
    return in;
  }

  @Override
  public void accept(int n) {
    int o = 0;
    Vector bucket = in[bucketColumn];
    rows:
    for (int i = 0; i < n; i++) {
      boolean inChunk =
          bucket.isNull(i) ? nullBucket : ranges.contains(((LongVector) bucket).values[i]);
      if (!inChunk) {
        continue;
      }
      for (int d = 0; d < tables.length; d++) {
        JoinStep step = steps.get(d);
        int[] factKeys = step.factKeys();
        Object[] key = keyValues[d];
        for (int k = 0; k < factKeys.length; k++) {
          key[k] = in[factKeys[k]].get(i);
        }
        int head = tables[d].first(DimensionTable.keyOf(key));
        if (head < 0 && step.inner()) {
          continue rows;
        }
        heads[d] = head;
        current[d] = head;
      }
      // Every combination of the dimensions' matches, the last dimension's changing fastest.
      while (true) {
        emit(i, o++);
        if (o == Vectors.BATCH) {
          downstream.accept(o);
          o = 0;
        }
        int d = tables.length - 1;
        while (d >= 0) {
          int following = current[d] < 0 ? -1 : tables[d].next(current[d]);
          if (following >= 0) {
            current[d] = following;
            break;
          }
          current[d] = heads[d];
          d--;
        }
        if (d < 0) {
          break;
        }
      }
    }
    if (o > 0) {
      downstream.accept(o);
    }
  }

  /** Writes fact row {@code i} joined with the current dimension rows to output row {@code o}. */
  private void emit(int i, int o) {
    for (int c : factColumns) {
      copy(in[c], i, out[c], o);
    }
    for (int d = 0; d < tables.length; d++) {
      int row = current[d];
      int[] positions = outPositions[d];
      for (int c = 0; c < positions.length; c++) {
        out[positions[c]].set(o, row < 0 ? null : tables[d].value(c, row));
      }
    }
  }

  private static void copy(Vector from, int i, Vector to, int o) {
    if (from instanceof LongVector longs) {
      LongVector target = (LongVector) to;
      target.values[o] = longs.values[i];
      target.nulls[o] = longs.nulls[i];
    } else if (from instanceof DoubleVector doubles) {
      DoubleVector target = (DoubleVector) to;
      target.values[o] = doubles.values[i];
      target.nulls[o] = doubles.nulls[i];
    } else {
      to.set(o, from.get(i));
    }
  }
}
