package io.floe.topology.refresh;

import io.floe.topology.iceberg.HadoopConfigurations;
import io.floe.topology.iceberg.IcebergValues;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.InternalWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FanoutDataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Writes rows into new Parquet data files of a target table, one set of files per partition of the
 * table's current spec. Files are only added to the table by a later commit.
 *
 * <p>Rows are written in Iceberg's internal representation (Iceberg's {@code InternalWriter}): view
 * output rows as they are, since Floe's native values are that representation (microseconds, days),
 * and generic records of kept rows through Iceberg's {@link InternalRecordWrapper}. The generic
 * writer converted every timestamp to a {@code java.time} value and back.
 */
final class TargetWriter implements Closeable {

  private final PartitionSpec spec;
  private final FanoutDataWriter<StructLike> writer;
  private final PartitionKey partitionKey;

  /**
   * The target column positions of the partition's source columns, or null when one is not a
   * top-level column, and their values in the row the partition key was last computed for: rows
   * come sorted by bucket, so most rows share the previous row's partition, and a time transform is
   * dear to compute per row.
   */
  private final int[] partitionSources;

  private final Object[] partitionSourceValues;
  private boolean partitionKnown;
  private final InternalRecordWrapper wrapper;
  private final int[] targetPositions;
  private final org.apache.iceberg.types.Type[] outputTypes;
  private final Object[] outputValues;
  private final StructLike outputRow;
  private long rows;
  private boolean closed;

  /**
   * @param outputSchema the columns of the rows given to {@link #writeOutputRow}, in order
   * @param operationId part of every file name, so that the files of a refresh are recognisable
   */
  TargetWriter(Table target, Schema outputSchema, String operationId) {
    Schema schema = target.schema();
    this.spec = target.spec();
    OutputFileFactory names =
        OutputFileFactory.builderFor(target, 0, 0)
            .format(FileFormat.PARQUET)
            .operationId(operationId + "-" + UUID.randomUUID())
            .build();
    long targetFileSize =
        PropertyUtil.propertyAsLong(
            target.properties(),
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    this.writer =
        new FanoutDataWriter<>(new InternalFiles(target), names, target.io(), targetFileSize);
    this.partitionKey = spec.isUnpartitioned() ? null : new PartitionKey(spec, schema);
    this.partitionSources = partitionSources(spec, schema);
    this.partitionSourceValues =
        partitionSources == null ? null : new Object[partitionSources.length];
    this.wrapper = new InternalRecordWrapper(schema.asStruct());
    List<Types.NestedField> outputColumns = outputSchema.columns();
    this.targetPositions = new int[outputColumns.size()];
    this.outputTypes = new org.apache.iceberg.types.Type[outputColumns.size()];
    List<Types.NestedField> targetColumns = schema.columns();
    for (int i = 0; i < outputColumns.size(); i++) {
      Types.NestedField column = schema.findField(outputColumns.get(i).name());
      if (column == null) {
        throw new IllegalStateException(
            "Target " + target.name() + " has no column " + outputColumns.get(i).name());
      }
      targetPositions[i] = targetColumns.indexOf(column);
      outputTypes[i] = column.type();
    }
    this.outputValues = new Object[targetColumns.size()];
    this.outputRow = new ArrayRow(outputValues);
  }

  /**
   * Floe's defaults for writing a target's files, where the table sets nothing else: no Parquet
   * dictionary for double and float columns. Those hold a view's measures (sums, averages, prices);
   * Parquet keeps a dictionary that is smaller than the plain values before compression, but the
   * compressed plain values come out smaller still (the backfill bench's OHLCV files by 15%), and
   * building the dictionaries was half the time of writing the files.
   */
  static Map<String, String> writerDefaults(Table target) {
    Map<String, String> defaults = new HashMap<>();
    for (Types.NestedField column : target.schema().columns()) {
      org.apache.iceberg.types.Type.TypeID type = column.type().typeId();
      String key = TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + column.name();
      if ((type == org.apache.iceberg.types.Type.TypeID.DOUBLE
              || type == org.apache.iceberg.types.Type.TypeID.FLOAT)
          && !target.properties().containsKey(key)) {
        defaults.put(key, "false");
      }
    }
    return defaults;
  }

  /**
   * Writes one view output row of native values. One row serves every call: the Parquet writer has
   * taken its values when {@code write} returns.
   */
  void writeOutputRow(Object[] row) {
    for (int i = 0; i < row.length; i++) {
      outputValues[targetPositions[i]] = IcebergValues.toInternal(outputTypes[i], row[i]);
    }
    write(outputRow);
  }

  /** Writes a record of the target schema as it is, for rows kept from a rewritten file. */
  void write(Record record) {
    write(wrapper.wrap(record));
  }

  private void write(StructLike row) {
    if (partitionKey == null) {
      writer.write(row, spec, null);
    } else {
      if (!samePartitionSources(row)) {
        partitionKey.partition(row);
      }
      writer.write(row, spec, partitionKey);
    }
    rows++;
  }

  /**
   * Whether the row's partition source values are those the partition key was computed for;
   * remembers the row's when not.
   */
  private boolean samePartitionSources(StructLike row) {
    if (partitionSources == null) {
      return false;
    }
    boolean same = partitionKnown;
    for (int i = 0; i < partitionSources.length; i++) {
      Object value = row.get(partitionSources[i], Object.class);
      if (same && !Objects.equals(value, partitionSourceValues[i])) {
        same = false;
      }
      partitionSourceValues[i] = value;
    }
    partitionKnown = true;
    return same;
  }

  /** Positions of the spec's source columns in the schema, or null when one is not top-level. */
  private static int[] partitionSources(PartitionSpec spec, Schema schema) {
    if (spec.isUnpartitioned()) {
      return null;
    }
    List<Types.NestedField> columns = schema.columns();
    int[] positions = new int[spec.fields().size()];
    for (int i = 0; i < positions.length; i++) {
      positions[i] = columns.indexOf(schema.findField(spec.fields().get(i).sourceId()));
      if (positions[i] < 0) {
        return null;
      }
    }
    return positions;
  }

  long rowsWritten() {
    return rows;
  }

  /**
   * The files this writer wrote, once closed, to delete after a failure; empty when it could not
   * close.
   */
  List<DataFile> written() {
    try {
      return writer.result().dataFiles();
    } catch (RuntimeException e) {
      return List.of();
    }
  }

  /** Closes the open files and returns them. */
  List<DataFile> complete() {
    close();
    return writer.result().dataFiles();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      writer.close();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot close target data files", e);
    }
  }

