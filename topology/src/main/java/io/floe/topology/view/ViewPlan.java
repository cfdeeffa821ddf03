package io.floe.topology.view;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.Granularity;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.calcite.rel.RelNode;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Everything Floe derives from a valid view query checked against its source table: the bucket
 * arithmetic, the target schema and the source columns a refresh must read.
 *
 * @param query the structure of the query
 * @param bucketColumn the source column inside {@code date_trunc}, spelled as in the source schema
 * @param bucketing bucket arithmetic of the view, in its time zone
 * @param sourceSchema the source table's schema the plan was bound to
 * @param outputSchema the schema of the target table, columns in output order
 * @param requiredColumns the source columns the query reads, in source schema order
 * @param relation the validated query as a relational plan over a scan of the whole source row
 *     (with dimensions: over the source row followed by each dimension's row, in join order)
 * @param dimensions the dimension tables joined to the source, in join order; empty for a view of
 *     one table
 */
public record ViewPlan(
    ParsedViewQuery query,
    String bucketColumn,
    Bucketing bucketing,
    Schema sourceSchema,
    Schema outputSchema,
    List<String> requiredColumns,
    RelNode relation,
    List<Dimension> dimensions) {

  public ViewPlan {
    requiredColumns = List.copyOf(requiredColumns);
    dimensions = List.copyOf(dimensions);
  }

  /**
   * The Iceberg type a value of a SQL type of the plan is stored as, as the target stores an output
   * column of that type; empty when Iceberg cannot store it.
   */
  public static java.util.Optional<org.apache.iceberg.types.Type> storedType(
      org.apache.calcite.rel.type.RelDataType type) {
    return io.floe.topology.view.sql.ViewQueryBinder.storedType(type);
  }

  /**
   * A dimension table joined to the view's fact table (its source), checked against its schema.
   *
   * @param table the dimension table
   * @param kind how it is joined
   * @param schema the dimension's schema the plan was bound to
   * @param factKeys the fact (source) columns of the join's equalities, in the order of the ON
   *     clause (or USING list)
   * @param keys the dimension columns each fact key equals, in the same order
   * @param columns the dimension columns the query reads above the join (what the dimension
   *     contributes to the view's rows), in schema order
   */
  public record Dimension(
      TableName table,
      JoinKind kind,
      Schema schema,
      List<String> factKeys,
      List<String> keys,
      List<String> columns) {
    public Dimension {
      factKeys = List.copyOf(factKeys);
      keys = List.copyOf(keys);
      columns = List.copyOf(columns);
    }

    /** The dimension columns a hash table of it holds: its keys and the columns it contributes. */
    public List<String> requiredColumns() {
      Set<String> read = new HashSet<>(keys);
      read.addAll(columns);
      List<String> ordered = new ArrayList<>();
      for (Types.NestedField field : schema.columns()) {
        if (read.contains(field.name())) {
          ordered.add(field.name());
        }
      }
      return ordered;
    }

    /**
     * The field ids and types of the dimension columns the view reads, in {@link #schema}: what the
     * bookmark records of this source, as {@link ViewPlan#sourceColumns} of the fact table.
     */
    public SourceColumns sourceColumns() {
      return SourceColumns.of(schema, requiredColumns());
    }
  }

  /** Whether the view joins dimension tables to its source. */
  public boolean hasDimensions() {
    return !dimensions.isEmpty();
  }

  public TableName source() {
    return query.source();
  }

  public Granularity granularity() {
    return query.granularity();
  }

  public String bucketOutput() {
    return query.bucketOutput();
  }

  public List<String> groupKeys() {
    return query.groupKeys();
  }

  /** The field ids and types of the source columns the query reads, in {@link #sourceSchema}. */
  public SourceColumns sourceColumns() {
    return SourceColumns.of(sourceSchema, requiredColumns);
  }
}
