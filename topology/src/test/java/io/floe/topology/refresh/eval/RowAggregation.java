package io.floe.topology.refresh.eval;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.refresh.eval.agg.PartialAggregation;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import java.util.List;
import org.apache.iceberg.Schema;

/**
 * Source rows fed one at a time, as arrays of native values, into one {@link PartialAggregation} of
 * the engine: every row is the aggregation's, whatever its bucket. Tests compare what the readers
 * and parallel scans produce against the engine fed the same rows directly.
 */
public final class RowAggregation {

  private final Vector[] vectors;
  private final PartialAggregation aggregation;
  private int buffered;

  private RowAggregation(CompiledQuery query, Schema source, int bucketColumn) {
    this.vectors = new Vector[source.columns().size()];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = Vectors.forIceberg(source.columns().get(c).type());
    }
    this.aggregation =
        new PartialAggregation(
            query,
            vectors,
            bucketColumn,
            BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
            true);
  }

  /** An aggregation of {@code query} over rows of {@code source}, bucketed by its column. */
  public static RowAggregation of(CompiledQuery query, Schema source, int bucketColumn) {
    return new RowAggregation(query, source, bucketColumn);
  }

  /** An aggregation of the plan's compiled query over rows of its source schema. */
  public static RowAggregation of(ViewPlan plan) throws InvalidViewException {
    Schema source = plan.sourceSchema();
    int bucket = source.columns().indexOf(source.findField(plan.bucketColumn()));
    return new RowAggregation(CompiledQuery.compile(plan), source, bucket);
  }

  /** Adds one source row: one slot per source schema column, in schema order. */
  public void add(Object[] row) {
    for (int c = 0; c < vectors.length; c++) {
      vectors[c].set(buffered, row[c]);
    }
    if (++buffered == Vectors.BATCH) {
      flush();
    }
  }

  private void flush() {
    if (buffered > 0) {
      aggregation.add(buffered);
      buffered = 0;
    }
  }

  /** The output rows, sorted by bucket and group keys. */
  public List<Object[]> results() {
    flush();
    return aggregation.results();
  }
}
