package io.floe.topology.refresh.eval.agg;

import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import java.util.List;

/**
 * What a {@link PartialAggregation} needs of a compiled view query: the steps before its aggregate
 * (source row to aggregate input), its group keys and aggregate states, and the steps after
 * (aggregated groups to output rows). The engine's {@code CompiledQuery} is the one implementation;
 * the aggregation sees it through this so that {@code agg/} stays below the package that composes
 * it.
 */
public interface GroupedQuery {

  /** Width of the source rows the query consumes: the number of source schema columns. */
  int sourceWidth();

  /** What the columnar evaluator needs to know of the aggregate and its input. */
  AggregateInput aggregateInput();

  /** The positions, in the aggregate's input, of the group keys (the bucket among them). */
  int[] groupKeys();

  /** A new, empty state of one aggregate, in aggregate order, for every group of an aggregation. */
  AggregateStates.State newState(int aggregate);

  /** A context for evaluating the query's expressions on one thread. */
  CompiledExpressions.RowContext newContext();

  /** The aggregate's input row of a source row, or null when WHERE drops it. */
  Object[] aggregateInputOf(Object[] sourceRow, CompiledExpressions.RowContext context);

  /**
   * The output rows of aggregated groups, each a row of the group keys followed by the aggregates'
   * results: HAVING and the expressions over aggregates applied, sorted by bucket and group keys.
   */
  List<Object[]> finish(List<Object[]> groups, CompiledExpressions.RowContext context);
}
