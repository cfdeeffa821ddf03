package io.floe.topology.processor;

import io.floe.topology.maintain.ViewMaintainer.Report;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.RefreshOutcome;

/**
 * What the topology reports as it works, for the process to turn into metrics (DESIGN §7). Every
 * method is called on a stream thread and must not block.
 */
public interface FloeMetrics {

  /** Reports nothing. */
  FloeMetrics NONE = new FloeMetrics() {};

  /** A commit notice for {@code table} was resolved. */
  default void commitEvent(String table) {}

  /** A snapshot of {@code table} was published to floe.snapshots. */
  default void snapshotPublished(String table) {}

  /**
   * A record of an event topic was read.
   *
   * @param format avro, lakekeeper, s3, json or unknown
   * @param outcome notice, ignored or dead-lettered
   */
  default void commitEventIngested(String format, String outcome) {}

  /** A record went to the dead-letter topic. */
  default void deadLettered(String processor, String reason) {}

  /** A refresh of {@code view} committed (or found nothing to do). */
  default void refreshed(String view, RefreshOutcome outcome, long durationMs, Long lagMs) {}

  /** A compaction of {@code view}'s target ran in its refresh slot. */
  default void compacted(String view, RefreshOutcome.Compaction compaction) {}

  /** A refresh of {@code view} failed. */
  default void refreshFailed(String view, String error) {}

  /** Counts what the maintainer reports of a view: a refresh, its failure, a compaction. */
  default void report(Report report) {
    if (report instanceof Report.Compacted compacted) {
      compacted(compacted.view(), compacted.compaction());
    } else if (report instanceof Report.Refreshed done) {
      refreshed(done.view(), done.outcome(), done.durationMs(), done.lagMs());
    } else if (report instanceof Report.Failed failed) {
      refreshFailed(failed.view(), failed.message());
    }
  }

  /** Reports the status of {@code view} as {@code state} has it. */
  default void viewStatus(String view, ViewState state) {
    ViewState.LastRefresh last = state.last();
    viewStatus(
        view,
        state.status().name(),
        state.pending().rangeCount(),
        last == null ? null : last.lagMs());
  }

  /**
   * The state of a view this instance maintains, reported every tick.
   *
   * @param pendingRanges bucket ranges waiting for a refresh; -1 when every bucket is
   * @param lagMs the lag of the last refresh, or null
   */
  default void viewStatus(String view, String status, long pendingRanges, Long lagMs) {}
}
