package io.floe.topology.detect;

import io.floe.topology.iceberg.ManifestWork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * The live data files of a snapshot that given delete files apply to, matched as Iceberg's {@code
 * DeleteFileIndex} matches them at planning time, without planning the table: only the data
 * manifests whose partition summaries can hold a matching file are read.
 *
 * <ul>
 *   <li>A deletion vector names its data file.
 *   <li>A position delete file applies to data files of its spec and partition whose data sequence
 *       number is at most its own; when it references one data file (its {@code file_path} bounds
 *       are equal, or {@code referenced_data_file} is set) only to that one.
 *   <li>An equality delete file applies to data files whose data sequence number is below its own:
 *       of its spec and partition, or of every spec when its spec is unpartitioned (a global
 *       delete), and only where the column statistics of the equality fields can overlap.
 * </ul>
 */
final class DeleteTargets {

  private final Table table;
  private final Map<Integer, PartitionSpec> specs;
  private final Map<Integer, Types.NestedField> fields;
  private final Map<Integer, Comparator<StructLike>> partitionOrders = new HashMap<>();

  private DeleteTargets(Table table) {
    this.table = table;
    this.specs = table.specs();
    this.fields = Schema.indexFields(table.schemas().values());
  }

  /**
   * The live data files of {@code snapshot}, with statistics, that any of {@code deletes} applies
   * to. Delete files without statistics (removed entries carry none) match conservatively.
   */
  static List<DataFile> dataFilesAffectedBy(
      Table table, Snapshot snapshot, List<DeleteFile> deletes, ManifestWork manifests) {
    return new DeleteTargets(table).affected(snapshot, deletes, manifests);
  }

