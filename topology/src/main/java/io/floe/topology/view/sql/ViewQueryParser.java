package io.floe.topology.view.sql;

import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TrinoFunctions;
import io.floe.topology.view.ViewRule;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.calcite.avatica.util.Casing;
import org.apache.calcite.avatica.util.Quoting;
import org.apache.calcite.sql.SqlBasicCall;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlCharStringLiteral;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlIntervalLiteral;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlLiteral;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNodeList;
import org.apache.calcite.sql.SqlNumericLiteral;
import org.apache.calcite.sql.SqlOrderBy;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.SqlUnknownLiteral;
import org.apache.calcite.sql.SqlWith;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.parser.SqlParserUtil;
import org.apache.calcite.sql.parser.babel.SqlBabelParserImpl;
import org.apache.calcite.sql.util.SqlBasicVisitor;
import org.apache.calcite.sql.validate.SqlConformanceEnum;
import org.apache.calcite.util.Litmus;

/**
 * Parses a view query (Trino's dialect, through Calcite's Babel parser) and checks the rules that
 * depend only on its structure: one source table, read directly or through a chain of subqueries in
 * FROM and WITH queries that filter and project it ({@link SourceChain}); no joins, subqueries in
 * expressions, set operations, ordering, limits or window functions; and exactly one bucket,
 * computed by the outer query, that is both a GROUP BY key and an output column: {@code
 * date_trunc(unit, ts)}, {@code date_bin(stride, ts[, origin])} or Trino's n-minute idiom ({@link
 * Granularity}). Type checks against the source schema follow in {@link ViewQueryBinder}.
 */
public final class ViewQueryParser {

  /**
   * The longest view query, in characters. Checked before anything parses it: Calcite's parse time
   * grows faster than the text (20,000 OR terms, 389 KB, took 10 s of CPU), and aggregating view
   * queries are a few hundred characters.
   */
  public static final int MAX_QUERY_LENGTH = 16_384;

  /**
   * How deep a view query may nest: parentheses, and operators chained without them ({@code a OR b
   * OR c} is a tree one level deeper per term). Calcite's parser, validator and SQL-to-relational
   * converter recurse once (or more) per level: 1,000 nested parentheses or 5,000 OR terms overflow
   * the parser's stack, about 450 OR terms the converter's, on a thread's default 1 MiB stack.
   */
  public static final int MAX_NESTING = 128;

  /** Trino's lexical rules: double-quoted identifiers, matched case-insensitively. */
  static final SqlParser.Config PARSER_CONFIG =
      SqlParser.config()
          .withParserFactory(SqlBabelParserImpl.FACTORY)
          .withConformance(SqlConformanceEnum.BABEL)
          .withQuoting(Quoting.DOUBLE_QUOTE)
          .withUnquotedCasing(Casing.UNCHANGED)
          .withQuotedCasing(Casing.UNCHANGED)
          .withCaseSensitive(false);

  /**
   * Functions whose result changes from one evaluation to the next; a recompute could then never
   * reproduce the view. Checked by name because most of them are not Calcite functions at all.
   */
  private static final Set<String> NON_DETERMINISTIC =
      Set.of(
          "now",
          "rand",
          "random",
          "uuid",
          "shuffle",
          "current_timestamp",
          "current_date",
          "current_time",
          "current_timezone",
          "localtime",
          "localtimestamp");

  private ViewQueryParser() {}

  /**
   * Parses and structurally checks a view query, which may join its bucketed fact table to
   * dimension tables in its outer query's FROM: INNER or LEFT joins on equalities of columns
   * ({@code ON}, or {@code USING}), each dimension a table of its own (DESIGN §3.10).
   *
   * @throws InvalidViewException naming the first rule the query breaks and where
   */
  public static ParsedViewQuery parse(String sql) throws InvalidViewException {
    SqlNode query = parseQuery(sql);
    SqlSelect select = outerSelect(query);
    SourceChain chain = SourceChain.of(query, select);
    rejectNestedQueriesAndWindows(select);
    Map<String, SqlNode> outputs = outputColumns(select);
    List<Bucket> buckets = bucketExpressions(select);
    Bucket bucket = groupedBucket(select, outputs, buckets);
    String bucketOutput = bucketOutput(outputs, bucket);
    List<String> groupKeys = groupKeys(select, outputs, bucketOutput);
    SqlParserPos at = bucket.column().getParserPosition();
    return new ParsedViewQuery(
        sql,
        chain.source(),
        chain.sourceColumn(bucket.column()),
        bucket.granularity(),
        bucketOutput,
        List.copyOf(outputs.keySet()),
        groupKeys,
        at.getLineNum(),
        at.getColumnNum(),
        chain.dimensions());
  }

