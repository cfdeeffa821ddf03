package io.floe.topology.detect;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The snapshots of a table since the last one Floe published (DESIGN §2, §3.4): the resolve stage
 * publishes them in commit order. When the walk is impossible (the first sight of a table, a
 * rollback, expired history, the table dropped and recreated) only the current snapshot is walked,
 * with the reason, so that the views on the table refresh fully from it.
 *
 * @param snapshots the snapshots to publish, oldest first; empty when nothing is new
 * @param brokenReason why the history since the cursor cannot be walked, or null; it applies to the
 *     last snapshot
 * @param tableUuid the table's UUID
 * @param currentSnapshotId the table's current snapshot, or null when it has none
 */
public record SnapshotWalk(
    List<Snapshot> snapshots, String brokenReason, String tableUuid, Long currentSnapshotId) {

  public SnapshotWalk {
    snapshots = List.copyOf(snapshots);
  }

  /**
   * The walk of {@code table} from the cursor {@code (cursorUuid, cursorSnapshotId)}; a null UUID
   * means the table was never walked.
   *
   * @param name the table's name, for reasons
   */
  public static SnapshotWalk since(
      Table table, String cursorUuid, Long cursorSnapshotId, String name) {
    String uuid = table.uuid().toString();
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return new SnapshotWalk(List.of(), null, uuid, null);
    }
    if (cursorUuid == null) {
      return broken(
          current, uuid, "first commit notice for table " + name + ": earlier history not walked");
    }
    if (!uuid.equals(cursorUuid)) {
      return broken(current, uuid, "table " + name + " was dropped and recreated");
    }
    if (cursorSnapshotId == null) {
      // Walked while empty: everything is new.
      List<Snapshot> all =
          oldestFirst(SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot));
      return all.get(0).parentId() == null
          ? new SnapshotWalk(all, null, uuid, current.snapshotId())
          : broken(current, uuid, "the first snapshots of table " + name + " have expired");
    }
    if (current.snapshotId() == cursorSnapshotId) {
      return new SnapshotWalk(List.of(), null, uuid, current.snapshotId());
    }
    if (!SnapshotUtil.isAncestorOf(table, current.snapshotId(), cursorSnapshotId)) {
      return broken(
          current,
          uuid,
          "snapshot "
              + cursorSnapshotId
              + " is not an ancestor of "
              + current.snapshotId()
              + " in "
              + name
              + " (rollback or expired history)");
    }
    List<Snapshot> walk =
        oldestFirst(SnapshotUtil.ancestorsBetween(table, current.snapshotId(), cursorSnapshotId));
    // ancestorsBetween stops quietly at an expired snapshot: the walk would skip changes.
    if (!cursorSnapshotId.equals(walk.get(0).parentId())) {
      return broken(
          current, uuid, "snapshots after " + cursorSnapshotId + " of " + name + " have expired");
    }
    return new SnapshotWalk(walk, null, uuid, current.snapshotId());
  }

  /** True when the last snapshot stands for a history that could not be walked. */
  public boolean isBroken() {
    return brokenReason != null;
  }

  private static SnapshotWalk broken(Snapshot current, String uuid, String reason) {
    return new SnapshotWalk(List.of(current), reason, uuid, current.snapshotId());
  }

  private static List<Snapshot> oldestFirst(Iterable<Snapshot> newestFirst) {
    List<Snapshot> list = new ArrayList<>();
    newestFirst.forEach(list::add);
    Collections.reverse(list);
    return list;
  }
}
