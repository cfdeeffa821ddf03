package io.floe.topology.view.sql;

import java.util.List;
import org.apache.calcite.avatica.util.TimeUnit;
import org.apache.calcite.sql.SqlAggFunction;
import org.apache.calcite.sql.SqlFunction;
import org.apache.calcite.sql.SqlFunctionCategory;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlOperator;
import org.apache.calcite.sql.SqlOperatorTable;
import org.apache.calcite.sql.fun.SqlBasicAggFunction;
import org.apache.calcite.sql.fun.SqlDatePartFunction;
import org.apache.calcite.sql.fun.SqlLibraryOperators;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.type.OperandTypes;
import org.apache.calcite.sql.type.ReturnTypes;
import org.apache.calcite.sql.type.SqlTypeFamily;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.sql.util.SqlOperatorTables;

/**
 * The functions a view query may call, under Trino's names: Calcite's standard operators, the
 * Calcite library functions whose name and meaning match Trino's, and Floe's own definitions of the
 * Trino functions no Calcite library has ({@code date_trunc} in Trino's argument order, {@code
 * count_if}, {@code arbitrary}, {@code approx_distinct}, {@code approx_percentile}, and Trino's
 * date-part names).
 *
 * <p>Calcite's {@code all} library is deliberately not used: several of its functions share a name
 * with a Trino function but not its meaning (BigQuery's {@code DATE_TRUNC(date, unit)}).
 */
public final class TrinoOperatorTable {

  /**
   * {@code date_trunc('<unit>', <date or timestamp>)}: the bucket; keeps the argument's type. The
   * other bucket forms ({@code date_bin} and Trino's n-minute idiom) are rewritten to it before
   * validation ({@link ViewQueryParser#replaceBuckets}): the engine computes every call of it with
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
      SqlBasicAggFunction.create(
          "COUNT_IF",
          SqlKind.OTHER_FUNCTION,
          ReturnTypes.explicit(SqlTypeName.BIGINT),
          OperandTypes.BOOLEAN);

  /**
   * {@code arbitrary(x)}: some non-null value of the group. Floe returns the smallest, so that a
   * recompute always yields the same row.
   */
  public static final SqlAggFunction ARBITRARY =
      SqlBasicAggFunction.create(
          "ARBITRARY",
          SqlKind.OTHER_FUNCTION,
          ReturnTypes.ARG0_NULLABLE_IF_EMPTY,
          OperandTypes.COMPARABLE_ORDERED);

  /**
   * {@code approx_distinct(x [, max_standard_error])}: Floe counts exactly, which is within every
   * error bound and reproducible.
   */
  public static final SqlAggFunction APPROX_DISTINCT =
      SqlBasicAggFunction.create(
          "APPROX_DISTINCT",
          SqlKind.OTHER_FUNCTION,
          ReturnTypes.explicit(SqlTypeName.BIGINT),
          OperandTypes.or(
              OperandTypes.ANY, OperandTypes.family(SqlTypeFamily.ANY, SqlTypeFamily.NUMERIC)));

  /**
   * {@code approx_percentile(x, percentage)} and {@code approx_percentile(x, weight, percentage)}:
   * Floe computes the exact nearest-rank percentile, the smallest value at or above the given
   * fraction of the (weighted) rows.
   */
  public static final SqlAggFunction APPROX_PERCENTILE =
      SqlBasicAggFunction.create(
          "APPROX_PERCENTILE",
          SqlKind.OTHER_FUNCTION,
          ReturnTypes.ARG0_NULLABLE_IF_EMPTY,
          OperandTypes.or(
              OperandTypes.family(SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC),
              OperandTypes.family(
                  SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC, SqlTypeFamily.NUMERIC)));

  /** Trino's names for date parts that Calcite spells differently. */
  private static final List<SqlOperator> DATE_PARTS =
      List.of(
          new SqlDatePartFunction("DAY", TimeUnit.DAY),
          new SqlDatePartFunction("DAY_OF_MONTH", TimeUnit.DAY),
          new SqlDatePartFunction("DAY_OF_WEEK", TimeUnit.ISODOW),
          new SqlDatePartFunction("DOW", TimeUnit.ISODOW),
          new SqlDatePartFunction("DAY_OF_YEAR", TimeUnit.DOY),
          new SqlDatePartFunction("DOY", TimeUnit.DOY),
          new SqlDatePartFunction("WEEK_OF_YEAR", TimeUnit.WEEK),
          new SqlDatePartFunction("YEAR_OF_WEEK", TimeUnit.ISOYEAR),
          new SqlDatePartFunction("YOW", TimeUnit.ISOYEAR),
          new SqlDatePartFunction("MILLISECOND", TimeUnit.MILLISECOND));

  /** Calcite library functions whose name and meaning are Trino's. */
  private static final List<SqlOperator> LIBRARY =
      List.of(
          SqlLibraryOperators.MIN_BY,
          SqlLibraryOperators.MAX_BY,
          SqlLibraryOperators.BOOL_AND,
          SqlLibraryOperators.BOOL_OR,
          SqlLibraryOperators.IF,
          SqlLibraryOperators.LENGTH,
          SqlLibraryOperators.LPAD,
          SqlLibraryOperators.RPAD,
          SqlLibraryOperators.LTRIM,
          SqlLibraryOperators.RTRIM,
          SqlLibraryOperators.STRPOS,
          SqlLibraryOperators.SPLIT_PART,
          SqlLibraryOperators.STARTS_WITH,
          SqlLibraryOperators.ENDS_WITH,
          SqlLibraryOperators.REVERSE,
          SqlLibraryOperators.GREATEST,
          SqlLibraryOperators.LEAST,
          SqlLibraryOperators.REGEXP_LIKE,
          SqlLibraryOperators.CONCAT_FUNCTION,
          SqlLibraryOperators.CONCAT_WS,
          SqlLibraryOperators.SUBSTR_BIG_QUERY,
          SqlLibraryOperators.DATE,
          SqlLibraryOperators.LOG2,
          SqlLibraryOperators.TRY_CAST);

  private static final List<SqlOperator> FLOE =
      List.of(DATE_TRUNC, COUNT_IF, ARBITRARY, APPROX_DISTINCT, APPROX_PERCENTILE);

  private static final SqlOperatorTable INSTANCE =
      SqlOperatorTables.chain(
          SqlStdOperatorTable.instance(),
          SqlOperatorTables.of(FLOE),
          SqlOperatorTables.of(LIBRARY),
          SqlOperatorTables.of(DATE_PARTS));

  private TrinoOperatorTable() {}

  /** The operator table view queries are validated against. */
  public static SqlOperatorTable instance() {
    return INSTANCE;
  }
}