  /**
   * Parses the query text into its single SELECT, rejecting every other statement shape; a query
   * past {@link #MAX_QUERY_LENGTH} or {@link #MAX_NESTING} is refused before anything recursive
   * walks it.
   */
  static SqlSelect parseSelect(String sql) throws InvalidViewException {
    return outerSelect(parseQuery(sql));
  }

  /**
   * Parses the query text: a SELECT, or a WITH whose body is one; a query past {@link
   * #MAX_QUERY_LENGTH} or {@link #MAX_NESTING} is refused before anything recursive walks it.
   */
  static SqlNode parseQuery(String sql) throws InvalidViewException {
    checkTextLimits(sql);
    SqlNode node;
    try {
      node = SqlParser.create(sql, PARSER_CONFIG).parseQuery();
    } catch (SqlParseException e) {
      if (isStackOverflow(e)) {
        throw tooDeep(0, 0, "Calcite's parser ran out of stack");
      }
      SqlParserPos pos = e.getPos();
      throw new InvalidViewException(
          ViewRule.SYNTAX,
          pos == null ? 0 : pos.getLineNum(),
          pos == null ? 0 : pos.getColumnNum(),
          firstSentence(e.getMessage()));
    } catch (StackOverflowError e) {
      throw tooDeep(0, 0, "Calcite's parser ran out of stack");
    }
    checkTreeDepth(node);
    outerSelect(node);
    return node;
  }

  /** The outer SELECT of a parsed query: itself, or the body of its WITH. */
  static SqlSelect outerSelect(SqlNode query) throws InvalidViewException {
    SqlNode node = query;
    while (true) {
      if (node instanceof SqlOrderBy orderBy) {
        rejectOrderingAndLimits(orderBy.orderList, orderBy.fetch, orderBy.offset, null);
        node = orderBy.query;
      } else if (node instanceof SqlWith with) {
        node = with.body;
      } else {
        break;
      }
    }
    if (node.getKind().belongsTo(SqlKind.SET_QUERY)) {
      throw invalid(ViewRule.SET_OPERATION, node, node.getKind().sql);
    }
    if (!(node instanceof SqlSelect select)) {
      throw invalid(ViewRule.NOT_A_QUERY, node, node.getKind().sql);
    }
    rejectOrderingAndLimits(select.getOrderList(), select.getFetch(), select.getOffset(), null);
    return select;
  }

  static void rejectOrderingAndLimits(
      SqlNodeList orderList, SqlNode fetch, SqlNode offset, String detail)
      throws InvalidViewException {
    if (orderList != null && !orderList.isEmpty()) {
      throw invalid(ViewRule.ORDER_BY, orderList.get(0), detail);
    }
    if (fetch != null) {
      throw invalid(ViewRule.LIMIT, fetch, detail);
    }
    if (offset != null) {
      throw invalid(ViewRule.OFFSET, offset, detail);
    }
  }

  static void rejectNestedQueriesAndWindows(SqlSelect select) throws InvalidViewException {
    if (select.getWindowList() != null && !select.getWindowList().isEmpty()) {
      throw invalid(ViewRule.WINDOW_FUNCTION, select.getWindowList().get(0), null);
    }
    List<SqlNode> clauses = new ArrayList<>();
    clauses.add(select.getSelectList());
    clauses.add(select.getWhere());
    clauses.add(select.getGroup());
    clauses.add(select.getHaving());
    NestedQueryFinder finder = new NestedQueryFinder();
    for (SqlNode clause : clauses) {
      if (clause != null) {
        clause.accept(finder);
      }
      if (finder.found != null) {
        throw finder.found;
      }
    }
  }

