package io.floe.dev.bench;

import io.floe.topology.refresh.FloeProperties;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Source-commit → target-commit lag, read from the tables alone: for every data-changing source
 * snapshot committed in the window, the time until the first target commit that reflects it (its
 * {@code floe.source-snapshot-id} names it or a later snapshot). Independent of what Floe reports.
 */
final class Lags {

  private Lags() {}

  /** The lag in milliseconds of every source snapshot committed in {@code [from, to]}. */
  static List<Long> of(Table source, Table target, long from, long to) {
    List<Long> lags = new ArrayList<>();
    for (long[] r : reflections(source, target, from, to)) {
      lags.add(Math.max(0, r[1] - r[0]));
    }
    return lags;
  }

  /**
   * When each data-changing source snapshot committed in {@code [from, to]} was reflected in the
   * target: {@code {source commit time, target commit time}}, in commit order; snapshots not yet
   * reflected are left out.
   */
  static List<long[]> reflections(Table source, Table target, long from, long to) {
    List<long[]> reflected = reflected(source, target);
    List<long[]> result = new ArrayList<>();
    for (Snapshot s : source.snapshots()) {
      if (DataOperations.REPLACE.equals(s.operation())
          || s.timestampMillis() < from
          || s.timestampMillis() > to) {
        continue;
      }
      for (long[] r : reflected) {
        if (r[1] >= s.sequenceNumber()) {
          result.add(new long[] {s.timestampMillis(), r[0]});
          break;
        }
      }
    }
    return result;
  }

  /**
   * The commit times of the data-changing source snapshots committed in {@code [from, to]}, in
   * commit order: the snapshots {@link #reflections} answers for, reflected or not.
   */
  static List<Long> commitTimes(Table source, long from, long to) {
    source.refresh();
    List<Long> times = new ArrayList<>();
    for (Snapshot s : source.snapshots()) {
      if (!DataOperations.REPLACE.equals(s.operation())
          && s.timestampMillis() >= from
          && s.timestampMillis() <= to) {
        times.add(s.timestampMillis());
      }
    }
    return times;
  }

  /**
   * When the target first reflected the source snapshot: the commit time of the first target commit
   * that completed a refresh of it or of a later snapshot, or empty while none has.
   */
  static OptionalLong reflectedAt(Table source, Table target, long sourceSnapshotId) {
    List<long[]> reflected = reflected(source, target);
    long sequence = source.snapshot(sourceSnapshotId).sequenceNumber();
    for (long[] r : reflected) {
      if (r[1] >= sequence) {
        return OptionalLong.of(r[0]);
      }
    }
    return OptionalLong.empty();
  }

  /**
   * The target commits that completed a refresh, in commit order: {target commit time, sequence
   * number of the source snapshot it reflects}.
   */
  private static List<long[]> reflected(Table source, Table target) {
    source.refresh();
    target.refresh();
    List<long[]> reflected = new ArrayList<>();
    for (Snapshot t : target.snapshots()) {
      String refreshId = t.summary().get(FloeProperties.REFRESH_ID);
      String sourceId = t.summary().get(FloeProperties.SOURCE_SNAPSHOT_ID);
      if (sourceId == null || !isLastChunk(refreshId)) {
        continue;
      }
      Snapshot s = source.snapshot(Long.parseLong(sourceId));
      if (s != null) {
        reflected.add(new long[] {t.timestampMillis(), s.sequenceNumber()});
      }
    }
    reflected.sort((a, b) -> Long.compare(a[0], b[0]));
    return reflected;
  }

  /** The number of target commits that completed a refresh in {@code [from, to]}. */
  static int refreshCommits(Table target, long from, long to) {
    target.refresh();
    int n = 0;
    for (Snapshot t : target.snapshots()) {
      if (t.timestampMillis() >= from
          && t.timestampMillis() <= to
          && t.summary().get(FloeProperties.SOURCE_SNAPSHOT_ID) != null
          && isLastChunk(t.summary().get(FloeProperties.REFRESH_ID))) {
        n++;
      }
    }
    return n;
  }

  /**
   * The target commits of refreshes in {@code [from, to]}: one per chunk committed, each carrying
   * {@code floe.refresh-id}; compactions, which carry none, are not counted.
   */
  static int targetCommits(Table target, long from, long to) {
    target.refresh();
    int n = 0;
    for (Snapshot t : target.snapshots()) {
      if (t.timestampMillis() >= from
          && t.timestampMillis() <= to
          && t.summary().get(FloeProperties.REFRESH_ID) != null) {
        n++;
      }
    }
    return n;
  }

  /** A chunk id is {@code refresh#i/n}; only the last chunk completes a refresh. */
  private static boolean isLastChunk(String refreshId) {
    if (refreshId == null) {
      return false;
    }
    int hash = refreshId.lastIndexOf('#');
    if (hash < 0) {
      return true;
    }
    String[] parts = refreshId.substring(hash + 1).split("/");
    return Integer.parseInt(parts[0]) == Integer.parseInt(parts[1]) - 1;
  }

  /** The {@code q}-quantile (0..1) by nearest rank, in seconds. */
  static double quantileSeconds(List<Long> millis, double q) {
    if (millis.isEmpty()) {
      return Double.NaN;
    }
    List<Long> sorted = new ArrayList<>(millis);
    Collections.sort(sorted);
    int index = (int) Math.ceil(q * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1000.0;
  }
}
