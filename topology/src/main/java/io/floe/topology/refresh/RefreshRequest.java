package io.floe.topology.refresh;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.ViewDefinition;
import java.util.Objects;

/**
 * One refresh of a view: bring its target to source snapshot {@code sourceSnapshotId} by
 * recomputing the dirty buckets.
 *
 * @param view the view definition
 * @param sourceSnapshotId the one source snapshot the refresh reads (DESIGN §3.5); null to pin the
 *     source's current snapshot when the refresh starts
 * @param watermark the source snapshot Floe believes the target reflects, or null before the first
 *     refresh; the dirty buckets cover every change after it
 * @param dirty the buckets changed between the watermark and the source snapshot; "everything" may
 *     be narrowed by the refresher when the target's bookmark proves that less changed
 * @param forceFull recompute every bucket even if less changed, as a user may ask
 * @param catchUp whether the dirty buckets may not cover every change up to the source snapshot
 *     (nothing named the snapshot: it was pinned because it is the current one), so that the
 *     refresher must also detect the changes since the target's bookmark
 * @param refreshId deterministic id of this refresh, recorded in the target commit
 */
public record RefreshRequest(
    ViewDefinition view,
    Long sourceSnapshotId,
    Long watermark,
    DirtyBuckets dirty,
    boolean forceFull,
    boolean catchUp,
    String refreshId) {

  public RefreshRequest {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(dirty, "dirty");
    Objects.requireNonNull(refreshId, "refreshId");
  }

  /** A refresh of the dirty buckets, with the deterministic id of its view and snapshot. */
  public static RefreshRequest of(
      ViewDefinition view, long sourceSnapshotId, Long watermark, DirtyBuckets dirty) {
    return new RefreshRequest(
        view, sourceSnapshotId, watermark, dirty, false, false, refreshId(view, sourceSnapshotId));
  }

  /** The deterministic refresh id of a view version reaching a source snapshot. */
  public static String refreshId(ViewDefinition view, Long sourceSnapshotId) {
    return view.name()
        + "@"
        + view.version()
        + ":"
        + (sourceSnapshotId == null ? "current" : sourceSnapshotId.toString());
  }
}
