package io.floe.topology.view.sql;

import static io.floe.topology.view.sql.ViewQueryParser.invalid;

import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.JoinKind;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewRule;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlJoin;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNodeList;
import org.apache.calcite.sql.SqlOrderBy;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.SqlSelectKeyword;
import org.apache.calcite.sql.SqlWith;
import org.apache.calcite.sql.SqlWithItem;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.util.SqlBasicVisitor;

/**
 * The way from a view query's outer SELECT down to its one source table: the subqueries in FROM and
 * the WITH queries it reads through, each of which may only filter, project and compute columns of
 * the rows below it. Such a chain means the same as one flat SELECT over the source, which
 * Calcite's planner produces from it ({@link ViewQueryBinder}); here the chain is checked for what
 * would make it mean anything else (an aggregate, a set operation, a window, DISTINCT, an order or
 * a limit, a join, a WITH query read twice), and the outer query's bucket column is traced down to
 * the source column it passes through, whose file statistics detect dirty buckets.
 *
 * <p>The outer query's FROM may instead join the source, then the fact table, to dimension tables:
 * a left-deep tree of INNER or LEFT joins, each on equalities of columns, each adding one table
 * named once (checked here with positions; that the keys are fact and dimension columns, against
 * the schemas, in {@link ViewQueryBinder}).
 */
final class SourceChain {

  private static final String INSIDE = "inside a subquery or WITH query";

  /** One SELECT of the chain below the outer query, and the names its columns are renamed to. */
  private record Layer(SqlSelect select, SqlNodeList renamed) {}

  private final TableName source;
  private final List<Layer> layers;
  private final List<ParsedViewQuery.JoinedTable> dimensions;

  private SourceChain(
      TableName source, List<Layer> layers, List<ParsedViewQuery.JoinedTable> dimensions) {
    this.source = source;
    this.layers = List.copyOf(layers);
    this.dimensions = List.copyOf(dimensions);
  }

  /**
   * Walks the chain below {@code outer}, the outer SELECT of {@code query} (itself, or the body of
   * a WITH).
   */
  static SourceChain of(SqlNode query, SqlSelect outer) throws InvalidViewException {
    Walk walk = new Walk();
    if (query instanceof SqlWith with) {
      walk.declare(with);
    }
    TableName source = walk.sourceBelow(outer);
    walk.checkEachWithQueryReadOnce();
    return new SourceChain(source, walk.layers, walk.dimensions);
  }

  /** The source table: the fact table when the outer query joins dimensions to it. */
  TableName source() {
    return source;
  }

  /** The dimension tables the outer query joins to its source, in join order. */
  List<ParsedViewQuery.JoinedTable> dimensions() {
    return dimensions;
  }

  /** Whether the outer query reads its source through subqueries or WITH queries. */
  boolean isNested() {
    return !layers.isEmpty();
  }

  /**
   * The source column that the outer query's column {@code reference} passes through, unchanged or
   * renamed, down the chain.
   *
   * @throws InvalidViewException when a query of the chain computes it, or none has it
   */
  String sourceColumn(SqlIdentifier reference) throws InvalidViewException {
    String name = lastName(reference);
    for (Layer layer : layers) {
      SqlNode item = layer.renamed() == null ? itemNamed(layer, name) : itemAt(layer, name);
      if (item == null) {
        if (hasStar(layer.select()) && layer.renamed() == null) {
          continue;
        }
        throw invalid(ViewRule.UNKNOWN_COLUMN, reference, name);
      }
      SqlNode expression = item.getKind() == SqlKind.AS ? ((SqlCall) item).operand(0) : item;
      if (!(expression instanceof SqlIdentifier column) || column.isStar()) {
        throw invalid(ViewRule.COMPUTED_BUCKET, expression, name + " is computed as " + expression);
      }
      name = lastName(column);
    }
    return name;
  }

  private static SqlNode itemNamed(Layer layer, String name) {
    for (SqlNode item : layer.select().getSelectList()) {
      if (item.getKind() == SqlKind.AS) {
        if (((SqlIdentifier) ((SqlCall) item).operand(1)).getSimple().equalsIgnoreCase(name)) {
          return item;
        }
      } else if (item instanceof SqlIdentifier column
          && !column.isStar()
          && lastName(column).equalsIgnoreCase(name)) {
        return item;
      }
    }
    return null;
  }