  /** Output column names in order, each mapped to its expression (alias removed). */
  private static Map<String, SqlNode> outputColumns(SqlSelect select) throws InvalidViewException {
    Map<String, SqlNode> outputs = new LinkedHashMap<>();
    Set<String> seen = new HashSet<>();
    for (SqlNode item : select.getSelectList()) {
      String name;
      SqlNode expression;
      if (item.getKind() == SqlKind.AS) {
        SqlCall as = (SqlCall) item;
        expression = as.operand(0);
        name = ((SqlIdentifier) as.operand(1)).getSimple();
      } else if (item instanceof SqlIdentifier identifier) {
        if (identifier.isStar()) {
          throw invalid(ViewRule.SELECT_STAR, item, null);
        }
        expression = item;
        name = identifier.names.get(identifier.names.size() - 1);
      } else {
        throw invalid(ViewRule.UNALIASED_COLUMN, item, item.toString());
      }
      if (!seen.add(name.toLowerCase(Locale.ROOT))) {
        throw invalid(ViewRule.DUPLICATE_COLUMN, item, name);
      }
      outputs.put(name, expression);
    }
    return outputs;
  }

  /**
   * A bucket expression of the query ({@code date_trunc}, {@code date_bin} or Trino's n-minute
   * idiom), with the clause it appears in.
   */
  private record Bucket(
      SqlNode expression, Granularity granularity, SqlIdentifier column, boolean inWhere) {

    boolean sameBucketAs(Bucket other) {
      return granularity.equals(other.granularity)
          && lastName(column).equalsIgnoreCase(lastName(other.column));
    }

    String written() {
      return granularity.expression(lastName(column));
    }
  }

  private static List<Bucket> bucketExpressions(SqlSelect select) throws InvalidViewException {
    List<Bucket> found = new ArrayList<>();
    collectBuckets(select.getSelectList(), false, found);
    collectBuckets(select.getGroup(), false, found);
    collectBuckets(select.getHaving(), false, found);
    collectBuckets(select.getWhere(), true, found);
    for (Bucket other : found) {
      if (!other.sameBucketAs(found.get(0))) {
        throw invalid(
            ViewRule.MULTIPLE_GRANULARITIES,
            other.expression(),
            found.get(0).written() + " and " + other.written());
      }
    }
    return found;
  }

  private static void collectBuckets(SqlNode clause, boolean inWhere, List<Bucket> out)
      throws InvalidViewException {
    if (clause == null) {
      return;
    }
    // The idiom holds a date_trunc of its own: it is one bucket, not two.
    for (SqlCall expression :
        SqlCalls.findOutermost(clause, ViewQueryParser::isBucketForm, call -> false)) {
      out.add(describeBucket(expression, inWhere));
    }
  }

  static boolean isDateTrunc(SqlNode node) {
    return isCallOf(node, "DATE_TRUNC");
  }

  private static boolean isDateBin(SqlNode node) {
    return isCallOf(node, "DATE_BIN");
  }

  private static boolean isCallOf(SqlNode node, String name) {
    return node instanceof SqlCall call && call.getOperator().getName().equalsIgnoreCase(name);
  }

  /**
   * True for the expressions that may be a bucket: {@code date_trunc} and {@code date_bin} calls,
   * and anything shaped like Trino's n-minute idiom ({@code date_trunc(...) + x * INTERVAL ...}),
   * which {@link #describeBucket} then accepts exactly or rejects with the reason.
   */
  static boolean isBucketForm(SqlNode node) {
    return isDateTrunc(node) || isDateBin(node) || idiomParts(node) != null;
  }

  /**
   * The parts of an expression shaped like the idiom, {@code date_trunc(...) + x * INTERVAL ...} in
   * either order of each operator: {@code [date_trunc call, x, interval]}; null otherwise.
   */
  private static SqlNode[] idiomParts(SqlNode node) {
    if (node.getKind() != SqlKind.PLUS) {
      return null;
    }
    SqlCall plus = (SqlCall) node;
    for (int t = 0; t < 2; t++) {
      SqlNode trunc = plus.operand(t);
      SqlNode product = plus.operand(1 - t);
      if (isDateTrunc(trunc) && product.getKind() == SqlKind.TIMES) {
        SqlCall times = (SqlCall) product;
        for (int i = 0; i < 2; i++) {
          if (times.operand(i) instanceof SqlIntervalLiteral) {
            return new SqlNode[] {trunc, times.operand(1 - i), times.operand(i)};
          }
        }
      }
    }
    return null;
  }

