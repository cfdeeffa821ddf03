package io.floe.topology.view;

import io.floe.topology.view.sql.ViewQueryParser;

/**
 * The rules a view query must follow, each named in the error that rejects a query. Every rule
 * exists because Floe could not otherwise keep the view exact by recomputing whole buckets (DESIGN
 * §1, §3.1).
 */
public enum ViewRule {
  SYNTAX("syntax error"),
  QUERY_TOO_LONG(
      "a view query may be at most " + ViewQueryParser.MAX_QUERY_LENGTH + " characters long"),
  TOO_DEEPLY_NESTED(
      "a view query may nest expressions at most "
          + ViewQueryParser.MAX_NESTING
          + " levels deep (parentheses, or operators chained without them)"),
  NOT_A_QUERY("a view query must be a SELECT"),
  DIMENSION_JOIN(
      "a view may join its bucketed fact table, in its outer query, only to dimension tables, each"
          + " an INNER or LEFT join on equalities between columns of the fact table and of the"
          + " dimension: every bucket is then a function of its fact rows and the pinned dimensions"),
  CTE(
      "each WITH query must be read exactly once, by the next query of the chain: a view reads its"
          + " one source table once"),
  SUBQUERY(
      "subqueries in expressions are not supported (a subquery in FROM or a WITH query may filter"
          + " and project the source)"),
  NESTED_AGGREGATE(
      "a subquery or WITH query must not aggregate (GROUP BY, HAVING or an aggregate function):"
          + " Floe recomputes buckets of the view's own aggregation from source rows"),
  DISTINCT("SELECT DISTINCT is not supported in a subquery or WITH query"),
  COMPUTED_BUCKET(
      "the bucket must be computed by the outer query from a column that subqueries and WITH"
          + " queries pass through unchanged (renamed at most): Floe finds dirty buckets from the"
          + " source column's file statistics"),
  SET_OPERATION("set operations (UNION, INTERSECT, EXCEPT) are not supported"),
  SOURCE_TABLE("the source must be one table named catalog.namespace.table"),
  SELECT_STAR("SELECT * is not supported: list the output columns"),
  NO_GROUP_BY("a view must GROUP BY a date_trunc bucket (or a date_bin one)"),
  GROUPING_SETS("GROUPING SETS, ROLLUP and CUBE are not supported"),
  NO_BUCKET("no date_trunc or date_bin bucket among the GROUP BY keys"),
  BUCKET_ONLY_IN_WHERE("the bucket appears only in WHERE: it must be a GROUP BY key"),
  WRAPPED_BUCKET(
      "a bucket must not be wrapped in arithmetic or another function, except in Trino's"
          + " n-minute idiom: Floe cannot tell the bucket width"),
  MULTIPLE_GRANULARITIES("a view has exactly one granularity and one bucket column"),
  UNSUPPORTED_GRANULARITY("unsupported date_trunc unit"),
  UNSUPPORTED_STRIDE(
      "a bucket stride must be whole minutes, hours or days (in the n-minute idiom, a divisor of"
          + " the hour or the day)"),
  BUCKET_ARGUMENT("a bucket must truncate a plain column of the source table"),
  BUCKET_NOT_SELECTED("the bucket must be an output column"),
  BUCKET_COLUMN_TYPE("the bucket column must be a date or timestamp"),
  UNALIASED_COLUMN("computed output columns need an alias (expression AS name)"),
  DUPLICATE_COLUMN("output column names must be unique"),
  ORDER_BY("ORDER BY is not supported: a view is a table, its rows have no order"),
  LIMIT("LIMIT and FETCH are not supported"),
  OFFSET("OFFSET is not supported"),
  WINDOW_FUNCTION("window functions are not supported"),
  NON_DETERMINISTIC("non-deterministic functions are not allowed"),
  UNKNOWN_COLUMN("unknown column"),
  UNKNOWN_FUNCTION("unknown function"),
  INVALID_ARGUMENT("invalid function argument"),
  UNSUPPORTED_TYPE("unsupported output column type"),
  INVALID_QUERY("invalid query");

  private final String description;

  ViewRule(String description) {
    this.description = description;
  }

  /** What the rule requires, as written in error messages. */
  public String description() {
    return description;
  }
}
