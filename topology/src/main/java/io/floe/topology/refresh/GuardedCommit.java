package io.floe.topology.refresh;

import io.floe.topology.iceberg.ManifestWork;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One atomic, guarded commit of a refresh chunk to a view's target (DESIGN §3.6): the chunk's new
 * data files replace the files it rewrote (an overwrite), or, merge-on-read, come with the delete
 * files that hide the rows they replace (a row delta), the snapshot summary records the refresh,
 * and the table properties move in the same metadata swap, which {@link CommitGuard} makes
 * conditional on the bookmark the chunk started from. A commit whose state is unknown is looked for
 * in the table before anything else.
 */
final class GuardedCommit {

  private static final Logger LOG = LoggerFactory.getLogger(GuardedCommit.class);
  private static final int ATTEMPTS = 3;

  private GuardedCommit() {}

  /**
   * What one chunk commits.
   *
   * @param chunk the chunk, recorded as {@code floe.refresh-id}
   * @param startingTarget the target snapshot the chunk's files were computed against, or null
   * @param added new data files
   * @param removed data files they replace
   * @param deletes delete files that remove replaced rows (merge-on-read)
   * @param summary snapshot summary properties
   * @param guard what the target must be like
   * @param updates table properties to set
   * @param removals table properties to remove
   */
  record Change(
      ChunkId chunk,
      Snapshot startingTarget,
      List<DataFile> added,
      List<DataFile> removed,
      List<DeleteFile> deletes,
      Map<String, String> summary,
      CommitGuard guard,
      Map<String, String> updates,
      Set<String> removals) {}

  /**
   * Commits the change; returns the id of the target snapshot holding it.
   *
   * @throws CommitGuard.BookmarkMovedException when another commit moved the bookmark
   * @throws CommitGuard.SupersededException when a newer definition of the view committed
   */
  static long commit(Table target, Change change) {
    String chunkId = change.chunk().toString();
    Table guarded =
        new BaseTable(
            new GuardedTableOperations(
                ((HasTableOperations) target).operations(),
                change.guard(),
                change.updates(),
                change.removals()),
            target.name());
    for (int attempt = 1; ; attempt++) {
      SnapshotUpdate<?> update =
          change.deletes().isEmpty() ? overwrite(guarded, change) : rowDelta(guarded, change);
      change.summary().forEach(update::set);
      update.set(FloeProperties.REFRESH_ID, chunkId);
      try {
        update.commit();
        break;
      } catch (CommitStateUnknownException e) {
        // Before anything else, find out whether the commit happened (DESIGN §3.6).
        target.refresh();
        if (find(target, chunkId) != null) {
          LOG.warn("Commit state of {} was unknown; the table shows it committed", chunkId);
          break;
        }
        if (attempt >= ATTEMPTS) {
          throw e;
        }
        LOG.warn("Commit state of {} was unknown and it is not in the table; retrying", chunkId, e);
      }
    }
    // No refresh: the table's operations know their own commit (a REST catalog returns the new
    // metadata; a metastore catalog reads the file it just wrote, at the next look).
    Snapshot committed = find(target, chunkId);
    if (committed == null) {
      throw new IllegalStateException("Committed " + chunkId + " but cannot find its snapshot");
    }
    return committed.snapshotId();
  }

  /** Copy-on-write: the new files replace the rewritten ones. */
  private static OverwriteFiles overwrite(Table guarded, Change change) {
    OverwriteFiles overwrite =
        ManifestWork.commit(guarded.newOverwrite(), guarded, guarded.currentSnapshot());
    change.removed().forEach(overwrite::deleteFile);
    change.added().forEach(overwrite::addFile);
    if (change.startingTarget() != null) {
      overwrite
          .validateFromSnapshot(change.startingTarget().snapshotId())
          .validateNoConflictingData()
          .validateNoConflictingDeletes();
    }
    return overwrite;
  }

  /** Merge-on-read: new rows and the delete files that hide the rows they replace. */
  private static RowDelta rowDelta(Table guarded, Change change) {
    RowDelta delta = ManifestWork.commit(guarded.newRowDelta(), guarded, guarded.currentSnapshot());
    change.removed().forEach(delta::removeRows);
    change.added().forEach(delta::addRows);
    change.deletes().forEach(delta::addDeletes);
    if (change.startingTarget() != null) {
      delta
          .validateFromSnapshot(change.startingTarget().snapshotId())
          .validateDeletedFiles()
          .validateNoConflictingDataFiles()
          .validateNoConflictingDeleteFiles();
    }
    return delta;
  }

  /** The target snapshot whose summary carries {@code refreshId}, searching back from current. */
  static Snapshot find(Table target, String refreshId) {
    for (Snapshot s : SnapshotUtil.currentAncestors(target)) {
      if (refreshId.equals(s.summary().get(FloeProperties.REFRESH_ID))) {
        return s;
      }
    }
    return null;
  }
}
