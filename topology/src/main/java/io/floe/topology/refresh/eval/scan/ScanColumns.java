package io.floe.topology.refresh.eval.scan;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.StorageKind;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.iceberg.types.Types;
import org.apache.parquet.schema.MessageType;

/**
 * What every file of one recompute is read for: the snapshot's schema, the projected columns and
 * their positions in a source row, and the filter that prunes row groups.
 *
 * @param storage where the files are: on a remote store a small file is read whole once and kept
 *     ({@link ParquetBatches#SMALL_FILE_BYTES})
 * @param tableSchema the schema of the pinned snapshot
 * @param projection the columns the view reads, in snapshot schema order
 * @param positions per projected column, its position in the snapshot schema
 * @param bucketFieldId the field id of the bucket column, whose page statistics prune pages
 * @param ranges the bucket values (of the bucket column) a recompute needs
 * @param nullBucket whether it needs rows whose bucket column is null
 * @param nameMapping the table's name mapping ({@code schema.name-mapping.default}), through which
 *     files written without field ids are read; null when the table has none
 */
public record ScanColumns(
    FileIO io,
    StorageKind storage,
    Schema tableSchema,
    Schema projection,
    int[] positions,
    Expression rowGroupFilter,
    int bucketFieldId,
    BucketRangeSet ranges,
    boolean nullBucket,
    NameMapping nameMapping) {

  public static ScanColumns of(
      FileIO io,
      StorageKind storage,
      Schema tableSchema,
      List<String> columns,
      Expression rowGroupFilter,
      String bucketColumn,
      BucketRangeSet ranges,
      boolean nullBucket,
      NameMapping nameMapping) {
    Schema projection = tableSchema.select(columns);
    List<Types.NestedField> all = tableSchema.columns();
    int[] positions = new int[projection.columns().size()];
    for (int i = 0; i < positions.length; i++) {
      positions[i] = all.indexOf(tableSchema.findField(projection.columns().get(i).fieldId()));
    }
    return new ScanColumns(
        io,
        storage,
        tableSchema,
        projection,
        positions,
        rowGroupFilter,
        tableSchema.findField(bucketColumn).fieldId(),
        ranges,
        nullBucket,
        nameMapping);
  }

  /**
   * A file's schema with the field ids its columns are read by, as Iceberg's Parquet reader finds
   * them: the file's own ids; in a file written without ids (tables made by {@code migrate} or
   * {@code add_files}), the ids the table's name mapping gives the column names; without a mapping,
   * Iceberg's fallback ids, the columns' positions (1, 2, ...).
   */
  MessageType withIds(MessageType fileSchema) {
    if (ParquetSchemaUtil.hasIds(fileSchema)) {
      return fileSchema;
    }
    return nameMapping == null
        ? ParquetSchemaUtil.addFallbackIds(fileSchema)
        : ParquetSchemaUtil.applyNameMapping(fileSchema, nameMapping);
  }
}
