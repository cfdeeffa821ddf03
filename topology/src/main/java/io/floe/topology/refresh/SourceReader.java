package io.floe.topology.refresh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;

/**
 * Reads rows of one pinned table snapshot (DESIGN §3.5): Iceberg plans the files that may hold rows
 * matching the filter, each file is read with only the requested columns, and its position and
 * equality delete files are applied. Rows come out as native values (see {@link IcebergValues}) in
 * an array with one slot per column of the snapshot's schema.
 */
final class SourceReader {

  /** What a read cost. */
  record Stats(long rowsRead, long bytesRead, int filesRead) {}

  private final Table table;
  private final long snapshotId;
  private final Schema schema;
  private final Schema projection;
  private final Expression filter;
  private final Long appendedAfter;

  /**
   * @param schema the schema of the snapshot, whose column positions index the rows
   * @param columns the columns to read
   */
  SourceReader(
      Table table, long snapshotId, Schema schema, List<String> columns, Expression filter) {
    this(table, snapshotId, schema, columns, filter, null);
  }

  private SourceReader(
      Table table,
      long snapshotId,
      Schema schema,
      List<String> columns,
      Expression filter,
      Long appendedAfter) {
    this.table = table;
    this.snapshotId = snapshotId;
    this.schema = schema;
    this.projection = schema.select(columns);
    this.filter = filter;
    this.appendedAfter = appendedAfter;
  }

  /**
   * A reader of only the rows that the append snapshots after {@code fromExclusive} up to this
   * reader's snapshot added. Iceberg's incremental append scan silently skips every other kind of
   * snapshot: the caller must know that the snapshots in between only appended or compacted.
   */
  SourceReader appendedAfter(long fromExclusive) {
    return new SourceReader(table, snapshotId, schema, projectedNames(), filter, fromExclusive);
  }

  private List<String> projectedNames() {
    return projection.columns().stream().map(Types.NestedField::name).toList();
  }

  private CloseableIterable<FileScanTask> planFiles() {
    if (appendedAfter == null) {
      return table.newScan().useSnapshot(snapshotId).filter(filter).project(projection).planFiles();
    }
    return table
        .newIncrementalAppendScan()
        .fromSnapshotExclusive(appendedAfter)
        .toSnapshot(snapshotId)
        .filter(filter)
        .project(projection)
        .planFiles();
  }

  /** Reads every row that may match the filter; the caller applies the exact condition. */
  Stats read(Consumer<Object[]> rows) {
    List<Types.NestedField> columns = schema.columns();
    int[] positions = new int[projection.columns().size()];
    for (int i = 0; i < positions.length; i++) {
      positions[i] = columns.indexOf(schema.findField(projection.columns().get(i).fieldId()));
    }
    long rowsRead = 0;
    long bytesRead = 0;
    int filesRead = 0;
    try (CloseableIterable<FileScanTask> tasks = planFiles()) {
      for (FileScanTask task : tasks) {
        filesRead++;
        bytesRead += task.length();
        try (CloseableIterable<Record> records = open(task);
            CloseableIterator<Record> it = records.iterator()) {
          while (it.hasNext()) {
            Record record = it.next();
            Object[] row = new Object[columns.size()];
            for (int i = 0; i < positions.length; i++) {
              Types.NestedField field = columns.get(positions[i]);
              row[positions[i]] = IcebergValues.toNative(field.type(), record.get(i));
            }
            rowsRead++;
            rows.accept(row);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read " + table.name() + " at snapshot " + snapshotId, e);
    }
    return new Stats(rowsRead, bytesRead, filesRead);
  }

  /** Opens one planned file with its deletes applied; record fields follow the projection. */
  private CloseableIterable<Record> open(FileScanTask task) {
    DeleteFilter<Record> deletes =
        new GenericDeleteFilter(table.io(), task, table.schemas().get(schemaId()), projection);
    Schema readSchema = deletes.requiredSchema();
    Map<Integer, ?> constants =
        PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
    CloseableIterable<Record> records =
        FormatModelRegistry.<Record, Object>readBuilder(
                task.file().format(), Record.class, table.io().newInputFile(task.file()))
            .project(readSchema)
            .idToConstant(constants)
            .split(task.start(), task.length())
            .build();
    CloseableIterable<Record> live = deletes.filter(records);
    if (readSchema.columns().size() == projection.columns().size()) {
      return live;
    }
    // The delete filter needed extra columns; keep only the projected ones, in order.
    int width = projection.columns().size();
    return CloseableIterable.transform(
        live,
        record -> {
          org.apache.iceberg.data.GenericRecord trimmed =
              org.apache.iceberg.data.GenericRecord.create(projection);
          for (int i = 0; i < width; i++) {
            trimmed.set(i, record.getField(projection.columns().get(i).name()));
          }
          return trimmed;
        });
  }

  private int schemaId() {
    Integer id = table.snapshot(snapshotId).schemaId();
    return id == null ? table.schema().schemaId() : id;
  }
}