  /** The item a column list ({@code t(a, b)}, {@code WITH f (a, b) AS ...}) names by position. */
  private static SqlNode itemAt(Layer layer, String name) throws InvalidViewException {
    for (int i = 0; i < layer.renamed().size(); i++) {
      if (((SqlIdentifier) layer.renamed().get(i)).getSimple().equalsIgnoreCase(name)) {
        if (hasStar(layer.select())) {
          throw invalid(
              ViewRule.SELECT_STAR,
              layer.select().getSelectList(),
              "list the columns of a query whose columns a column list renames");
        }
        SqlNodeList items = layer.select().getSelectList();
        return i < items.size() ? items.get(i) : null;
      }
    }
    return null;
  }

  private static boolean hasStar(SqlSelect select) {
    return select.getSelectList().stream()
        .anyMatch(item -> item instanceof SqlIdentifier column && column.isStar());
  }

  private static String lastName(SqlIdentifier identifier) {
    return identifier.names.get(identifier.names.size() - 1);
  }

  /** The state of one walk down a chain: the WITH queries in scope and the SELECTs passed. */
  private static final class Walk {
    private final Map<String, SqlWithItem> withQueries = new LinkedHashMap<>();
    private final Map<String, List<SqlIdentifier>> reads = new LinkedHashMap<>();
    private final List<Layer> layers = new ArrayList<>();
    private final List<ParsedViewQuery.JoinedTable> dimensions = new ArrayList<>();

    void declare(SqlWith with) throws InvalidViewException {
      for (SqlNode item : with.withList) {
        SqlWithItem withItem = (SqlWithItem) item;
        String name = withItem.name.getSimple().toLowerCase(Locale.ROOT);
        if (withQueries.containsKey(name)) {
          // SQL scopes a WITH name to its query, so an inner f hides an outer f only below it;
          // the chain is traced by name, so each WITH query gets a name of its own.
          throw invalid(
              ViewRule.CTE,
              withItem.name,
              withItem.name.getSimple() + " is declared twice: give each WITH query its own name");
        }
        withQueries.put(name, withItem);
        reads.put(name, new ArrayList<>());
      }
    }

    /**
     * Checks the chain below {@code select}, and each WITH query reached, even one the chain does
     * not read: its reads count toward the rule that each is read once.
     */
    TableName sourceBelow(SqlSelect select) throws InvalidViewException {
      SqlNode from = select.getFrom();
      SqlNodeList renamed = null;
      while (true) {
        if (from == null) {
          throw invalid(ViewRule.SOURCE_TABLE, select, "the query has no FROM clause");
        }
        if (from.getKind() == SqlKind.AS) {
          SqlCall as = (SqlCall) from;
          if (as.operandCount() > 2 && renamed == null) {
            renamed =
                new SqlNodeList(
                    as.getOperandList().subList(2, as.operandCount()), as.getParserPosition());
          }
          from = as.operand(0);
        }
        if (from instanceof SqlJoin join) {
          if (!layers.isEmpty() || renamed != null) {
            // A join below the outer query would put the join under a filter or projection of a
            // subquery, or its columns under a column list, where its keys could no longer be
            // traced to the fact and dimension columns; the outer query is the one place for it.
            throw invalid(
                ViewRule.DIMENSION_JOIN,
                from,
                "join the dimension tables in the outer query's FROM, not "
                    + (renamed != null ? "under a column list" : INSIDE));
          }
          return factBelow(join);
        }
        if (from instanceof SqlWith with) {
          declare(with);
          from = with.body;
          continue;
        }
        if (from instanceof SqlOrderBy orderBy) {
          ViewQueryParser.rejectOrderingAndLimits(
              orderBy.orderList, orderBy.fetch, orderBy.offset, INSIDE);
          from = orderBy.query;
          continue;
        }
        if (from.getKind().belongsTo(SqlKind.SET_QUERY)) {
          throw invalid(ViewRule.SET_OPERATION, from, from.getKind().sql);
        }
        if (from instanceof SqlSelect inner) {
          checkInner(inner);
          layers.add(new Layer(inner, renamed));
          renamed = null;
          select = inner;
          from = inner.getFrom();
          continue;
        }
        if (from instanceof SqlIdentifier table && table.isSimple()) {
          String name = table.getSimple().toLowerCase(Locale.ROOT);
          SqlWithItem withItem = withQueries.get(name);
          if (withItem != null) {
            reads.get(name).add(table);
            if (reads.get(name).size() > 1) {
              throw readTwice(withItem, reads.get(name));
            }
            if (renamed == null && withItem.columnList != null) {
              renamed = withItem.columnList;
            }
            from = withItem.query;
            continue;
          }
        }
        if (!(from instanceof SqlIdentifier table)) {
          throw invalid(ViewRule.SOURCE_TABLE, from, from.toString());
        }
        if (renamed != null) {
          // The source's columns are renamed by position, which only its schema could resolve.
          throw invalid(
              ViewRule.SOURCE_TABLE,
              renamed.get(0),
              "a column list on the source table: rename its columns in a subquery or WITH query");
        }
        if (table.names.size() < 3) {
          throw invalid(
              ViewRule.SOURCE_TABLE,
              from,
              "'"
                  + String.join(".", table.names)
                  + "' must be qualified as catalog.namespace.table"
                  + (withQueries.isEmpty() ? "" : " or name a WITH query"));
        }
        return TableName.of(table.names);
      }
    }

