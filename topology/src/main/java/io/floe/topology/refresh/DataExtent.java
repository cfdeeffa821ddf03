package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.Bucketing;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
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
   * The extent of the planned files of a refresh: the live data files that may hold rows of its
   * dirty buckets, as Iceberg's planning pruned them.
   *
   * @param field the bucket column in the snapshot's schema
   */
  static DataExtent of(List<FileScanTask> tasks, Types.NestedField field, Bucketing bucketing) {
    List<FileRange> files = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    long nullRows = 0;
    for (FileScanTask task : tasks) {
      DataFile file = task.file();
      if (!seen.add(file.location()) || file.recordCount() == 0) {
        continue;
      }
      Bounds bounds = Bounds.of(file, field, bucketing);
      if (bounds.unknown()) {
        return UNKNOWN;
      }
      long nulls = bounds.nulls() == null ? 0 : bounds.nulls();
      if (bounds.range() != null) {
        files.add(new FileRange(bounds.range(), file.recordCount() - nulls));
      }
      nullRows += nulls;
    }
    return new DataExtent(List.copyOf(files), nullRows);
  }

  /**
   * The planned files that may hold rows of one chunk: their bucket range overlaps the chunk's, or
   * they hold nulls and the chunk has the null bucket, or their bounds are unknown. What planning
   * the chunk's own filter would give, without planning again.
   */
  static List<FileScanTask> overlapping(
      List<FileScanTask> tasks,
      Types.NestedField field,
      Bucketing bucketing,
      ChunkPlan.Chunk chunk) {
    List<FileScanTask> selected = new ArrayList<>();
    for (FileScanTask task : tasks) {
      Bounds bounds = Bounds.of(task.file(), field, bucketing);
      boolean overlaps =
          bounds.unknown()
              || (chunk.nullBucket() && (bounds.nulls() == null || bounds.nulls() > 0))
              || (bounds.range() != null
                  && chunk.ranges().ranges().stream().anyMatch(r -> r.overlaps(bounds.range())));
      if (overlaps) {
        selected.add(task);
      }
    }
    return selected;
  }

  /**
   * A data file's bucket-column statistics: the bucket range of its non-null values (null when it
   * has none), its null rows (null when not recorded), and whether the range is unknown.
   */
  private record Bounds(BucketRange range, Long nulls, boolean unknown) {

    static Bounds of(DataFile file, Types.NestedField field, Bucketing bucketing) {
      int id = field.fieldId();
      Long nulls = value(file.nullValueCounts(), id);
      ByteBuffer lower = value(file.lowerBounds(), id);
      ByteBuffer upper = value(file.upperBounds(), id);
      if (lower == null || upper == null) {
        return nulls != null && nulls == file.recordCount()
            ? new Bounds(null, nulls, false)
            : new Bounds(null, nulls, true);
      }
      long min = ((Number) Conversions.fromByteBuffer(field.type(), lower)).longValue();
      long max = ((Number) Conversions.fromByteBuffer(field.type(), upper)).longValue();
      return new Bounds(bucketing.expand(min, max), nulls, false);
    }
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
