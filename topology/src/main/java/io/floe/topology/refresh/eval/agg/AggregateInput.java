package io.floe.topology.refresh.eval.agg;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import io.floe.topology.refresh.eval.expr.VectorPredicate;
import java.util.Arrays;
import java.util.List;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The aggregate of a compiled view and how its input row follows from a source row, as the columnar
 * evaluator sees them.
 *
 * <p>When the steps before the aggregate are a WHERE that compiles to a {@link VectorPredicate}
 * (the comparisons, null tests and logic it lists) and column references and {@code date_trunc} of
 * a column (no computed expression; the common shape of a view), each input column is a source
 * column or the bucket of one, and batches are evaluated column by column without a row ever being
 * boxed: {@link #isColumnar()}, the WHERE selecting the rows the aggregation consumes. Otherwise
 * the generated row-at-a-time code of {@link CompiledExpressions} evaluates each row (its WHERE and
 * expressions), and the group-by continues over its results; which of the two is decided here, once
 * per view.
 *
 * @param calls the aggregate calls, in output order after the group keys
 * @param types the SQL type of each column of the aggregate's input row
 * @param copies per input column, the source column it copies, or -1 (null when not columnar)
 * @param buckets per input column, the source column whose bucket it is, or -1 (null when not
 *     columnar)
 * @param where the WHERE over source rows, columnar; null without one or when not columnar
 */
public record AggregateInput(
    List<AggregateCall> calls,
    SqlTypeName[] types,
    int[] copies,
    int[] buckets,
    Bucketing bucketing,
    VectorPredicate where) {

  public static AggregateInput of(Aggregate aggregate, List<RelNode> below, Bucketing bucketing) {
    RelDataType inputType = aggregate.getInput().getRowType();
    SqlTypeName[] types =
        inputType.getFieldList().stream()
            .map(f -> f.getType().getSqlTypeName())
            .toArray(SqlTypeName[]::new);
    int width = types.length;
    int[] copies = new int[width];
    int[] buckets = new int[width];
    Arrays.fill(buckets, -1);
    VectorPredicate where = null;
    List<RelNode> projections = below;
    if (!below.isEmpty() && below.get(0) instanceof Filter filter) {
      // Calcite's rules leave at most one filter, directly over the source scan (FlatRelation).
      where =
          VectorPredicate.compile(
                  filter.getCondition(),
                  filter.getInput().getRowType(),
                  filter.getCluster().getRexBuilder())
              .orElse(null);
      projections = where == null ? null : below.subList(1, below.size());
    }
    if (projections == null) {
      copies = null;
    } else if (projections.isEmpty()) {
      for (int i = 0; i < width; i++) {
        copies[i] = i;
      }
    } else if (projections.size() == 1 && projections.get(0) instanceof Project project) {
      List<RexNode> projects = project.getProjects();
      for (int i = 0; i < width; i++) {
        RexNode e = projects.get(i);
        copies[i] = -1;
        if (e instanceof RexInputRef ref) {
          copies[i] = ref.getIndex();
        } else if (CompiledExpressions.isDateTruncOfColumn(e)) {
          buckets[i] = ((RexInputRef) ((RexCall) e).getOperands().get(1)).getIndex();
        } else {
          copies = null;
          break;
        }
      }
    } else {
      copies = null;
    }
    return new AggregateInput(
        List.copyOf(aggregate.getAggCallList()),
        types,
        copies,
        copies == null ? null : buckets,
        bucketing,
        copies == null ? null : where);
  }

  /**
   * Whether batches are aggregated column by column, the WHERE (if any) evaluated over the vectors,
   * rather than a boxed row at a time.
   */
  public boolean isColumnar() {
    return copies != null;
  }

  int width() {
    return types.length;
  }
}
