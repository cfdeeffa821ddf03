package io.floe.topology.view.sql;

import io.floe.topology.view.TrinoFunctions;
import io.floe.topology.view.ViewPlan;
import org.apache.calcite.rel.rel2sql.RelToSqlConverter;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlCharStringLiteral;
import org.apache.calcite.sql.SqlDialect;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlWriter;
import org.apache.calcite.sql.dialect.PrestoSqlDialect;

/**
 * The flat query Floe maintains for a view, as SQL in Trino's dialect: its plan, subqueries and
 * WITH queries merged into one SELECT over the source table, written back by Calcite's {@link
 * RelToSqlConverter}. {@code floe validate} shows it, so that a user sees what a nested query means
 * to Floe: one filter, one projection, one aggregation.
 */
public final class FlatQuery {

  private FlatQuery() {}

  /** The plan's relation as one SELECT, its bucket written as the view query writes it. */
  public static String of(ViewPlan plan) {
    SqlDialect dialect = new BucketAsWritten(plan);
    return new RelToSqlConverter(dialect)
        .visitRoot(plan.relation())
        .asStatement()
        .toSqlString(dialect)
        .getSql();
  }

  /**
   * Trino's dialect, except that the engine's bucket call ({@code DATE_TRUNC('bucket', col)}, which
   * every bucket form is rewritten to) is written in the form the view query uses.
   */
  private static final class BucketAsWritten extends PrestoSqlDialect {
    private final ViewPlan plan;

    BucketAsWritten(ViewPlan plan) {
      super(PrestoSqlDialect.DEFAULT_CONTEXT);
      this.plan = plan;
    }

    @Override
    public void unparseCall(SqlWriter writer, SqlCall call, int leftPrec, int rightPrec) {
      if (call.getOperator() == TrinoFunctions.DATE_TRUNC
          && call.operand(0) instanceof SqlCharStringLiteral unit
          && "bucket".equals(unit.getValueAs(String.class))
          && call.operand(1) instanceof SqlIdentifier column) {
        String name = column.names.get(column.names.size() - 1);
        writer.print(plan.granularity().expression(quoteIdentifier(name)));
        return;
      }
      super.unparseCall(writer, call, leftPrec, rightPrec);
    }
  }
}