    /**
     * The fact table of the outer query's join tree, which must be left-deep ({@code fact JOIN d1
     * ON ... LEFT JOIN d2 USING (...)}): the left-most table is the fact table, and each join adds
     * one dimension table on its right.
     */
    private TableName factBelow(SqlJoin top) throws InvalidViewException {
      List<ParsedViewQuery.JoinedTable> joined = new ArrayList<>();
      SqlNode node = top;
      while (node instanceof SqlJoin join) {
        JoinKind kind = kindOf(join);
        checkCondition(join);
        SqlIdentifier table = tableOf(join.getRight(), "a dimension");
        SqlParserPos at = table.getParserPosition();
        joined.add(
            0,
            new ParsedViewQuery.JoinedTable(
                TableName.of(table.names), kind, at.getLineNum(), at.getColumnNum()));
        node = join.getLeft();
      }
      SqlIdentifier fact = tableOf(node, "the fact table");
      TableName source = TableName.of(fact.names);
      Set<TableName> seen = new HashSet<>();
      seen.add(source);
      for (ParsedViewQuery.JoinedTable dimension : joined) {
        if (!seen.add(dimension.table())) {
          // Each source is pinned and tracked once per refresh, by table: a table joined twice
          // would need two roles for one table's commits.
          throw new InvalidViewException(
              ViewRule.DIMENSION_JOIN,
              dimension.line(),
              dimension.column(),
              dimension.table()
                  + (dimension.table().equals(source)
                      ? " is the fact table: a view cannot join its fact table to itself"
                      : " is joined twice: join each dimension table once"));
        }
      }
      dimensions.addAll(joined);
      return source;
    }

    private static JoinKind kindOf(SqlJoin join) throws InvalidViewException {
      if (join.isNatural()) {
        throw invalid(
            ViewRule.DIMENSION_JOIN,
            join.isNaturalNode(),
            "NATURAL joins match columns by name: say the keys with ON or USING");
      }
      return switch (join.getJoinType()) {
        case INNER -> JoinKind.INNER;
        case LEFT -> JoinKind.LEFT;
        default ->
            throw invalid(
                ViewRule.DIMENSION_JOIN,
                join.getJoinTypeNode(),
                join.getJoinType().name().replace('_', ' ')
                    + " join: only INNER and LEFT joins keep each fact row's output a function of"
                    + " that row");
      };
    }

    /** ON equalities of columns, joined by AND, or USING columns. */
    private static void checkCondition(SqlJoin join) throws InvalidViewException {
      switch (join.getConditionType()) {
        case USING:
          return;
        case ON:
          checkEqualities(join.getCondition());
          return;
        default:
          throw invalid(
              ViewRule.DIMENSION_JOIN,
              join.getRight(),
              "a join without ON or USING is a cross join: say the keys");
      }
    }

    private static void checkEqualities(SqlNode condition) throws InvalidViewException {
      if (condition.getKind() == SqlKind.AND) {
        for (SqlNode operand : ((SqlCall) condition).getOperandList()) {
          checkEqualities(operand);
        }
        return;
      }
      if (condition.getKind() != SqlKind.EQUALS
          || !(((SqlCall) condition).operand(0) instanceof SqlIdentifier left)
          || !(((SqlCall) condition).operand(1) instanceof SqlIdentifier right)
          || left.isStar()
          || right.isStar()) {
        throw invalid(
            ViewRule.DIMENSION_JOIN,
            condition,
            condition
                + " is not an equality of two columns: filter in WHERE, and join on"
                + " fact_column = dimension_column");
      }
    }

