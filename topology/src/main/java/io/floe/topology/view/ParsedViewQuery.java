package io.floe.topology.view;

import io.floe.topology.bucket.Granularity;
import java.util.List;

/**
 * What Floe derives from a view query's structure alone, before it is checked against the source
 * table's schema.
 *
 * @param sql the query text
 * @param source the one source table
 * @param bucketColumn the source column inside {@code date_trunc}, as written
 * @param granularity the {@code date_trunc} unit
 * @param bucketOutput the output column holding the bucket
 * @param outputColumns every output column, in order
 * @param groupKeys the output columns that are GROUP BY keys besides the bucket, in GROUP BY order
 * @param bucketLine line of the bucket column reference in the query, for later errors
 * @param bucketColumnPosition column of the bucket column reference in the query
 * @param dimensions the dimension tables the source (the fact table) is joined to, in join order;
 *     empty for a view of one table
 */
public record ParsedViewQuery(
    String sql,
    TableName source,
    String bucketColumn,
    Granularity granularity,
    String bucketOutput,
    List<String> outputColumns,
    List<String> groupKeys,
    int bucketLine,
    int bucketColumnPosition,
    List<JoinedTable> dimensions) {

  public ParsedViewQuery {
    outputColumns = List.copyOf(outputColumns);
    groupKeys = List.copyOf(groupKeys);
    dimensions = List.copyOf(dimensions);
  }

  /**
   * A dimension table as the query joins it, before its schema is known.
   *
   * @param table the dimension table
   * @param kind how it is joined
   * @param line line of the table's name in the query, for later errors about this join
   * @param column column of the table's name in the query
   */
  public record JoinedTable(TableName table, JoinKind kind, int line, int column) {}
}