  private List<DataFile> affected(
      Snapshot snapshot, List<DeleteFile> deletes, ManifestWork manifests) {
    List<DeleteFile> global = new ArrayList<>();
    Map<Integer, List<DeleteFile>> scoped = new HashMap<>();
    for (DeleteFile delete : deletes) {
      if (isGlobal(delete)) {
        global.add(delete);
      } else {
        scoped.computeIfAbsent(delete.specId(), id -> new ArrayList<>()).add(delete);
      }
    }
    // Which deletes each manifest may hold data files of, from its summaries alone; on a remote
    // store the manifests to read are then read at once, before the walk reads them in order.
    Map<ManifestFile, List<DeleteFile>> toRead = new LinkedHashMap<>();
    for (ManifestFile manifest : snapshot.dataManifests(table.io())) {
      if (!manifest.hasAddedFiles() && !manifest.hasExistingFiles()) {
        continue;
      }
      List<DeleteFile> candidates = new ArrayList<>();
      for (DeleteFile delete : global) {
        if (mayHoldOlderData(manifest, delete)) {
          candidates.add(delete);
        }
      }
      PartitionSpec spec = specs.get(manifest.partitionSpecId());
      for (DeleteFile delete : scoped.getOrDefault(manifest.partitionSpecId(), List.of())) {
        if (mayHoldOlderData(manifest, delete) && mayHoldPartition(manifest, spec, delete)) {
          candidates.add(delete);
        }
      }
      if (!candidates.isEmpty()) {
        toRead.put(manifest, candidates);
      }
    }
    manifests.readAhead(table, toRead::keySet);
    List<DataFile> affected = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Map.Entry<ManifestFile, List<DeleteFile>> entry : toRead.entrySet()) {
      ManifestFile manifest = entry.getKey();
      List<DeleteFile> candidates = entry.getValue();
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, table.io(), specs)) {
        for (DataFile file : reader) {
          if (!seen.contains(file.location()) && appliesToAny(candidates, file)) {
            seen.add(file.location());
            affected.add(file.copy());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read manifest " + manifest.path(), e);
      }
    }
    return affected;
  }

  private boolean isGlobal(DeleteFile delete) {
    return delete.content() == FileContent.EQUALITY_DELETES
        && specs.get(delete.specId()).isUnpartitioned();
  }

  /** Whether the manifest may list a data file old enough for {@code delete} to apply to. */
  private static boolean mayHoldOlderData(ManifestFile manifest, DeleteFile delete) {
    long deleteSequence = sequence(delete.dataSequenceNumber());
    long oldest = manifest.minSequenceNumber();
    return delete.content() == FileContent.EQUALITY_DELETES
        ? oldest < deleteSequence
        : oldest <= deleteSequence;
  }

  /** Whether the manifest's partition summaries can hold the delete file's partition. */
  private static boolean mayHoldPartition(
      ManifestFile manifest, PartitionSpec spec, DeleteFile delete) {
    List<ManifestFile.PartitionFieldSummary> summaries = manifest.partitions();
    if (summaries == null || spec.isUnpartitioned()) {
      return true;
    }
    StructLike partition = delete.partition();
    List<Types.NestedField> partitionFields = spec.partitionType().fields();
    for (int i = 0; i < partitionFields.size() && i < summaries.size(); i++) {
      Type type = partitionFields.get(i).type();
      Object value = partition.get(i, Object.class);
      ManifestFile.PartitionFieldSummary summary = summaries.get(i);
      if (value == null) {
        if (!summary.containsNull()) {
          return false;
        }
        continue;
      }
      if ((value instanceof Double d && d.isNaN()) || (value instanceof Float f && f.isNaN())) {
        continue;
      }
      if (summary.lowerBound() == null || summary.upperBound() == null) {
        // Bounds are missing only when every value is null or NaN.
        return false;
      }
      Comparator<Object> order = Comparators.forType(type.asPrimitiveType());
      Object lower = Conversions.fromByteBuffer(type, summary.lowerBound());
      Object upper = Conversions.fromByteBuffer(type, summary.upperBound());
      if (order.compare(value, lower) < 0 || order.compare(value, upper) > 0) {
        return false;
      }
    }
    return true;
  }

  private boolean appliesToAny(List<DeleteFile> deletes, DataFile file) {
    for (DeleteFile delete : deletes) {
      if (appliesTo(delete, file)) {
        return true;
      }
    }
    return false;
  }

  private boolean appliesTo(DeleteFile delete, DataFile file) {
    long dataSequence = sequence(file.dataSequenceNumber());
    long deleteSequence = sequence(delete.dataSequenceNumber());
    if (delete.content() == FileContent.POSITION_DELETES) {
      if (ContentFileUtil.isDV(delete)) {
        return file.location().equals(delete.referencedDataFile());
      }
      if (dataSequence > deleteSequence || !samePartition(delete, file)) {
        return false;
      }
      String referenced = ContentFileUtil.referencedDataFileLocation(delete);
      return referenced == null || referenced.equals(file.location());
    }
    if (dataSequence >= deleteSequence) {
      return false;
    }
    if (!isGlobal(delete) && !samePartition(delete, file)) {
      return false;
    }
    return mayHoldDeletedValues(file, delete);
  }

  private boolean samePartition(DeleteFile delete, DataFile file) {
    if (delete.specId() != file.specId()) {
      return false;
    }
    Comparator<StructLike> order =
        partitionOrders.computeIfAbsent(
            delete.specId(), id -> Comparators.forType(specs.get(id).partitionType()));
    return order.compare(delete.partition(), file.partition()) == 0;
  }

  /**
   * Whether the data file may hold a row the equality delete removes, from the statistics of the
   * equality fields: Iceberg's {@code canContainEqDeletesForFile}.
   */
  private boolean mayHoldDeletedValues(DataFile file, DeleteFile delete) {
    for (int id : delete.equalityFieldIds()) {
      Types.NestedField field = fields.get(id);
      if (field == null || !field.type().isPrimitiveType()) {
        // No statistics for nested types, or a dropped column: the delete may match.
        continue;
      }
      boolean dataHasNulls = containsNull(file.nullValueCounts(), field);
      boolean deleteHasNulls = containsNull(delete.nullValueCounts(), field);
      if (dataHasNulls && deleteHasNulls) {
        continue;
      }
      boolean dataAllNull = allNull(file.nullValueCounts(), file.valueCounts(), field);
      boolean deleteAllNull = allNull(delete.nullValueCounts(), delete.valueCounts(), field);
      if ((dataAllNull && allNonNull(delete.nullValueCounts(), field))
          || (deleteAllNull && allNonNull(file.nullValueCounts(), field))) {
        return false;
      }
      ByteBuffer dataLower = value(file.lowerBounds(), id);
      ByteBuffer dataUpper = value(file.upperBounds(), id);
      ByteBuffer deleteLower = value(delete.lowerBounds(), id);
      ByteBuffer deleteUpper = value(delete.upperBounds(), id);
      if (dataLower == null || dataUpper == null || deleteLower == null || deleteUpper == null) {
        continue;
      }
      Type.PrimitiveType type = field.type().asPrimitiveType();
      Comparator<Object> order = Comparators.forType(type);
      Object dataMin = Conversions.fromByteBuffer(type, dataLower);
      Object dataMax = Conversions.fromByteBuffer(type, dataUpper);
      Object deleteMin = Conversions.fromByteBuffer(type, deleteLower);
      Object deleteMax = Conversions.fromByteBuffer(type, deleteUpper);
      if (order.compare(dataMin, deleteMax) > 0 || order.compare(deleteMin, dataMax) > 0) {
        return false;
      }
    }
    return true;
  }

  private static boolean containsNull(Map<Integer, Long> nullCounts, Types.NestedField field) {
    if (field.isRequired()) {
      return false;
    }
    Long nulls = value(nullCounts, field.fieldId());
    return nulls == null || nulls > 0;
  }

  private static boolean allNull(
      Map<Integer, Long> nullCounts, Map<Integer, Long> valueCounts, Types.NestedField field) {
    if (field.isRequired()) {
      return false;
    }
    Long nulls = value(nullCounts, field.fieldId());
    Long values = value(valueCounts, field.fieldId());
    return nulls != null && nulls.equals(values);
  }

  private static boolean allNonNull(Map<Integer, Long> nullCounts, Types.NestedField field) {
    if (field.isRequired()) {
      return true;
    }
    Long nulls = value(nullCounts, field.fieldId());
    return nulls != null && nulls <= 0;
  }

  private static <T> T value(Map<Integer, T> map, int id) {
    return map == null ? null : map.get(id);
  }

  private static long sequence(Long sequenceNumber) {
    return sequenceNumber == null ? 0 : sequenceNumber;
  }
}
