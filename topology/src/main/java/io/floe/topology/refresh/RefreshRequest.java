package io.floe.topology.refresh;

import io.floe.topology.view.DirtyBuckets;
import io.floe.topology.view.ViewDefinition;
import java.util.Objects;

/**
 * One refresh of a view: bring its target to source snapshot {@code sourceSnapshotId} by
 * recomputing the dirty buckets.
 *
 * @param view the view definition
 * @param sourceSnapshotId the one source snapshot the refresh reads (DESIGN §3.5)
 * @param watermark the source snapshot Floe believes the target reflects, or null before the first
 *     refresh; the dirty buckets cover every change after it
 * @param dirty the buckets changed between the watermark and the source snapshot
 * @param refreshId deterministic id of this refresh, recorded in the target commit
 */
public record RefreshRequest(
    ViewDefinition view,
    long sourceSnapshotId,
    Long watermark,
    DirtyBuckets dirty,
    String refreshId) {

  public RefreshRequest {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(dirty, "dirty");
    Objects.requireNonNull(refreshId, "refreshId");
  }

  /** The deterministic refresh id of a view version reaching a source snapshot. */
  public static String refreshId(ViewDefinition view, long sourceSnapshotId) {
    return view.name() + "@" + view.version() + ":" + sourceSnapshotId;
  }
}
