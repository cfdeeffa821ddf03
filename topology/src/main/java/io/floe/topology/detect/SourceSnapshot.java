package io.floe.topology.detect;

import io.floe.schemas.SnapshotEvent;
import java.util.Objects;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * One snapshot of a source table, as every stage refers to it: the one a change names, the one a
 * refresh is pinned to, the one a target reflects. The table's UUID tells a table dropped and
 * recreated under the same name from the one the snapshot belongs to; the sequence number orders
 * snapshots of the same table (DESIGN §3.3); the commit time is where staleness counts from.
 *
 * @param tableUuid the UUID of the table it belongs to; null when unknown (values of earlier
 *     releases)
 * @param snapshotId the snapshot
 * @param sequenceNumber its sequence number; -1 when unknown
 * @param committedAt its commit time (epoch millis); 0 when unknown
 */
public record SourceSnapshot(
    String tableUuid, long snapshotId, long sequenceNumber, long committedAt) {

  /** The snapshot {@code snapshot} of {@code table}. */
  public static SourceSnapshot of(Table table, Snapshot snapshot) {
    return new SourceSnapshot(
        table.uuid().toString(),
        snapshot.snapshotId(),
        snapshot.sequenceNumber(),
        snapshot.timestampMillis());
  }

  /** The snapshot a snapshot event announces. */
  public static SourceSnapshot of(SnapshotEvent event) {
    return new SourceSnapshot(
        event.getTable().getUuid(),
        event.getSnapshotId(),
        event.getSequenceNumber(),
        event.getTimestamp().toEpochMilli());
  }

  /**
   * A snapshot as a value of an earlier release recorded it, where any of its fields but the id may
   * be missing (null); null when the id is.
   */
  public static SourceSnapshot recorded(
      String tableUuid, Long snapshotId, Long sequenceNumber, Long committedAt) {
    return snapshotId == null
        ? null
        : new SourceSnapshot(
            tableUuid,
            snapshotId,
            sequenceNumber == null ? -1 : sequenceNumber,
            committedAt == null ? 0 : committedAt);
  }

  /**
   * Whether the table already held this snapshot's changes at {@code reflected}: the same table, at
   * the same or a later sequence number.
   */
  public boolean isReflectedBy(SourceSnapshot reflected) {
    // An unknown sequence number (-1, recorded by an earlier release) orders nothing.
    return reflected != null
        && Objects.equals(tableUuid, reflected.tableUuid())
        && sequenceNumber >= 0
        && reflected.sequenceNumber() >= 0
        && sequenceNumber <= reflected.sequenceNumber();
  }
}
