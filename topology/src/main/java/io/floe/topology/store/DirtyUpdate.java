package io.floe.topology.store;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * What one source snapshot changed in one view: the value of the repartition topic from the detect
 * to the maintain stage, keyed by view name.
 *
 * @param table the source table, catalog.namespace.table
 * @param snapshotId the source snapshot
 * @param sequenceNumber its sequence number, to ignore snapshots the view already reflects
 * @param committedAt when the source snapshot was committed (epoch millis)
 * @param dirty the buckets it changed
 * @param request a user's request instead of a change: {@link #REFRESH} or {@link #FULL_REFRESH};
 *     null for changes
 */
public record DirtyUpdate(
    String table,
    long snapshotId,
    long sequenceNumber,
    long committedAt,
    StoredDirty dirty,
    String request) {

  public static final String REFRESH = "refresh";
  public static final String FULL_REFRESH = "full-refresh";

  /** The buckets a source snapshot changed. */
  public static DirtyUpdate change(
      String table, long snapshotId, long sequenceNumber, long committedAt, StoredDirty dirty) {
    return new DirtyUpdate(table, snapshotId, sequenceNumber, committedAt, dirty, null);
  }

  /** A user's request to refresh now, fully or not. */
  public static DirtyUpdate request(boolean full, long at) {
    return new DirtyUpdate(
        null,
        -1,
        -1,
        at,
        StoredDirty.of(io.floe.topology.bucket.DirtyBuckets.none()),
        full ? FULL_REFRESH : REFRESH);
  }

  @JsonIgnore
  public boolean isRequest() {
    return request != null;
  }
}
