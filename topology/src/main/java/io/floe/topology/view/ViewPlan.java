package io.floe.topology.view;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.Granularity;
import java.util.List;
import org.apache.calcite.rel.RelNode;
import org.apache.iceberg.Schema;

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
 */
public record ViewPlan(
    ParsedViewQuery query,
    String bucketColumn,
    Bucketing bucketing,
    Schema sourceSchema,
    Schema outputSchema,
    List<String> requiredColumns,
    RelNode relation) {

  public ViewPlan {
    requiredColumns = List.copyOf(requiredColumns);
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
