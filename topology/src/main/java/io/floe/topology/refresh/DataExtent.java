package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

/**
 * Where the rows of a pinned source snapshot lie in bucket terms, from manifest statistics alone
 * (no data file is read): each live data file contributes {@code [floor(min), floor(max) + 1
 * bucket)} of its bucket-column bounds with its record count, and its nulls to the null bucket.
 * {@link ChunkPlan} sizes chunks by it. Rows removed by delete files still count: the extent
 * over-estimates, never under-estimates.
 *
 * <p>A file without bounds for the bucket column (and not all null) makes the extent unknown: its
 * rows could be anywhere.
 */
final class DataExtent {

  /** The bucket range of one data file's non-null bucket values, and how many rows hold them. */
  record FileRange(BucketRange range, long rows) {
    FileRange {
      Objects.requireNonNull(range, "range");
      if (rows < 0) {
        throw new IllegalArgumentException("A file cannot hold " + rows + " rows");
      }
    }
  }

  private static final DataExtent UNKNOWN = new DataExtent(null, 0);

  private final List<FileRange> files;
  private final long nullRows;

  private DataExtent(List<FileRange> files, long nullRows) {
    this.files = files;
    this.nullRows = nullRows;
  }

  /** An extent that statistics cannot tell. */
  static DataExtent unknown() {
    return UNKNOWN;
  }

  /** The extent of the given files, plus {@code nullRows} rows whose bucket column is null. */
  static DataExtent of(List<FileRange> files, long nullRows) {
    return new DataExtent(List.copyOf(files), nullRows);
  }

  /**
   * The extent of the live data files of snapshot {@code snapshotId} that may hold rows of {@code
   * dirty} (every file for a full refresh), as Iceberg's planning prunes them.
   *
   * @param schema the snapshot's schema
   * @param column the bucket column
   */
  static DataExtent read(
      Table table,
      long snapshotId,
      Schema schema,
      String column,
      Bucketing bucketing,
      DirtyBuckets dirty) {
    Types.NestedField field = schema.findField(column);
    Expression filter =
        dirty.full()
            ? Expressions.alwaysTrue()
            : BucketFilters.of(column, bucketing.columnType(), dirty.ranges(), dirty.nullBucket());
    List<FileRange> files = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    long nullRows = 0;
    try (CloseableIterable<FileScanTask> tasks =
        table
            .newScan()
            .useSnapshot(snapshotId)
            .filter(filter)
            .includeColumnStats(List.of(column))
            .planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        if (!seen.add(file.location()) || file.recordCount() == 0) {
          continue;
        }
        int id = field.fieldId();
        Long nulls = value(file.nullValueCounts(), id);
        ByteBuffer lower = value(file.lowerBounds(), id);
        ByteBuffer upper = value(file.upperBounds(), id);
        if (lower == null || upper == null) {
          if (nulls != null && nulls == file.recordCount()) {
            nullRows += nulls;
            continue;
          }
          return UNKNOWN;
        }
        long min = ((Number) Conversions.fromByteBuffer(field.type(), lower)).longValue();
        long max = ((Number) Conversions.fromByteBuffer(field.type(), upper)).longValue();
        long nonNull = nulls == null ? file.recordCount() : file.recordCount() - nulls;
        files.add(new FileRange(bucketing.expand(min, max), nonNull));
        nullRows += nulls == null ? 0 : nulls;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot plan " + table.name() + " at snapshot " + snapshotId, e);
    }
    return new DataExtent(List.copyOf(files), nullRows);
  }

  private static <T> T value(Map<Integer, T> map, int id) {
    return map == null ? null : map.get(id);
  }

  /** True when every file's bounds were known. */
  boolean isKnown() {
    return files != null;
  }

  /** The files' ranges and rows; empty for an unknown extent. */
  List<FileRange> files() {
    return files == null ? List.of() : files;
  }

  /** Rows whose bucket column is null. */
  long nullRows() {
    return nullRows;
  }

  @Override
  public String toString() {
    return isKnown() ? files.size() + " files, " + nullRows + " null rows" : "unknown";
  }
}
