package io.floe.topology.refresh.eval.scan;

import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.formats.ReadBuilder;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.util.PartitionUtil;

/**
 * Reads a planned file through Iceberg's generic reader into batch vectors: the exact path for
 * everything the direct Parquet reader leaves alone (equality deletes, other file formats, nested
 * and decimal columns, columns a file lacks). Position and equality deletes are applied by
 * Iceberg's delete filter; row groups are pruned by the read filter; files written without field
 * ids are read through the table's name mapping, as {@link ParquetBatches} reads them.
 */
public final class RecordBatches {

  private RecordBatches() {}

  /** Reads the task into {@code sink}; returns the live rows read. */
  public static long read(ScanColumns columns, FileScanTask task, BatchSink sink) {
    Schema projection = columns.projection();
    DeleteFilter<Record> deletes =
        new GenericDeleteFilter(columns.io(), task, columns.tableSchema(), projection);
    Schema readSchema = deletes.requiredSchema();
    Map<Integer, ?> constants =
        PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
    int width = projection.columns().size();
    int[] fieldPositions = new int[width];
    for (int i = 0; i < width; i++) {
      fieldPositions[i] =
          readSchema.columns().indexOf(readSchema.findField(projection.columns().get(i).fieldId()));
    }
    Type[] types = new Type[width];
    Vector[] vectors = new Vector[width];
    for (int i = 0; i < width; i++) {
      types[i] = projection.columns().get(i).type();
      vectors[i] = sink.vectors()[columns.positions()[i]];
    }
    long rows = 0;
    int n = 0;
    ReadBuilder<Record, Object> builder =
        FormatModelRegistry.<Record, Object>readBuilder(
                task.file().format(), Record.class, columns.io().newInputFile(task.file()))
            .project(readSchema)
            .idToConstant(constants)
            .split(task.start(), task.length())
            .filter(columns.rowGroupFilter());
    // No container reuse: nested values (structs, lists, maps) may be group keys.
    if (columns.nameMapping() != null) {
      builder.withNameMapping(columns.nameMapping());
    }
    try (CloseableIterable<Record> records = deletes.filter(builder.build())) {
      for (Record record : records) {
        for (int i = 0; i < width; i++) {
          vectors[i].set(n, IcebergValues.toNative(types[i], record.get(fieldPositions[i])));
        }
        if (++n == Vectors.BATCH) {
          sink.accept(n);
          rows += n;
          n = 0;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + task.file().location(), e);
    }
    if (n > 0) {
      sink.accept(n);
      rows += n;
    }
    return rows;
  }
}
