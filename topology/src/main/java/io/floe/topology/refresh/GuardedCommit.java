package io.floe.topology.refresh;

import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.StorageKind;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only code that commits to a view's target (DESIGN §3.6): a refresh chunk's rows, a
 * compaction's rewrite, a change of the target's schema and layout, and the expiry of its old
 * snapshots. Each goes through one guarded operation: the table's operations are wrapped in {@link
 * GuardedTableOperations}, so that the metadata swap is conditional on {@link CommitGuard} and
 * moves the bookmark properties with it, and a commit whose state is unknown is looked for in the
 * table before anything else: one that landed is done, one that did not is made again, a few times.
 *
 * <p>A chunk's new data files replace the files it rewrote (an overwrite), or, merge-on-read, come
 * with the delete files that hide the rows they replace (a row delta); its snapshot summary records
 * the refresh.
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
   * @param bookmark the bookmark the chunk leaves, from the one it commits on
   */
  record Change(
      ChunkId chunk,
      Snapshot startingTarget,
      List<DataFile> added,
      List<DataFile> removed,
      List<DeleteFile> deletes,
      Map<String, String> summary,
      CommitGuard guard,
      UnaryOperator<Bookmark> bookmark) {}

  /**
   * Commits the chunk; returns the id of the target snapshot holding it.
   *
   * @throws CommitGuard.BookmarkMovedException when another commit moved the bookmark
   * @throws CommitGuard.SupersededException when a newer definition of the view committed
   */
  static long commit(Table target, Change change, ManifestWork manifests) {
    String chunkId = change.chunk().toString();
    apply(
        target,
        manifests,
        chunkId,
        change.guard(),
        change.bookmark(),
        guarded -> {
          SnapshotUpdate<?> update =
              change.deletes().isEmpty()
                  ? overwrite(guarded, change, manifests)
                  : rowDelta(guarded, change, manifests);
          change.summary().forEach(update::set);
          update.set(FloeProperties.REFRESH_ID, chunkId);
          update.commit();
        },
        table -> find(table, FloeProperties.REFRESH_ID, chunkId, null) != null);
    return committed(target, FloeProperties.REFRESH_ID, chunkId, null);
  }

  /**
   * Commits a compaction of the target as it is at {@code base}: a {@code replace} that removes
   * {@code removed} and {@code removedDeletes} and adds {@code added}, with the summary {@code
   * summary}, which must hold {@code marker}'s key and value (what tells the commit in the table);
   * the bookmark properties stay as they are. Returns the id of the target snapshot holding it.
   */
  static long rewrite(
      Table target,
      Snapshot base,
      CommitGuard guard,
      List<DataFile> removed,
      List<DeleteFile> removedDeletes,
      List<DataFile> added,
      Map<String, String> summary,
      Map.Entry<String, String> marker,
      ManifestWork manifests) {
    apply(
        target,
        manifests,
        "compaction " + marker.getValue(),
        guard,
        UnaryOperator.identity(),
        guarded -> {
          RewriteFiles rewrite =
              manifests
                  .commit(guarded.newRewrite(), guarded, base)
                  .validateFromSnapshot(base.snapshotId());
          removed.forEach(rewrite::deleteFile);
          removedDeletes.forEach(rewrite::deleteFile);
          added.forEach(rewrite::addFile);
          summary.forEach(rewrite::set);
          rewrite.commit();
        },
        table -> find(table, marker.getKey(), marker.getValue(), base.snapshotId()) != null);
    return committed(target, marker.getKey(), marker.getValue(), base.snapshotId());
  }

  /**
   * Commits the metadata changes {@code changes} makes in a transaction (a schema, sort order or
   * partition spec), leaving the bookmark {@code bookmark} makes of the one it commits on.
   *
   * @param landed whether the table, refreshed after a commit whose state is unknown, shows the
   *     change made
   */
  static void transaction(
      Table target,
      String what,
      CommitGuard guard,
      UnaryOperator<Bookmark> bookmark,
      Consumer<Transaction> changes,
      Predicate<Table> landed) {
    apply(
        target,
        ManifestWork.LOCAL_READS,
        what,
        guard,
        bookmark,
        guarded -> {
          Transaction transaction = guarded.newTransaction();
          changes.accept(transaction);
          transaction.commitTransaction();
        },
        landed);
  }

  /**
   * Expires the target's snapshots as {@code expiry} configures it, planned on the worker pool of
   * {@code manifests} ({@link ManifestWork#expiry}); the bookmark stays. Expiring again what an
   * unknown commit expired expires nothing more, so such a commit is made again.
   */
  static void expire(
      Table target, CommitGuard guard, Consumer<ExpireSnapshots> expiry, ManifestWork manifests) {
    apply(
        target,
        ManifestWork.LOCAL_READS,
        "expiry of " + target.name(),
        guard,
        UnaryOperator.identity(),
        guarded -> {
          ExpireSnapshots expire = manifests.expiry(guarded.expireSnapshots());
          expiry.accept(expire);
          expire.commit();
        },
        table -> false);
  }

  /**
   * The one guarded operation: makes the commit on the target wrapped in the guard, its manifests
   * written through the FileIO {@code manifests} gives a commit to the target's store, and resolves
   * a commit whose state is unknown by looking for it in the refreshed table before anything else.
   */
  private static void apply(
      Table target,
      ManifestWork manifests,
      String what,
      CommitGuard guard,
      UnaryOperator<Bookmark> bookmark,
      Consumer<Table> commit,
      Predicate<Table> landed) {
    TableOperations operations = ((HasTableOperations) target).operations();
    Table guarded =
        new BaseTable(
            new GuardedTableOperations(
                operations,
                guard,
                bookmark,
                manifests.commitFiles(operations.io(), StorageKind.of(target))),
            target.name());
    // Not Iceberg's Tasks: whether to try again is decided from the refreshed table (a commit that
    // landed is done), not from the exception, and the guard's conflicts are never retried here.
    for (int attempt = 1; ; attempt++) {
      try {
        commit.accept(guarded);
        return;
      } catch (CommitStateUnknownException e) {
        // Before anything else, find out whether the commit happened (DESIGN §3.6).
        target.refresh();
        if (landed.test(target)) {
          LOG.warn("Commit state of {} was unknown; the table shows it committed", what);
          return;
        }
        if (attempt >= ATTEMPTS) {
          throw e;
        }
        LOG.warn("Commit state of {} was unknown and it is not in the table; retrying", what, e);
      }
    }
  }

  /** The id of the snapshot a commit just made, found by its summary {@code key}. */
  private static long committed(Table target, String key, String value, Long since) {
    // No refresh: the table's operations know their own commit (a REST catalog returns the new
    // metadata; a metastore catalog reads the file it just wrote, at the next look).
    Snapshot committed = find(target, key, value, since);
    if (committed == null) {
      throw new IllegalStateException("Committed " + value + " but cannot find its snapshot");
    }
    return committed.snapshotId();
  }

  /** Copy-on-write: the new files replace the rewritten ones. */
  private static OverwriteFiles overwrite(Table guarded, Change change, ManifestWork manifests) {
    OverwriteFiles overwrite =
        manifests.commit(guarded.newOverwrite(), guarded, guarded.currentSnapshot());
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
  private static RowDelta rowDelta(Table guarded, Change change, ManifestWork manifests) {
    RowDelta delta = manifests.commit(guarded.newRowDelta(), guarded, guarded.currentSnapshot());
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

  /**
   * The newest target snapshot whose summary maps {@code key} to {@code value}, searching back from
   * current, and no further than the snapshot after {@code since} when it is given.
   */
  private static Snapshot find(Table target, String key, String value, Long since) {
    for (Snapshot s : SnapshotUtil.currentAncestors(target)) {
      if (since != null && s.snapshotId() == since) {
        return null;
      }
      if (value.equals(s.summary().get(key))) {
        return s;
      }
    }
    return null;
  }
}
