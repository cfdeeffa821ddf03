package io.floe.topology.store;

/**
 * What one source snapshot changed in one view: the value of the repartition topic from the detect
 * to the maintain stage, keyed by view name.
 *
 * @param table the source table, catalog.namespace.table
 * @param snapshotId the source snapshot
 * @param sequenceNumber its sequence number, to ignore snapshots the view already reflects
 * @param committedAt when the source snapshot was committed (epoch millis)
 * @param dirty the buckets it changed
 */
public record DirtyUpdate(
    String table, long snapshotId, long sequenceNumber, long committedAt, StoredDirty dirty) {}
