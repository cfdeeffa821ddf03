package io.floe.topology.refresh;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.view.ViewPlan;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The outcomes of a refresh that commits nothing new: one that does not run (its pin is stale, the
 * target is ahead, a newer definition wrote it), and one an earlier run committed and crashed
 * before reporting, told from the summaries of its commits.
 *
 * @param pinned the pinned source snapshot, or null when it is not known
 * @param plan the view's plan, or null when it is not bound yet
 * @param target the target, or null when it is not prepared yet
 */
record RefreshOutcomes(
    RefreshRequest request, Table source, Snapshot pinned, ViewPlan plan, Table target) {

  RefreshOutcome skipped(RefreshOutcome.Status status, String reason) {
    return RefreshOutcome.skipped(
        status,
        reason,
        request.id(),
        plan == null ? null : plan.bucketing().columnType(),
        pinnedSnapshot(),
        RefreshOutcome.Target.of(target, target == null ? null : target.currentSnapshot()));
  }

  /** The pinned snapshot; only its id is known when it is gone from the source's history. */
  private SourceSnapshot pinnedSnapshot() {
    return pinned == null
        ? new SourceSnapshot(source.uuid().toString(), request.sourceSnapshotId(), -1, 0)
        : SourceSnapshot.of(source, pinned);
  }

  /**
   * The refresh was committed by an earlier run, which crashed before it could report it: report it
   * now as it was, from the summaries of its commits.
   */
  RefreshOutcome alreadyApplied() {
    RefreshId id = request.id();
    Snapshot last = null;
    long rowsWritten = 0;
    long rowsReplaced = 0;
    int added = 0;
    int removed = 0;
    for (Snapshot s : SnapshotUtil.currentAncestors(target)) {
      ChunkId chunk = chunkOf(s);
      if (chunk == null || !chunk.refresh().equals(id)) {
        if (last != null) {
          break;
        }
        continue;
      }
      last = last == null ? s : last;
      rowsWritten += summaryNumber(s, FloeProperties.ROWS_WRITTEN);
      rowsReplaced += summaryNumber(s, FloeProperties.ROWS_REPLACED);
      added += (int) summaryNumber(s, "added-data-files");
      removed += (int) summaryNumber(s, "deleted-data-files");
    }
    if (last == null) {
      // Its snapshots have expired: what it did is no longer known.
      return skipped(RefreshOutcome.Status.ALREADY_APPLIED, null);
    }
    RefreshOutcome.Mode mode =
        RefreshOutcome.Mode.ofLabel(last.summary().get(FloeProperties.REFRESH_MODE));
    String reason = mode == RefreshOutcome.Mode.FULL ? "reported after a restart" : null;
    DirtyBuckets recomputed;
    try {
      recomputed = DirtyBuckets.parse(last.summary().get(FloeProperties.DIRTY_BUCKETS), reason);
    } catch (IllegalArgumentException e) {
      recomputed = DirtyBuckets.all(reason);
    }
    return RefreshOutcome.committed(
            id,
            mode,
            reason,
            recomputed,
            plan.bucketing().columnType(),
            SourceSnapshot.of(source, pinned),
            dimensionsOf(last),
            RefreshOutcome.Target.of(target, last),
            RefreshOutcome.Work.recorded(rowsWritten, rowsReplaced, added, removed))
        .reportedLate();
  }

  /**
   * The dimensions the last commit of a refresh recorded it joined, at the snapshots it read; their
   * commit times are not known here. None when the record is unreadable: the bookmark's guard, not
   * this report, keeps the target right.
   */
  private static List<RefreshOutcome.Dimension> dimensionsOf(Snapshot last) {
    try {
      return DimensionStates.parse(last.summary().get(FloeProperties.DIMENSION_STATES)).read();
    } catch (IllegalArgumentException e) {
      return List.of();
    }
  }

  private static ChunkId chunkOf(Snapshot snapshot) {
    String recorded = snapshot.summary().get(FloeProperties.REFRESH_ID);
    try {
      return recorded == null ? null : ChunkId.parse(recorded);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static long summaryNumber(Snapshot snapshot, String key) {
    try {
      return Long.parseLong(snapshot.summary().getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
