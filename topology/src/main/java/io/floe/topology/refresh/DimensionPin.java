package io.floe.topology.refresh;

import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.TableName;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * A dimension table a refresh joins, pinned at one snapshot for the whole refresh (DESIGN §3.10): a
 * target never mixes two versions of a dimension.
 *
 * @param name the dimension as the view names it
 * @param table the dimension, loaded once per refresh
 * @param snapshot the pinned snapshot, or null when the dimension has none yet (no rows)
 */
record DimensionPin(TableName name, Table table, Snapshot snapshot) {

  /** Pins the dimension's current snapshot. */
  static DimensionPin current(TableName name, Table table) {
    return new DimensionPin(name, table, table.currentSnapshot());
  }

  /** The dimension as the refresh's outcome reports it. */
  RefreshOutcome.Dimension read() {
    return new RefreshOutcome.Dimension(
        name, snapshot == null ? null : SourceSnapshot.of(table, snapshot));
  }

  /** The pinned snapshot's id, or {@link DimensionTables#NO_SNAPSHOT}. */
  long snapshotId() {
    return snapshot == null ? DimensionTables.NO_SNAPSHOT : snapshot.snapshotId();
  }
}
