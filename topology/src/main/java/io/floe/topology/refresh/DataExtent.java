package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.detect.FileBuckets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.types.Types;

/**
 * Where the rows of a pinned source snapshot lie in bucket terms, from manifest statistics alone
 * (no data file is read): each live data file contributes {@code [floor(min), floor(max) + 1
 * bucket)} of its bucket-column bounds ({@link FileBuckets}) with its record count, and its nulls
 * to the null bucket. {@link ChunkPlan} sizes chunks by it. Rows removed by delete files still
 * count: the extent over-estimates, never under-estimates.
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
      FileBuckets buckets = FileBuckets.of(file, field);
      if (!buckets.isKnown()) {
        return UNKNOWN;
      }
      long nulls = buckets.nullCount() == null ? 0 : buckets.nullCount();
      if (buckets.hasBounds()) {
        files.add(new FileRange(buckets.range(bucketing), file.recordCount() - nulls));
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
      FileBuckets buckets = FileBuckets.of(task.file(), field);
      BucketRange range = buckets.range(bucketing);
      boolean overlaps =
          !buckets.isKnown()
              || (chunk.nullBucket() && buckets.mayHoldNulls())
              || (range != null
                  && chunk.ranges().ranges().stream().anyMatch(r -> r.overlaps(range)));
      if (overlaps) {
        selected.add(task);
      }
    }
    return selected;
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