  private static Bucket describeBucket(SqlNode expression, boolean inWhere)
      throws InvalidViewException {
    if (isDateBin(expression)) {
      return describeDateBin((SqlCall) expression, inWhere);
    }
    SqlNode[] idiom = idiomParts(expression);
    if (idiom != null) {
      return describeIdiom(expression, idiom, inWhere);
    }
    return describeDateTrunc((SqlCall) expression, inWhere);
  }

  private static Bucket describeDateTrunc(SqlCall call, boolean inWhere)
      throws InvalidViewException {
    if (call.operandCount() != 2) {
      throw invalid(
          ViewRule.INVALID_ARGUMENT,
          call,
          "date_trunc takes a unit and a column: date_trunc('hour', ts)");
    }
    SqlNode unit = call.operand(0);
    if (!(unit instanceof SqlCharStringLiteral literal)) {
      throw invalid(
          ViewRule.UNSUPPORTED_GRANULARITY,
          unit,
          "the unit must be a string literal, one of " + Granularity.supportedUnits());
    }
    String unitName = literal.getValueAs(String.class);
    Optional<Granularity> granularity = Granularity.fromUnit(unitName);
    if (granularity.isEmpty()) {
      throw invalid(
          ViewRule.UNSUPPORTED_GRANULARITY,
          unit,
          "'" + unitName + "'; supported: " + Granularity.supportedUnits());
    }
    return new Bucket(call, granularity.get(), bucketColumn(call.operand(1)), inWhere);
  }

  private static SqlIdentifier bucketColumn(SqlNode column) throws InvalidViewException {
    if (!(column instanceof SqlIdentifier identifier) || identifier.isStar()) {
      throw invalid(ViewRule.BUCKET_ARGUMENT, column, column.toString());
    }
    return identifier;
  }

  /**
   * {@code date_bin(INTERVAL 'N' MINUTE, ts[, TIMESTAMP '...'])}: PostgreSQL's three-argument form,
   * with the Unix epoch as the origin when there is none (DataFusion's and Materialize's default).
   */
  private static Bucket describeDateBin(SqlCall call, boolean inWhere) throws InvalidViewException {
    if (call.operandCount() != 2 && call.operandCount() != 3) {
      throw invalid(
          ViewRule.INVALID_ARGUMENT,
          call,
          "date_bin takes a stride, a column and optionally an origin: date_bin(INTERVAL '5'"
              + " MINUTE, ts) or date_bin(INTERVAL '5' MINUTE, ts, TIMESTAMP '2024-01-01"
              + " 00:00:00')");
    }
    Duration stride = stride(call.operand(0));
    SqlIdentifier column = bucketColumn(call.operand(1));
    try {
      if (call.operandCount() == 2) {
        return new Bucket(call, Granularity.bin(stride), column, inWhere);
      }
      return new Bucket(call, Granularity.bin(stride, origin(call.operand(2))), column, inWhere);
    } catch (IllegalArgumentException e) {
      throw invalid(
          ViewRule.UNSUPPORTED_STRIDE, call.operand(call.operandCount() - 1), e.getMessage());
    }
  }

  private static Duration stride(SqlNode node) throws InvalidViewException {
    if (!(node instanceof SqlIntervalLiteral literal)) {
      throw invalid(
          ViewRule.UNSUPPORTED_STRIDE,
          node,
          "the stride must be an interval literal such as INTERVAL '5' MINUTE, not " + node);
    }
    SqlIntervalLiteral.IntervalValue value =
        literal.getValueAs(SqlIntervalLiteral.IntervalValue.class);
    if (value.getIntervalQualifier().isYearMonth()) {
      throw invalid(
          ViewRule.UNSUPPORTED_STRIDE,
          node,
          literal + ": months and years have no fixed length; use date_trunc('month', ts)");
    }
    long millis = SqlParserUtil.intervalToMillis(value);
    Duration stride = Duration.ofMillis(millis);
    try {
      // Checked here so that the error points at the interval.
      Granularity.bin(stride);
    } catch (IllegalArgumentException e) {
      throw invalid(ViewRule.UNSUPPORTED_STRIDE, node, literal + ": " + e.getMessage());
    }
    return stride;
  }

