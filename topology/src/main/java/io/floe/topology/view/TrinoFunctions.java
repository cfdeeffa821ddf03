package io.floe.topology.view;

import org.apache.calcite.sql.SqlAggFunction;
import org.apache.calcite.sql.SqlFunction;
import org.apache.calcite.sql.SqlFunctionCategory;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlBasicAggFunction;
import org.apache.calcite.sql.type.OperandTypes;
import org.apache.calcite.sql.type.ReturnTypes;
import org.apache.calcite.sql.type.SqlOperandTypeChecker;
import org.apache.calcite.sql.type.SqlReturnTypeInference;
import org.apache.calcite.sql.type.SqlTypeFamily;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The Trino functions no Calcite library has, as Floe defines them: a bound plan ({@link
 * ViewPlan#relation()}) calls them as these operators, which is how the engine recognizes them (by
 * identity), so they are part of what the view package hands out, beside the plan. The operator
 * table that view queries are validated against (in {@code view/sql}) registers them.
 */
public final class TrinoFunctions {

  /**
   * {@code date_trunc('<unit>', <date or timestamp>)}: the bucket; keeps the argument's type. The
   * other bucket forms ({@code date_bin} and Trino's n-minute idiom) are rewritten to it before
   * validation ({@code ViewQueryParser#replaceBuckets}): the engine computes every call of it with
   * the view's bucketing, so {@code date_bin} needs no Calcite function of its own.
   */
  public static final SqlFunction DATE_TRUNC =
      new SqlFunction(
          "DATE_TRUNC",
          SqlKind.OTHER_FUNCTION,
          ReturnTypes.ARG1_NULLABLE,
          null,
          OperandTypes.sequence(
              "DATE_TRUNC('<unit>', <date or timestamp>)",
              OperandTypes.CHARACTER,
              OperandTypes.DATETIME),
          SqlFunctionCategory.TIMEDATE);

  /** {@code count_if(condition)}: rows where the condition is true. */
  public static final SqlAggFunction COUNT_IF =
      aggregate("COUNT_IF", ReturnTypes.explicit(SqlTypeName.BIGINT), OperandTypes.BOOLEAN);

  /**
   * {@code arbitrary(x)}: some non-null value of the group. Floe returns the smallest, so that a
   * recompute always yields the same row.
   */
  public static final SqlAggFunction ARBITRARY =
      aggregate("ARBITRARY", ReturnTypes.ARG0_NULLABLE_IF_EMPTY, OperandTypes.COMPARABLE_ORDERED);

  /**
   * {@code approx_distinct(x [, max_standard_error])}: Floe counts exactly, which is within every
   * error bound and reproducible.
   */
  public static final SqlAggFunction APPROX_DISTINCT =
      aggregate(
          "APPROX_DISTINCT",
          ReturnTypes.explicit(SqlTypeName.BIGINT),
          OperandTypes.or(
              OperandTypes.ANY, OperandTypes.family(SqlTypeFamily.ANY, SqlTypeFamily.NUMERIC)));

  /**
   * {@code approx_percentile(x, percentage)} and {@code approx_percentile(x, weight, percentage)}:
   * Floe computes the exact nearest-rank percentile, the smallest value at or above the given
   * fraction of the (weighted) rows.
   */
  public static final SqlAggFunction APPROX_PERCENTILE =
      aggregate(
          "APPROX_PERCENTILE",
          ReturnTypes.ARG0_NULLABLE_IF_EMPTY,
          OperandTypes.or(
              OperandTypes.family(SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC),
              OperandTypes.family(
                  SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC)));

  /** A Trino aggregate Calcite does not know, so of no kind Calcite treats specially. */
  private static SqlAggFunction aggregate(
      String name, SqlReturnTypeInference returnType, SqlOperandTypeChecker operands) {
    return SqlBasicAggFunction.create(name, SqlKind.OTHER_FUNCTION, returnType, operands);
  }

  private TrinoFunctions() {}
}
