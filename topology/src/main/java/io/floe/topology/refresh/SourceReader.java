package io.floe.topology.refresh;

import io.floe.topology.iceberg.ManifestWork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.iceberg.CombinedScanTask;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Scan;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Plans the reads of one pinned table snapshot (DESIGN §3.5): the files that may hold rows matching
 * the filter, with their delete files, for the requested columns. {@code eval.ViewScan} reads them.
 */
final class SourceReader {

  private final Table table;
  private final long snapshotId;
  private final Schema projection;
  private final Expression filter;
  private final List<String> statsColumns;
  private final ManifestWork manifests;

  /**
   * @param schema the schema of the snapshot, whose column positions index the rows
   * @param columns the columns to read
   * @param bucketColumn the column whose statistics the planned files keep, to size and cut chunks
   * @param manifests where the scan reads its manifests
   */
  SourceReader(
      Table table,
      long snapshotId,
      Schema schema,
      List<String> columns,
      Expression filter,
      String bucketColumn,
      ManifestWork manifests) {
    this.table = table;
    this.snapshotId = snapshotId;
    this.projection = schema.select(columns);
    this.filter = filter;
    this.statsColumns = List.of(bucketColumn);
    this.manifests = manifests;
  }

  /** The files to read, planned from the pinned snapshot with the filter. */
  List<FileScanTask> plan() {
    return plan(table.newScan().useSnapshot(snapshotId));
  }

  /**
   * The files of only the rows that the append snapshots after {@code fromExclusive} up to the
   * pinned snapshot added, with the filter. Iceberg's incremental append scan silently skips every
   * other kind of snapshot: the caller must know that the snapshots in between only appended or
   * compacted.
   */
  List<FileScanTask> planAppendedAfter(long fromExclusive) {
    return plan(
        table
            .newIncrementalAppendScan()
            .fromSnapshotExclusive(fromExclusive)
            .toSnapshot(snapshotId));
  }

  private <S extends Scan<S, FileScanTask, CombinedScanTask>> List<FileScanTask> plan(S scan) {
    List<FileScanTask> tasks = new java.util.ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        manifests
            .scan(
                scan.filter(filter).project(projection).includeColumnStats(statsColumns),
                table,
                table.snapshot(snapshotId))
            .planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot plan " + table.name() + " at snapshot " + snapshotId, e);
    }
    return tasks;
  }

  /**
   * The schema a refresh reads its pinned snapshot with, by Iceberg's rule for a branch and a
   * snapshot ({@link SnapshotUtil#schemaFor(Table, String)}): the head of main reads as the table
   * does now, under its current schema, since schema changes create no snapshot and the view must
   * equal its query over the table as users read it; an older snapshot reads under its own schema.
   */
  static Schema readSchema(Table table, Snapshot pinned) {
    Snapshot current = table.currentSnapshot();
    return current != null && current.snapshotId() == pinned.snapshotId()
        ? SnapshotUtil.schemaFor(table, SnapshotRef.MAIN_BRANCH)
        : SnapshotUtil.schemaFor(table, pinned.snapshotId());
  }
}