  private static final DateTimeFormatter ORIGIN =
      new DateTimeFormatterBuilder()
          .appendPattern("yyyy-MM-dd")
          .optionalStart()
          .appendPattern(" HH:mm")
          .optionalStart()
          .appendPattern(":ss")
          .optionalStart()
          .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
          .optionalEnd()
          .optionalEnd()
          .optionalEnd()
          .parseDefaulting(ChronoField.HOUR_OF_DAY, 0)
          .parseDefaulting(ChronoField.MINUTE_OF_HOUR, 0)
          .parseDefaulting(ChronoField.SECOND_OF_MINUTE, 0)
          .toFormatter(Locale.ROOT);

  private static LocalDateTime origin(SqlNode node) throws InvalidViewException {
    if (node instanceof SqlUnknownLiteral literal && literal.tag.equalsIgnoreCase("TIMESTAMP")) {
      String text = literal.getValue().toString();
      try {
        return LocalDateTime.parse(text, ORIGIN);
      } catch (DateTimeParseException e) {
        throw invalid(
            ViewRule.INVALID_ARGUMENT,
            node,
            "the origin '" + text + "' is not a timestamp such as '2024-01-01 00:00:00'");
      }
    }
    throw invalid(
        ViewRule.INVALID_ARGUMENT,
        node,
        "the origin of date_bin must be a timestamp literal such as TIMESTAMP '2024-01-01"
            + " 00:00:00', not "
            + node);
  }

  /**
   * Trino's n-minute idiom, {@code date_trunc('hour', ts) + (minute(ts) / N) * INTERVAL 'N' MINUTE}
   * or {@code date_trunc('day', ts) + (hour(ts) / N) * INTERVAL 'N' HOUR}, exactly: any other
   * arithmetic on a bucket is the "canonical 5-minute-bars mistake" (iceberg-ivm) whose width Floe
   * cannot tell, and is rejected with what differs.
   */
  private static Bucket describeIdiom(SqlNode expression, SqlNode[] parts, boolean inWhere)
      throws InvalidViewException {
    Bucket trunc = describeDateTrunc((SqlCall) parts[0], inWhere);
    Granularity.Unit within = trunc.granularity().timeUnit();
    if (within != Granularity.Unit.HOUR && within != Granularity.Unit.DAY) {
      throw invalid(
          ViewRule.WRAPPED_BUCKET,
          parts[0],
          "the n-minute idiom truncates to the hour (minute strides) or the day (hour strides),"
              + " not to the "
              + within.sqlName());
    }
    Granularity.Unit counted =
        within == Granularity.Unit.HOUR ? Granularity.Unit.MINUTE : Granularity.Unit.HOUR;
    String column = lastName(trunc.column());
    String shape =
        "write date_trunc('"
            + within.sqlName()
            + "', "
            + column
            + ") + ("
            + counted.sqlName()
            + "("
            + column
            + ") / N) * INTERVAL 'N' "
            + counted.name()
            + ", or date_bin(INTERVAL 'N' "
            + counted.name()
            + ", "
            + column
            + ")";
    SqlNode quotient = parts[1];
    if (quotient.getKind() != SqlKind.DIVIDE
        || !isCallOf(((SqlCall) quotient).operand(0), counted.name())
        || !(((SqlCall) quotient).operand(1) instanceof SqlNumericLiteral divisor)
        || !divisor.isInteger()) {
      throw invalid(ViewRule.WRAPPED_BUCKET, quotient, quotient + " is not the idiom: " + shape);
    }
    SqlCall part = ((SqlCall) quotient).operand(0);
    if (part.operandCount() != 1
        || !(part.operand(0) instanceof SqlIdentifier divided)
        || !lastName(divided).equalsIgnoreCase(column)) {
      throw invalid(
          ViewRule.WRAPPED_BUCKET,
          part,
          part + " must read the column that date_trunc truncates, " + column + ": " + shape);
    }
    long n = divisor.longValue(true);
    SqlIntervalLiteral interval = (SqlIntervalLiteral) parts[2];
    SqlIntervalLiteral.IntervalValue value =
        interval.getValueAs(SqlIntervalLiteral.IntervalValue.class);
    long unitMillis = within == Granularity.Unit.HOUR ? 60_000L : 3_600_000L;
    if (value.getIntervalQualifier().isYearMonth()
        || SqlParserUtil.intervalToMillis(value) != n * unitMillis) {
      throw invalid(
          ViewRule.WRAPPED_BUCKET,
          interval,
          interval
              + " must be the divisor's "
              + n
              + " "
              + counted.sqlName()
              + (n == 1 ? "" : "s")
              + ", INTERVAL '"
              + n
              + "' "
              + counted.name()
              + ": "
              + shape);
    }
    try {
      return new Bucket(expression, Granularity.clockStride(counted, n), trunc.column(), inWhere);
    } catch (IllegalArgumentException e) {
      throw invalid(ViewRule.UNSUPPORTED_STRIDE, divisor, e.getMessage());
    }
  }

