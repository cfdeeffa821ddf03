package io.floe.topology.view.sql;

import io.floe.topology.view.TrinoFunctions;
import java.util.List;
import org.apache.calcite.avatica.util.TimeUnit;
import org.apache.calcite.sql.SqlOperator;
import org.apache.calcite.sql.SqlOperatorTable;
import org.apache.calcite.sql.fun.SqlDatePartFunction;
import org.apache.calcite.sql.fun.SqlLibraryOperators;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.util.SqlOperatorTables;

/**
 * The functions a view query may call, under Trino's names: Calcite's standard operators, the
 * Calcite library functions whose name and meaning match Trino's, Floe's own definitions of the
 * Trino functions no Calcite library has ({@link TrinoFunctions}), and Trino's date-part names.
 *
 * <p>Calcite's {@code all} library is deliberately not used: several of its functions share a name
 * with a Trino function but not its meaning (BigQuery's {@code DATE_TRUNC(date, unit)}).
 */
public final class TrinoOperatorTable {

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
      List.of(
          TrinoFunctions.DATE_TRUNC,
          TrinoFunctions.COUNT_IF,
          TrinoFunctions.ARBITRARY,
          TrinoFunctions.APPROX_DISTINCT,
          TrinoFunctions.APPROX_PERCENTILE);

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