  /** A row of internal values by target column position. */
  private record ArrayRow(Object[] values) implements StructLike {
    @Override
    public int size() {
      return values.length;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      return javaClass.cast(values[pos]);
    }

    @Override
    public <T> void set(int pos, T value) {
      values[pos] = value;
    }
  }

  /**
   * Parquet data files of rows in Iceberg's internal representation, with the table's properties,
   * metrics and sort order, and Floe's {@link #writerDefaults}; each writer's Hadoop configuration
   * is made with Hadoop's defaults from memory ({@link HadoopConfigurations#withDefaultsInMemory}).
   * Floe writes delete files elsewhere.
   */
  private static final class InternalFiles implements FileWriterFactory<StructLike> {
    private final Table target;
    private final Map<String, String> defaults;

    InternalFiles(Table target) {
      this.target = target;
      this.defaults = writerDefaults(target);
    }

    @Override
    public DataWriter<StructLike> newDataWriter(
        EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
      try {
        return HadoopConfigurations.withDefaultsInMemory(
            () ->
                Parquet.writeData(file)
                    .forTable(target)
                    .setAll(defaults)
                    .createWriterFunc(
                        type -> InternalWriter.create(target.schema().asStruct(), type))
                    .withSpec(spec)
                    .withPartition(partition)
                    .withSortOrder(target.sortOrder())
                    .overwrite()
                    .build());
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot create a data file of " + target.name(), e);
      }
    }

    @Override
    public EqualityDeleteWriter<StructLike> newEqualityDeleteWriter(
        EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
      throw new UnsupportedOperationException("Target writers write data files only");
    }

    @Override
    public PositionDeleteWriter<StructLike> newPositionDeleteWriter(
        EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
      throw new UnsupportedOperationException("Target writers write data files only");
    }
  }
}