  /**
   * Replaces, in place, every bucket expression under {@code node} by a call of Floe's {@link
   * TrinoFunctions#DATE_TRUNC} of its column: the engine computes that call with the view's {@link
   * io.floe.topology.bucket.Bucketing}, whatever form the query wrote the bucket in. The query has
   * passed {@link #parse}, so each bucket expression is well formed and the same.
   */
  static void replaceBuckets(SqlNode node) {
    if (node instanceof SqlNodeList list) {
      for (int i = 0; i < list.size(); i++) {
        SqlNode element = list.get(i);
        if (element != null) {
          list.set(i, withBucketsReplaced(element));
        }
      }
    } else if (node instanceof SqlCall call) {
      List<SqlNode> operands = call.getOperandList();
      for (int i = 0; i < operands.size(); i++) {
        SqlNode operand = operands.get(i);
        if (operand != null) {
          SqlNode replaced = withBucketsReplaced(operand);
          if (replaced != operand) {
            call.setOperand(i, replaced);
          }
        }
      }
    }
  }

  private static SqlNode withBucketsReplaced(SqlNode node) {
    SqlNode[] idiom = idiomParts(node);
    SqlNode column =
        isDateBin(node)
            ? ((SqlCall) node).operand(1)
            : idiom != null ? ((SqlCall) idiom[0]).operand(1) : null;
    if (column != null) {
      SqlParserPos pos = node.getParserPosition();
      return new SqlBasicCall(
          TrinoFunctions.DATE_TRUNC,
          List.of(SqlLiteral.createCharString("bucket", pos), column),
          pos);
    }
    if (isDateTrunc(node) && node instanceof SqlBasicCall call) {
      // The parser builds BigQuery's DATE_TRUNC(date, unit); views use Trino's argument order.
      call.setOperator(TrinoFunctions.DATE_TRUNC);
      return node;
    }
    replaceBuckets(node);
    return node;
  }

  /**
   * The bucket: the GROUP BY key that is a bucket expression, directly, by position or by output
   * name.
   */
  private static Bucket groupedBucket(
      SqlSelect select, Map<String, SqlNode> outputs, List<Bucket> buckets)
      throws InvalidViewException {
    SqlNodeList group = select.getGroup();
    boolean onlyInWhere = !buckets.isEmpty() && buckets.stream().allMatch(Bucket::inWhere);
    if (group == null || group.isEmpty()) {
      if (onlyInWhere) {
        throw invalid(ViewRule.BUCKET_ONLY_IN_WHERE, buckets.get(0).expression(), null);
      }
      throw invalid(ViewRule.NO_GROUP_BY, select, null);
    }
    for (SqlNode key : group) {
      if (key.getKind() == SqlKind.ROLLUP
          || key.getKind() == SqlKind.CUBE
          || key.getKind() == SqlKind.GROUPING_SETS) {
        throw invalid(ViewRule.GROUPING_SETS, key, null);
      }
    }
    // Select items that wrap a bucket can never be the bucket: reject them wherever they are.
    for (SqlNode expression : outputs.values()) {
      rejectWrappedBucket(expression);
    }
    Bucket bucket = null;
    for (SqlNode key : group) {
      SqlNode expression = resolveGroupKey(key, outputs);
      rejectWrappedBucket(expression);
      if (isBucketForm(expression) && bucket == null) {
        bucket = describeBucket(expression, false);
      }
    }
    if (bucket == null) {
      if (onlyInWhere) {
        throw invalid(ViewRule.BUCKET_ONLY_IN_WHERE, buckets.get(0).expression(), null);
      }
      throw invalid(
          ViewRule.NO_BUCKET,
          group.get(0),
          "add date_trunc('<unit>', <column>) or date_bin(INTERVAL '<n>' MINUTE, <column>)");
    }
    return bucket;
  }