    /** The table {@code node} names, with or without an alias. */
    private static SqlIdentifier tableOf(SqlNode node, String role) throws InvalidViewException {
      SqlNode table = node;
      if (table.getKind() == SqlKind.AS) {
        SqlCall as = (SqlCall) table;
        if (as.operandCount() > 2) {
          throw invalid(
              ViewRule.DIMENSION_JOIN,
              as.operand(2),
              "a column list on " + role + ": name its columns as they are");
        }
        table = as.operand(0);
      }
      if (!(table instanceof SqlIdentifier identifier) || identifier.names.size() < 3) {
        throw invalid(
            ViewRule.DIMENSION_JOIN,
            table,
            role + " must be a table named catalog.namespace.table, not " + table);
      }
      return identifier;
    }

    /**
     * Each WITH query read exactly once: the chain reads the ones it passes; one it does not pass
     * is read by nothing, or by another WITH query off the chain.
     */
    void checkEachWithQueryReadOnce() throws InvalidViewException {
      for (Map.Entry<String, SqlWithItem> entry : withQueries.entrySet()) {
        if (reads.get(entry.getKey()).isEmpty()) {
          // Walked only to count its reads: what it reads must be a chain of its own.
          SqlWithItem unread = entry.getValue();
          Walk offChain = new Walk();
          offChain.withQueries.putAll(withQueries);
          reads.forEach((name, list) -> offChain.reads.put(name, new ArrayList<>(list)));
          SqlNode query = unread.query;
          if (query instanceof SqlSelect select) {
            offChain.sourceBelow(select);
          }
          for (Map.Entry<String, List<SqlIdentifier>> read : offChain.reads.entrySet()) {
            if (read.getValue().size() > 1) {
              throw readTwice(withQueries.get(read.getKey()), read.getValue());
            }
          }
          throw invalid(ViewRule.CTE, unread.name, unread.name.getSimple() + " is never read");
        }
      }
    }

    private static InvalidViewException readTwice(SqlWithItem item, List<SqlIdentifier> reads) {
      return invalid(
          ViewRule.CTE,
          reads.get(reads.size() - 1),
          item.name.getSimple() + " is read " + reads.size() + " times");
    }
  }

  /**
   * A query below the outer one may filter, project and compute columns only: anything else would
   * make the chain mean something no flat SELECT over the source means.
   */
  private static void checkInner(SqlSelect inner) throws InvalidViewException {
    ViewQueryParser.rejectOrderingAndLimits(
        inner.getOrderList(), inner.getFetch(), inner.getOffset(), INSIDE);
    SqlNode distinct = inner.getModifierNode(SqlSelectKeyword.DISTINCT);
    if (distinct != null) {
      throw invalid(ViewRule.DISTINCT, distinct, null);
    }
    ViewQueryParser.rejectNestedQueriesAndWindows(inner);
    if (inner.getGroup() != null && !inner.getGroup().isEmpty()) {
      throw invalid(ViewRule.NESTED_AGGREGATE, inner.getGroup().get(0), "GROUP BY");
    }
    if (inner.getHaving() != null) {
      throw invalid(ViewRule.NESTED_AGGREGATE, inner.getHaving(), "HAVING");
    }
    List<SqlCall> found = new ArrayList<>();
    SqlBasicVisitor<Void> finder =
        new SqlBasicVisitor<>() {
          @Override
          public Void visit(SqlCall call) {
            if (ViewQueryParser.isAggregate(call) || ViewQueryParser.isBucketForm(call)) {
              found.add(call);
              return null;
            }
            return super.visit(call);
          }
        };
    inner.getSelectList().accept(finder);
    if (inner.getWhere() != null) {
      inner.getWhere().accept(finder);
    }
    if (!found.isEmpty()) {
      SqlCall call = found.get(0);
      String name = call.getOperator().getName().toLowerCase(Locale.ROOT);
      throw ViewQueryParser.isAggregate(call)
          ? invalid(ViewRule.NESTED_AGGREGATE, call, name)
          : invalid(
              ViewRule.COMPUTED_BUCKET,
              call,
              name + " in a subquery or WITH query: apply it in the outer query");
    }
  }
}
