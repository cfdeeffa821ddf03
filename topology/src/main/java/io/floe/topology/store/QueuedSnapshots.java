package io.floe.topology.store;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.floe.topology.detect.SourceSnapshot;
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
   * One snapshot waiting for detection. Stored with the snapshot's fields flat, as earlier releases
   * stored them, so that either release reads the other's.
   *
   * @param snapshot the snapshot
   * @param brokenReason why the history before it could not be walked (every bucket of every view
   *     is then dirty), or null
   */
  public record Queued(@JsonUnwrapped SourceSnapshot snapshot, String brokenReason) {}
}