  /** The expression a GROUP BY key stands for: an ordinal or an output name is resolved. */
  private static SqlNode resolveGroupKey(SqlNode key, Map<String, SqlNode> outputs)
      throws InvalidViewException {
    if (key instanceof SqlNumericLiteral ordinal && ordinal.isInteger()) {
      int position = ordinal.intValue(true);
      if (position < 1 || position > outputs.size()) {
        throw invalid(
            ViewRule.INVALID_QUERY,
            key,
            "GROUP BY position " + position + " is not in the select list");
      }
      return new ArrayList<>(outputs.values()).get(position - 1);
    }
    if (key instanceof SqlIdentifier identifier && identifier.isSimple()) {
      for (Map.Entry<String, SqlNode> output : outputs.entrySet()) {
        // An output alias counts only when it does not merely repeat a column of the same name.
        if (output.getKey().equalsIgnoreCase(identifier.getSimple())
            && !(output.getValue() instanceof SqlIdentifier)) {
          return output.getValue();
        }
      }
    }
    return key;
  }

  private static void rejectWrappedBucket(SqlNode expression) throws InvalidViewException {
    if (isBucketForm(expression) || !(expression instanceof SqlCall)) {
      return;
    }
    // Inside an aggregate, a bucket is an argument, not the bucket.
    List<SqlCall> wrapped =
        SqlCalls.findOutermost(
            expression, ViewQueryParser::isBucketForm, ViewQueryParser::isAggregate);
    if (!wrapped.isEmpty()) {
      throw invalid(ViewRule.WRAPPED_BUCKET, expression, expression.toString());
    }
  }

  /** Whether {@code call} is an aggregate function, known by name before validation. */
  static boolean isAggregate(SqlCall call) {
    return call.getOperator().isAggregator()
        || KNOWN_AGGREGATES.contains(call.getOperator().getName().toLowerCase(Locale.ROOT));
  }

  /** Aggregate names as the parser leaves them, unresolved: see {@link TrinoOperatorTable}. */
  private static final Set<String> KNOWN_AGGREGATES =
      Set.of(
          "count",
          "sum",
          "avg",
          "min",
          "max",
          "min_by",
          "max_by",
          "count_if",
          "bool_and",
          "bool_or",
          "every",
          "arbitrary",
          "any_value",
          "approx_distinct",
          "approx_percentile",
          "stddev",
          "stddev_samp",
          "stddev_pop",
          "variance",
          "var_samp",
          "var_pop");

  private static String bucketOutput(Map<String, SqlNode> outputs, Bucket bucket)
      throws InvalidViewException {
    for (Map.Entry<String, SqlNode> output : outputs.entrySet()) {
      if (output.getValue().equalsDeep(bucket.expression(), Litmus.IGNORE)) {
        return output.getKey();
      }
    }
    throw invalid(
        ViewRule.BUCKET_NOT_SELECTED,
        bucket.expression(),
        "select " + bucket.expression() + " AS <name>, so that Floe can replace whole buckets");
  }

  /** Output names of the GROUP BY keys other than the bucket, in GROUP BY order. */
  private static List<String> groupKeys(
      SqlSelect select, Map<String, SqlNode> outputs, String bucketOutput)
      throws InvalidViewException {
    List<String> keys = new ArrayList<>();
    for (SqlNode key : select.getGroup()) {
      SqlNode expression = resolveGroupKey(key, outputs);
      for (Map.Entry<String, SqlNode> output : outputs.entrySet()) {
        if (output.getValue().equalsDeep(expression, Litmus.IGNORE)
            && !output.getKey().equals(bucketOutput)
            && !keys.contains(output.getKey())) {
          keys.add(output.getKey());
        }
      }
    }
    return keys;
  }

  private static String lastName(SqlIdentifier identifier) {
    return identifier.names.get(identifier.names.size() - 1);
  }

