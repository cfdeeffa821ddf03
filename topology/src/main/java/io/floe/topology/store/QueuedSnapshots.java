package io.floe.topology.store;

import java.util.List;

/**
 * The snapshots of one table the detect stage has received and not yet turned into dirty buckets
 * (store {@link StoreNames#DETECT_QUEUE}), oldest first: detection runs on Floe's I/O executor, and
 * a crash or a rebalance detects them again.
 */
public record QueuedSnapshots(List<Queued> snapshots) {

  public QueuedSnapshots {
    snapshots = List.copyOf(snapshots);
  }

  /**
   * One snapshot waiting for detection.
   *
   * @param tableUuid the UUID of the table it belongs to
   * @param snapshotId the snapshot
   * @param sequenceNumber its sequence number
   * @param committedAt its commit time (epoch millis)
   * @param brokenReason why the history before it could not be walked (every bucket of every view
   *     is then dirty), or null
   */
  public record Queued(
      String tableUuid,
      long snapshotId,
      long sequenceNumber,
      long committedAt,
      String brokenReason) {}
}
