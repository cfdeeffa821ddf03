package io.floe.topology.refresh;

import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upkeep of a target table, run after the refreshes that commit to it rather than on a timer
 * (DESIGN §5): every refresh adds a snapshot, often one a second, so old snapshots are expired
 * (with the data files only they reference) and old metadata files deleted, or the table's metadata
 * would grow without bound.
 *
 * <p>The retention is Iceberg's own pair of table properties, {@code
 * history.expire.max-snapshot-age-ms} and {@code history.expire.min-snapshots-to-keep}, which Floe
 * sets when it creates a target and which an operator may change on the table. The minimum count
 * keeps the snapshots a chained view may still stand on after an outage, when the few catch-up
 * commits would otherwise push everything older out at once.
 */
final class TargetMaintenance {

  private static final Logger LOG = LoggerFactory.getLogger(TargetMaintenance.class);

  /** Snapshots younger than this stay. */
  static final long DEFAULT_MAX_SNAPSHOT_AGE_MS = 15 * 60 * 1000L;

  /** The newest this many snapshots stay, whatever their age. */
  static final int DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 50;

  /** Metadata files kept besides the current one. */
  static final int PREVIOUS_METADATA_VERSIONS = 50;

  private TargetMaintenance() {}

  /** The properties a new target starts with. */
  static Map<String, String> initialProperties() {
    return Map.of(
        TableProperties.MAX_SNAPSHOT_AGE_MS, Long.toString(DEFAULT_MAX_SNAPSHOT_AGE_MS),
        TableProperties.MIN_SNAPSHOTS_TO_KEEP, Integer.toString(DEFAULT_MIN_SNAPSHOTS_TO_KEEP),
        TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true",
        TableProperties.METADATA_PREVIOUS_VERSIONS_MAX,
            Integer.toString(PREVIOUS_METADATA_VERSIONS));
  }

  /**
   * Expires the target's snapshots past its retention, once the oldest is a quarter of the
   * retention past it, so that a target refreshed every second is not expired every second. Never
   * throws: upkeep that fails is retried after a later refresh.
   *
   * @return the number of snapshots expired
   */
  static int afterRefresh(Table target, CompiledView view, long nowMillis, ManifestWork manifests) {
    // Guarded as a compaction is: the bookmark this upkeep found stays as it is.
    return expire(
        target,
        nowMillis,
        expiry ->
            GuardedCommit.expire(
                target, CommitGuard.of(Bookmark.of(target).expected(), view), expiry, manifests));
  }

  /**
   * Expires the snapshots of a view's state table ({@link StateTable}) past its retention, by the
   * same rule and through the same guarded commit as a target's ({@link GuardedCommit#expire}: the
   * state's properties as this upkeep found them, a commit of unknown state looked for first). Only
   * while the state's current snapshot is the one {@code target} records ({@code
   * floe.state-snapshot-id}): then the newest snapshots kept include it. A state commit whose
   * target commit never came (a crash or a lost race between the two) leaves them apart, and the
   * next refresh sets the state back to the recorded snapshot ({@link StateTable#trust}), which an
   * expiry now could remove, costing a full refresh.
   *
   * @return the number of snapshots expired
   */
  static int afterStateCommit(
      Table state, Table target, CompiledView view, long nowMillis, ManifestWork manifests) {
    Long recorded = Bookmark.of(target).stateSnapshotId();
    Snapshot current = state.currentSnapshot();
    if (recorded == null || current == null || current.snapshotId() != recorded) {
      LOG.debug(
          "Not expiring state table {}: at snapshot {}, its target records {}",
          state.name(),
          current == null ? null : current.snapshotId(),
          recorded);
      return 0;
    }
    return expire(
        state,
        nowMillis,
        expiry ->
            GuardedCommit.expire(
                state, CommitGuard.of(Bookmark.of(state).expected(), view), expiry, manifests));
  }

  private static int expire(
      Table table, long nowMillis, Consumer<Consumer<ExpireSnapshots>> committer) {
    try {
      Map<String, String> properties = table.properties();
      long maxAge =
          PropertyUtil.propertyAsLong(
              properties, TableProperties.MAX_SNAPSHOT_AGE_MS, DEFAULT_MAX_SNAPSHOT_AGE_MS);
      int minToKeep =
          PropertyUtil.propertyAsInt(
              properties, TableProperties.MIN_SNAPSHOTS_TO_KEEP, DEFAULT_MIN_SNAPSHOTS_TO_KEEP);
      int count = 0;
      long oldest = Long.MAX_VALUE;
      for (Snapshot snapshot : table.snapshots()) {
        count++;
        oldest = Math.min(oldest, snapshot.timestampMillis());
      }
      if (count <= minToKeep || nowMillis - oldest <= maxAge + maxAge / 4) {
        return 0;
      }
      committer.accept(
          expire -> expire.expireOlderThan(nowMillis - maxAge).retainLast(Math.max(1, minToKeep)));
      int expired = count - countOf(table.snapshots());
      LOG.info("Expired {} snapshots of {}", expired, table.name());
      return expired;
    } catch (RuntimeException e) {
      LOG.warn("Cannot expire snapshots of {}: {}", table.name(), e.toString());
      return 0;
    }
  }

  private static int countOf(Iterable<Snapshot> snapshots) {
    int count = 0;
    for (Snapshot ignored : snapshots) {
      count++;
    }
    return count;
  }
}
