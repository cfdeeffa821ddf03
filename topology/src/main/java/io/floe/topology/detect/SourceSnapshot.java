package io.floe.topology.detect;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.floe.schemas.SnapshotEvent;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * One snapshot of a source table, as every stage refers to it: the one a change names, the one a
 * refresh is pinned to, the one a target reflects. The table's UUID tells a table dropped and
 * recreated under the same name from the one the snapshot belongs to; the sequence number orders
 * snapshots of the same table (DESIGN §3.3); the origin is where staleness counts from.
 *
 * <p>The origin is the commit time of the oldest commit of a root source (a table no view writes)
 * that the snapshot brings into its table: a snapshot of a target Floe wrote records it as {@link
 * #SOURCE_COMMITTED_AT}, so that a view chained on another view counts its staleness end to end;
 * any other snapshot is its own origin.
 *
 * @param tableUuid the UUID of the table it belongs to; null when unknown (values of earlier
 *     releases)
 * @param snapshotId the snapshot
 * @param sequenceNumber its sequence number; -1 when unknown
 * @param committedAt its commit time (epoch millis); 0 when unknown
 * @param originCommittedAt the commit time (epoch millis) of the oldest root-source commit the
 *     snapshot brings in; its own commit time when it records none or a later one (0 or less is
 *     read so: values of earlier releases)
 */
public record SourceSnapshot(
    String tableUuid,
    long snapshotId,
    long sequenceNumber,
    long committedAt,
    @JsonIgnore long originCommittedAt) {

  /**
   * Snapshot-summary key of every target commit of a refresh: the commit time (epoch millis) of the
   * oldest root-source commit the refresh brought into the target, which a view reading the target
   * counts its staleness from. Absent from commits of other writers, and from refreshes that
   * brought no new source commit in (a forced refresh of a current view).
   */
  public static final String SOURCE_COMMITTED_AT = "floe.source-committed-at";

  public SourceSnapshot {
    // A root commit precedes the commits that bring it in: a later origin (the clocks of two
    // writers apart) is read as the snapshot's own commit time.
    if (originCommittedAt <= 0 || (committedAt > 0 && originCommittedAt > committedAt)) {
      originCommittedAt = committedAt;
    }
  }

  /** A snapshot that is its own origin. */
  public SourceSnapshot(String tableUuid, long snapshotId, long sequenceNumber, long committedAt) {
    this(tableUuid, snapshotId, sequenceNumber, committedAt, committedAt);
  }

  /**
   * A snapshot as stored (in the detect queue, on the repartition topic): the origin only where it
   * is not the snapshot's own commit time, so that a snapshot is stored as earlier releases stored
   * it, and either release reads the other's.
   */
  @JsonCreator
  static SourceSnapshot stored(
      @JsonProperty("tableUuid") String tableUuid,
      @JsonProperty("snapshotId") long snapshotId,
      @JsonProperty("sequenceNumber") long sequenceNumber,
      @JsonProperty("committedAt") long committedAt,
      @JsonProperty("sourceCommittedAt") Long originCommittedAt) {
    return new SourceSnapshot(
        tableUuid,
        snapshotId,
        sequenceNumber,
        committedAt,
        originCommittedAt == null ? committedAt : originCommittedAt);
  }

  @JsonProperty("sourceCommittedAt")
  @JsonInclude(JsonInclude.Include.NON_NULL)
  private Long storedOrigin() {
    return originCommittedAt == committedAt ? null : originCommittedAt;
  }

  /** The snapshot {@code snapshot} of {@code table}. */
  public static SourceSnapshot of(Table table, Snapshot snapshot) {
    return new SourceSnapshot(
        table.uuid().toString(),
        snapshot.snapshotId(),
        snapshot.sequenceNumber(),
        snapshot.timestampMillis(),
        origin(snapshot.summary()));
  }

  /** The snapshot a snapshot event announces. */
  public static SourceSnapshot of(SnapshotEvent event) {
    return new SourceSnapshot(
        event.getTable().getUuid(),
        event.getSnapshotId(),
        event.getSequenceNumber(),
        event.getTimestamp().toEpochMilli(),
        origin(event.getSummary()));
  }

  /** The origin a snapshot summary records; 0 (the snapshot's own commit time) when none. */
  private static long origin(Map<String, String> summary) {
    String recorded = summary == null ? null : summary.get(SOURCE_COMMITTED_AT);
    if (recorded == null) {
      return 0;
    }
    try {
      return Long.parseLong(recorded);
    } catch (NumberFormatException e) {
      // Written by someone else under Floe's key: the snapshot's own commit time is all we know.
      return 0;
    }
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
