package io.floe.topology.refresh.eval.agg;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import java.util.Arrays;
import java.util.List;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
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
 * <p>When the steps before the aggregate are only column references and {@code date_trunc} of a
 * column (no WHERE, no computed expression; the common shape of a view), each input column is a
 * source column or the bucket of one, and batches are evaluated column by column without a row ever
 * being boxed: {@link #isColumnar()}. Otherwise the generated row-at-a-time code of {@link
 * CompiledExpressions} evaluates each row, and the group-by continues over its results.
 *
 * @param calls the aggregate calls, in output order after the group keys
 * @param types the SQL type of each column of the aggregate's input row
 * @param copies per input column, the source column it copies, or -1 (null when not columnar)
 * @param buckets per input column, the source column whose bucket it is, or -1 (null when not
 *     columnar)
 */
public record AggregateInput(
    List<AggregateCall> calls,
    SqlTypeName[] types,
    int[] copies,
    int[] buckets,
    Bucketing bucketing) {

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
    if (below.isEmpty()) {
      for (int i = 0; i < width; i++) {
        copies[i] = i;
      }
    } else if (below.size() == 1 && below.get(0) instanceof Project project) {
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
        bucketing);
  }

  boolean isColumnar() {
    return copies != null;
  }

  int width() {
    return types.length;
  }
}
