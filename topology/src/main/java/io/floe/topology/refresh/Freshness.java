package io.floe.topology.refresh;

import java.util.Optional;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Whether a view's target is current, told from the tables alone (DESIGN §3.6): its bookmark names
 * the source's newest data-changing snapshot, no chunked refresh is half done, and it was computed
 * by the view's current definition.
 */
public final class Freshness {

  private Freshness() {}

  /** The source's newest snapshot that changed rows (compactions change none), as of now. */
  public static Optional<Snapshot> latestDataChange(Table source) {
    source.refresh();
    for (Snapshot s : SnapshotUtil.currentAncestors(source)) {
      if (!DataOperations.REPLACE.equals(s.operation())) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code target} holds the view (of version {@code viewVersion}) of {@code source} now.
   */
  public static boolean isCurrent(Table target, Table source, String viewVersion) {
    Optional<Snapshot> latest = latestDataChange(source);
    target.refresh();
    return latest.isPresent()
        && String.valueOf(latest.get().snapshotId())
            .equals(target.properties().get(FloeProperties.SOURCE_SNAPSHOT_ID))
        && target.properties().get(FloeProperties.PROGRESS) == null
        && viewVersion.equals(target.properties().get(FloeProperties.VIEW_VERSION));
  }
}