  /**
   * The length and the parenthesis depth of the text, in one pass that skips string literals,
   * quoted identifiers and comments: parentheses there nest nothing.
   */
  private static void checkTextLimits(String sql) throws InvalidViewException {
    if (sql.length() > MAX_QUERY_LENGTH) {
      throw new InvalidViewException(ViewRule.QUERY_TOO_LONG, 0, 0, "this one has " + sql.length());
    }
    int depth = 0;
    int line = 1;
    int column = 0;
    char quote = 0;
    boolean lineComment = false;
    boolean blockComment = false;
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      char next = i + 1 < sql.length() ? sql.charAt(i + 1) : 0;
      if (c == '\n') {
        line++;
        column = 0;
        lineComment = false;
        continue;
      }
      column++;
      if (quote != 0) {
        // A doubled quote ('it''s') closes and reopens, which leaves the state as it should be.
        quote = c == quote ? 0 : quote;
      } else if (blockComment) {
        if (c == '*' && next == '/') {
          blockComment = false;
          i++;
          column++;
        }
      } else if (!lineComment) {
        if (c == '\'' || c == '"' || c == '`') {
          quote = c;
        } else if (c == '-' && next == '-') {
          lineComment = true;
        } else if (c == '/' && next == '*') {
          blockComment = true;
          i++;
          column++;
        } else if (c == '(' && ++depth > MAX_NESTING) {
          throw tooDeep(line, column, "parentheses nested deeper");
        } else if (c == ')') {
          depth--;
        }
      }
    }
  }

  /**
   * The depth of the parsed tree, walked with a stack of our own: every later step (this class's
   * visitors, Calcite's validator and converter) recurses once per level.
   */
  private static void checkTreeDepth(SqlNode root) throws InvalidViewException {
    Deque<SqlNode> nodes = new ArrayDeque<>();
    Deque<Integer> depths = new ArrayDeque<>();
    nodes.push(root);
    depths.push(1);
    while (!nodes.isEmpty()) {
      SqlNode node = nodes.pop();
      int depth = depths.pop();
      if (depth > MAX_NESTING) {
        SqlParserPos pos = node.getParserPosition();
        throw tooDeep(pos.getLineNum(), pos.getColumnNum(), "an expression nested deeper");
      }
      List<SqlNode> children =
          node instanceof SqlCall call
              ? call.getOperandList()
              : node instanceof SqlNodeList list ? list.getList() : List.of();
      for (SqlNode child : children) {
        if (child != null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }

  private static InvalidViewException tooDeep(int line, int column, String detail) {
    return new InvalidViewException(ViewRule.TOO_DEEPLY_NESTED, line, column, detail);
  }

  private static boolean isStackOverflow(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof StackOverflowError) {
        return true;
      }
    }
    return false;
  }

  static InvalidViewException invalid(ViewRule rule, SqlNode at, String detail) {
    SqlParserPos pos = at == null ? SqlParserPos.ZERO : at.getParserPosition();
    return new InvalidViewException(rule, pos.getLineNum(), pos.getColumnNum(), detail);
  }

  private static String firstSentence(String message) {
    if (message == null) {
      return null;
    }
    String first = message.split("\n", 2)[0].trim();
    int was = first.indexOf(" Was expecting");
    return was > 0 ? first.substring(0, was) : first;
  }

  /**
   * Finds the first subquery, window function or non-deterministic function in an expression tree.
   * Visitors cannot throw checked exceptions, so the first finding is kept for the caller.
   */
  private static final class NestedQueryFinder extends SqlBasicVisitor<Void> {
    private InvalidViewException found;

    private void found(InvalidViewException e) {
      if (found == null) {
        found = e;
      }
    }

    @Override
    public Void visit(SqlCall call) {
      SqlKind kind = call.getKind();
      if (kind == SqlKind.SELECT
          || kind == SqlKind.ORDER_BY
          || kind == SqlKind.WITH
          || kind.belongsTo(SqlKind.SET_QUERY)) {
        found(invalid(ViewRule.SUBQUERY, call, null));
        return null;
      }
      if (kind == SqlKind.OVER) {
        found(invalid(ViewRule.WINDOW_FUNCTION, call, call.operand(0).toString()));
        return null;
      }
      String name = call.getOperator().getName().toLowerCase(Locale.ROOT);
      if (NON_DETERMINISTIC.contains(name)) {
        found(invalid(ViewRule.NON_DETERMINISTIC, call, name + "()"));
        return null;
      }
      return super.visit(call);
    }

    @Override
    public Void visit(SqlIdentifier id) {
      if (id.isSimple() && NON_DETERMINISTIC.contains(id.getSimple().toLowerCase(Locale.ROOT))) {
        found(invalid(ViewRule.NON_DETERMINISTIC, id, id.getSimple()));
      }
      return null;
    }

    @Override
    public Void visit(SqlLiteral literal) {
      return null;
    }
  }
}
