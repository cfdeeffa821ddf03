package io.floe.testing.workload;

import io.floe.testing.oracle.Oracle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;

/**
 * The writes a source table sees in production, each its own snapshot: appends, copy-on-write
 * overwrites, whole-file deletes, position and equality deletes, compactions. Written with
 * Iceberg's generic Parquet writers; the tests, {@code floe demo} and {@code floe bench} drive
 * source tables through it.
 */
public final class TableWrites {

  private TableWrites() {}

  /** Appends the records as new data files (one per partition), one snapshot. */
  public static long append(Table table, List<Record> records) {
    List<DataFile> files = write(table, records);
    var append = table.newAppend();
    files.forEach(append::appendFile);
    append.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Appends each record as its own data file, one snapshot: many small files. */
  public static long appendFilePerRow(Table table, List<Record> records) {
    var append = table.newAppend();
    for (Record record : records) {
      write(table, List.of(record)).forEach(append::appendFile);
    }
    append.commit();
    return table.currentSnapshot().snapshotId();
  }

  /**
   * Copy-on-write overwrite: rewrites every data file holding a row that matches, without those
   * rows and with {@code replacements} added, in one overwrite snapshot.
   */
  public static long overwrite(Table table, Predicate<Record> removed, List<Record> replacements) {
    table.refresh();
    var overwrite = table.newOverwrite();
    List<Record> kept = new ArrayList<>(replacements);
    for (FileScanTask task : tasks(table)) {
      List<Record> rows = readFile(table, task, false);
      if (rows.stream().anyMatch(removed)) {
        overwrite.deleteFile(task.file());
        rows.stream().filter(removed.negate()).forEach(kept::add);
      }
    }
    write(table, kept).forEach(overwrite::addFile);
    overwrite.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Deletes whole data files whose rows all match, as a delete snapshot. */
  public static long deleteFiles(Table table, Predicate<Record> allRowsMatch) {
    table.refresh();
    var delete = table.newDelete();
    for (FileScanTask task : tasks(table)) {
      List<Record> rows = readFile(table, task, false);
      if (!rows.isEmpty() && rows.stream().allMatch(allRowsMatch)) {
        delete.deleteFile(task.file());
      }
    }
    delete.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Merge-on-read delete of the matching rows through position delete files. */
  public static long deleteByPosition(Table table, Predicate<Record> removed) {
    table.refresh();
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
    RowDelta delta = table.newRowDelta();
    for (FileScanTask task : tasks(table)) {
      List<Record> rows = readFile(table, task, true);
      List<Long> positions = new ArrayList<>();
      for (Record row : rows) {
        if (removed.test(row)) {
          positions.add((Long) row.getField(MetadataColumns.ROW_POSITION.name()));
        }
      }
      if (positions.isEmpty()) {
        continue;
      }
      EncryptedOutputFile out =
          outputFiles(table).newOutputFile(task.spec(), task.file().partition());
      PositionDeleteWriter<Record> writer =
          factory.newPositionDeleteWriter(out, task.spec(), task.file().partition());
      try (writer) {
        PositionDelete<Record> delete = PositionDelete.create();
        for (long pos : positions) {
          writer.write(delete.set(task.file().location(), pos));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      delta.addDeletes(writer.toDeleteFile());
    }
    delta.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Merge-on-read delete of the rows with the given ids through one equality delete file. */
  public static long deleteByEquality(Table table, List<Long> ids) {
    table.refresh();
    Schema idSchema = table.schema().select("id");
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(table)
            .equalityFieldIds(new int[] {table.schema().findField("id").fieldId()})
            .equalityDeleteRowSchema(idSchema)
            .build();
    // Unpartitioned delete files apply to every partition only in unpartitioned tables; write one
    // per partition that holds rows so that the deletes reach them.
    RowDelta delta = table.newRowDelta();
    Map<String, PartitionKey> partitions = new HashMap<>();
    for (FileScanTask task : tasks(table)) {
      PartitionKey key = new PartitionKey(task.spec(), table.schema());
      for (int i = 0; i < task.spec().fields().size(); i++) {
        key.set(i, task.file().partition().get(i, Object.class));
      }
      partitions.putIfAbsent(key.toPath(), key);
    }
    if (table.spec().isUnpartitioned()) {
      partitions.put("", null);
    }
    for (PartitionKey partition : partitions.values()) {
      EncryptedOutputFile out = outputFiles(table).newOutputFile(table.spec(), partition);
      EqualityDeleteWriter<Record> writer =
          factory.newEqualityDeleteWriter(out, table.spec(), partition);
      try (writer) {
        for (long id : ids) {
          GenericRecord record = GenericRecord.create(idSchema);
          record.setField("id", id);
          writer.write(record);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      DeleteFile file = writer.toDeleteFile();
      delta.addDeletes(file);
    }
    delta.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Compaction: rewrites all live rows into new files, a replace snapshot that changes no row. */
  public static long compact(Table table) {
    table.refresh();
    long snapshotId = table.currentSnapshot().snapshotId();
    List<Record> rows = Oracle.rows(table, snapshotId);
    // Deletes committed before the snapshot compacted here are the ones it folds in.
    RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(snapshotId);
    for (FileScanTask task : tasks(table)) {
      rewrite.deleteFile(task.file());
      task.deletes().forEach(rewrite::deleteFile);
    }
    write(table, rows).forEach(rewrite::addFile);
    rewrite.commit();
    return table.currentSnapshot().snapshotId();
  }

  private static List<FileScanTask> tasks(Table table) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return tasks;
  }

  private static List<Record> readFile(Table table, FileScanTask task, boolean withPosition) {
    Schema projection =
        withPosition
            ? TypeUtil.join(table.schema(), new Schema(MetadataColumns.ROW_POSITION))
            : table.schema();
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        FormatModelRegistry.<Record, Object>readBuilder(
                FileFormat.PARQUET, Record.class, table.io().newInputFile(task.file()))
            .project(projection)
            .build()) {
      records.forEach(r -> rows.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  private static OutputFileFactory outputFiles(Table table) {
    return OutputFileFactory.builderFor(table, 1, System.nanoTime())
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
  }

  /** Writes records into data files, one per partition. */
  public static List<DataFile> write(Table table, List<Record> records) {
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
    OutputFileFactory files = outputFiles(table);
    Map<String, List<Record>> byPartition = new HashMap<>();
    Map<String, PartitionKey> keys = new HashMap<>();
    InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
    for (Record record : records) {
      PartitionKey key = new PartitionKey(table.spec(), table.schema());
      key.partition(wrapper.wrap(record));
      String path = table.spec().isUnpartitioned() ? "" : key.toPath();
      keys.putIfAbsent(path, key);
      byPartition.computeIfAbsent(path, p -> new ArrayList<>()).add(record);
    }
    List<DataFile> written = new ArrayList<>();
    for (Map.Entry<String, List<Record>> partition : byPartition.entrySet()) {
      PartitionKey key = table.spec().isUnpartitioned() ? null : keys.get(partition.getKey());
      DataWriter<Record> writer =
          factory.newDataWriter(files.newOutputFile(table.spec(), key), table.spec(), key);
      try (writer) {
        partition.getValue().forEach(writer::write);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      written.add(writer.toDataFile());
    }
    return written;
  }
}
