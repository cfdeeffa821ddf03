package io.floe.topology.maintain;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.store.StoredDirty;
import io.floe.topology.store.StoredView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The maintain stage's state of one view (store {@code view-state}) and its state machine (DESIGN
 * §6): its definition, the source snapshot its target reflects (the watermark), the buckets changed
 * since, the refresh in flight and the outcome of the last one, and when the next refresh is due.
 * Pure: the processor calls it and does the I/O.
 *
 * <p>The schedule bounds lag: a refresh is due {@code linger} after the first change it has not
 * covered, or as soon as the running refresh ends if changes arrived meanwhile, whichever is later;
 * at most one refresh per view is in flight; {@code min_interval} spaces refreshes.
 *
 * <p>The refresh in flight is recorded before it starts, so that after a crash the new owner of the
 * view runs the same refresh (same id, same pinned snapshot) again; the target's bookmark makes
 * that idempotent.
 */
@JsonAutoDetect(
    fieldVisibility = JsonAutoDetect.Visibility.ANY,
    getterVisibility = JsonAutoDetect.Visibility.NONE,
    isGetterVisibility = JsonAutoDetect.Visibility.NONE)
public final class ViewState {

  /** Where a view stands. */
  public enum Status {
    /** The target reflects every change seen. */
    IDLE,
    /** Changes wait for their refresh to be due. */
    PENDING,
    /** A refresh is running. */
    REFRESHING,
    /** The last refresh failed; it is retried with backoff. */
    ERROR
  }

  /** What is known of the buckets of the pending refresh. */
  public enum Scope {
    /** Every change since the watermark was detected: the pending buckets cover them. */
    CHANGES,
    /**
     * The next refresh reads the source's current snapshot, which no change named: the changes
     * since the target's bookmark are detected again.
     */
    CATCH_UP,
    /** A user asked for every bucket to be recomputed. */
    FORCED
  }

  /**
   * A source snapshot: the one a refresh reads, or the one the target reflects.
   *
   * @param snapshotId the snapshot
   * @param sequenceNumber its sequence number
   * @param committedAt its commit time (epoch millis)
   * @param tableUuid the UUID of the source table it belongs to; null when unknown
   */
  public record Pin(long snapshotId, long sequenceNumber, long committedAt, String tableUuid) {}

  /** A refresh that has been started and not yet completed. */
  public record InFlight(
      String refreshId,
      Long sourceSnapshotId,
      Long sequenceNumber,
      Long sourceCommittedAt,
      String tableUuid,
      Long watermark,
      StoredDirty dirty,
      Scope scope,
      String version,
      long startedAt,
      List<TimeRange> ranges) {

    /** The pinned snapshot. */
    public Pin pin() {
      return new Pin(
          sourceSnapshotId,
          sequenceNumber == null ? -1 : sequenceNumber,
          sourceCommittedAt == null ? 0 : sourceCommittedAt,
          tableUuid);
    }
  }

  /** The outcome of a completed (or failed) refresh. */
  public record LastRefresh(
      String refreshId,
      String mode,
      String reason,
      long finishedAt,
      long durationMs,
      Long targetSnapshotId,
      Long sourceSnapshotId,
      Long lagMs,
      long rowsWritten,
      String error) {}

  /** How many recent refreshes the state keeps, for the API and the lag chart. */
  static final int RECENT = 30;

  private StoredView view;
  private Long watermark;
  private Long watermarkSequence;
  private String watermarkTableUuid;
  private StoredDirty pending;
  private Long pendingSnapshot;
  private Long pendingSequence;
  private Long pendingCommittedAt;
  private String pendingTableUuid;
  private Scope pendingScope;
  private Long firstPendingAt;
  // Staleness: the commit time (epoch millis) of the oldest source commit the target
  // does not reflect, among the pending changes and among those of the refresh in flight; null
  // when there is none. A view's first refresh, or one of a new definition, counts from when the
  // definition came into force: there was no promise before it.
  private Long pendingSince;
  private Long inFlightSince;
  // A user asked for this refresh: it does not wait for linger or min_interval.
  private boolean pendingUrgent;
  // How many forced full refreshes were asked for: the n-th has its own refresh id.
  private long forcedRequests;
  // Time ranges a user asked to be recomputed by the pending refresh, even where nothing changed;
  // null when none. Turned into buckets where the source's schema is known (the refresh).
  private List<TimeRange> pendingRanges;
  // How many range refreshes were asked for: the n-th has its own refresh id.
  private long rangeRequests;
  // The source's current snapshot is being looked up, to pin the pending refresh to it.
  private boolean pinning;
  // Something became pending while the lookup ran, which the lookup may not have seen.
  private boolean changedWhilePinning;
  private InFlight inFlight;
  private Long lastRefreshAt;
  private Status status = Status.IDLE;
  private String lastError;
  private String waitingFor;
  private int failures;
  private Long retryAt;
  private LastRefresh last;
  private List<LastRefresh> recent = new ArrayList<>();
  private String progress;

  /** For Jackson. */
  ViewState() {}

  /** A new view: everything is dirty until its first refresh, which catches up with the source. */
  public static ViewState created(StoredView view, long now) {
    ViewState state = new ViewState();
    state.view = view;
    state.catchUp(DirtyBuckets.all("first refresh of the view"), now);
    state.unreflected(now);
    return state;
  }

  /** The definition changed: everything is dirty again. */
  public void redefine(StoredView changed, long now) {
    this.view = changed;
    catchUp(DirtyBuckets.all("view definition changed"), now);
    unreflected(now);
  }

  /** Only settings or the revision changed (same version): the rows stay valid. */
  public void updateSettings(StoredView changed) {
    this.view = changed;
  }

  /**
   * A user asked for a refresh now: everything when {@code full} (pinned again to the source's
   * current snapshot), otherwise whatever is pending, catching up from the target's bookmark.
   */
  public void requestRefresh(boolean full, long now) {
    if (full) {
      forcedRequests++;
      merge(DirtyBuckets.all("full refresh requested"), now);
      pendingScope = Scope.FORCED;
      clearPendingSnapshot();
    } else {
      catchUp(DirtyBuckets.none(), now);
    }
    pendingUrgent = true;
    // An explicit request runs now, not after the failure backoff.
    retryAt = null;
  }

  /**
   * A user asked for every bucket overlapping {@code range} to be recomputed now, besides whatever
   * is pending, at the pending snapshot or the source's current one: a refresh of its own even when
   * the target already reflects that snapshot.
   */
  public void requestRange(TimeRange range, long now) {
    rangeRequests++;
    addRanges(List.of(range));
    catchUp(DirtyBuckets.none(), now);
    pendingUrgent = true;
    retryAt = null;
  }

  private void addRanges(List<TimeRange> ranges) {
    if (ranges == null || ranges.isEmpty()) {
      return;
    }
    List<TimeRange> all =
        pendingRanges == null ? new ArrayList<>() : new ArrayList<>(pendingRanges);
    all.addAll(ranges);
    pendingRanges = all;
  }

  /**
   * Merges the buckets a source snapshot changed, unless the target already reflects it. Changes
   * reach a view in its source's commit order, so the latest names the snapshot to read: after a
   * rollback, the rolled-back current snapshot replaces a pending one no longer in the history.
   *
   * @param source the view's source table; a change of another table (the view was redefined onto a
   *     new source) is ignored
   * @param table the table the change is of
   */
  public void addChange(String source, String table, DirtyBuckets dirty, Pin snapshot, long now) {
    if (!source.equals(table)) {
      return;
    }
    boolean sameTable = Objects.equals(snapshot.tableUuid(), watermarkTableUuid);
    if (sameTable
        && watermarkSequence != null
        && snapshot.sequenceNumber() <= watermarkSequence
        && !dirty.full()) {
      return;
    }
    merge(dirty, now);
    if (pendingScope == null) {
      pendingScope = Scope.CHANGES;
    }
    unreflected(snapshot.committedAt());
    pendingSnapshot = snapshot.snapshotId();
    pendingSequence = snapshot.sequenceNumber();
    pendingCommittedAt = snapshot.committedAt();
    pendingTableUuid = snapshot.tableUuid();
  }

  private void catchUp(DirtyBuckets dirty, long now) {
    merge(dirty, now);
    if (pendingScope != Scope.FORCED) {
      pendingScope = Scope.CATCH_UP;
    }
    // A change may come later and name a snapshot; until then the current one will be pinned.
  }

  private void merge(DirtyBuckets dirty, long now) {
    DirtyBuckets merged = pending == null ? dirty : pending.toDirtyBuckets().union(dirty);
    pending = StoredDirty.of(merged);
    if (pinning) {
      changedWhilePinning = true;
    }
    if (firstPendingAt == null) {
      firstPendingAt = now;
    }
    if (status == Status.IDLE) {
      status = Status.PENDING;
    }
  }

  private void clearPendingSnapshot() {
    pendingSnapshot = null;
    pendingSequence = null;
    pendingCommittedAt = null;
    pendingTableUuid = null;
  }

  /** When the pending refresh is due (epoch millis), or null when nothing can start. */
  public Long dueAt() {
    if (inFlight != null || pinning || pending == null) {
      return null;
    }
    if (retryAt != null) {
      return retryAt;
    }
    if (pendingUrgent || (watermark == null && last == null)) {
      return firstPendingAt;
    }
    long due = firstPendingAt + view.lingerMs();
    if (view.minIntervalMs() > 0 && lastRefreshAt != null) {
      due = Math.max(due, lastRefreshAt + view.minIntervalMs());
    }
    return due;
  }

  /** True when the pending refresh may start at {@code now}. */
  public boolean isDue(long now) {
    Long due = dueAt();
    return due != null && now >= due;
  }

  /** True when the pending refresh has no source snapshot yet: the current one must be pinned. */
  public boolean needsPin() {
    return pending != null && pendingSnapshot == null;
  }

  /** The current snapshot of the source is being looked up. */
  public void pinning() {
    pinning = true;
    changedWhilePinning = false;
  }

  /** The source's current snapshot, looked up for the pending refresh. */
  public void pinned(Pin current) {
    pinning = false;
    changedWhilePinning = false;
    if (pending != null && pendingSnapshot == null) {
      // A catch-up found a snapshot no change named: its commit is unreflected, unless the target
      // reflects it already (a refresh asked for with nothing new).
      if (!Objects.equals(watermark, current.snapshotId())) {
        unreflected(current.committedAt());
      }
      pendingSnapshot = current.snapshotId();
      pendingSequence = current.sequenceNumber();
      pendingCommittedAt = current.committedAt();
      pendingTableUuid = current.tableUuid();
    }
  }

  /**
   * The source had no snapshot when it was looked up: there is nothing to compute until its first
   * commit. What became pending during the lookup is never dropped, since the lookup may have run
   * before it: a change names its snapshot and is refreshed from it; anything else (a request)
   * needs the source to be looked up again, which {@link #needsPin} then says.
   */
  public void sourceEmpty() {
    pinning = false;
    if (!changedWhilePinning) {
      clearPending();
      status = Status.IDLE;
    }
    changedWhilePinning = false;
  }

  /** The refresh of the pending changes starts now, under {@code refreshId}. */
  public InFlight start(String refreshId, long now) {
    inFlight =
        new InFlight(
            refreshId,
            pendingSnapshot,
            pendingSequence,
            pendingCommittedAt,
            pendingTableUuid,
            watermark,
            pending,
            pendingScope == null ? Scope.CATCH_UP : pendingScope,
            view.version(),
            now,
            pendingRanges);
    inFlightSince = pendingSince;
    clearPending();
    status = Status.REFRESHING;
    progress = null;
    return inFlight;
  }

  private void clearPending() {
    pending = null;
    pendingScope = null;
    pendingUrgent = false;
    firstPendingAt = null;
    pendingSince = null;
    pendingRanges = null;
    clearPendingSnapshot();
  }

  /**
   * The refresh in flight brought the target to {@code reached} (or found it there); null when the
   * target moved on without it (a newer definition or another instance committed past it).
   */
  public void complete(LastRefresh outcome, Pin reached, long now) {
    if (reached != null) {
      watermark = reached.snapshotId();
      watermarkSequence = reached.sequenceNumber();
      watermarkTableUuid = reached.tableUuid();
    }
    lastRefreshAt = now;
    // Changes that arrived during the refresh but that the reached snapshot already held.
    if (pending != null
        && pendingScope == Scope.CHANGES
        && !pending.full()
        && pendingSequence != null
        && watermarkSequence != null
        && Objects.equals(pendingTableUuid, watermarkTableUuid)
        && pendingSequence <= watermarkSequence) {
      clearPending();
    }
    inFlightSince = null;
    if (outcome != null && !outcome.equals(last)) {
      remember(outcome);
      last = outcome;
    }
    inFlight = null;
    failures = 0;
    retryAt = null;
    lastError = null;
    waitingFor = null;
    progress = null;
    status = pending == null ? Status.IDLE : Status.PENDING;
  }

  /**
   * The pinned snapshot is no longer in the source's history (expired, rolled back, the table
   * recreated): the refresh's buckets are pending again with every bucket, to be pinned to the
   * current snapshot, which the target's bookmark narrows down.
   */
  public void repin(String reason, long now) {
    InFlight stale = inFlight;
    inFlight = null;
    takeBackInFlightSince();
    status = Status.PENDING;
    progress = null;
    merge(DirtyBuckets.all(reason), now);
    if (stale != null) {
      addRanges(stale.ranges());
    }
    if (stale != null && stale.scope() == Scope.FORCED) {
      pendingScope = Scope.FORCED;
    } else if (pendingScope != Scope.FORCED) {
      pendingScope = Scope.CATCH_UP;
    }
    clearPendingSnapshot();
    pendingUrgent = true;
  }

  /** The refresh in flight failed: its buckets are pending again, retried after a backoff. */
  public void fail(String error, long now, Duration maxBackoff) {
    requeue(error, now, maxBackoff, true);
  }

  /**
   * The refresh could not start for a reason that is not an error and goes by itself (its source is
   * the target an upstream view has not created yet): its buckets are pending again, retried after
   * a backoff, and the view stays pending.
   */
  public void waitFor(String reason, long now, Duration maxBackoff) {
    requeue(reason, now, maxBackoff, false);
  }

  /** The refresh in flight was abandoned (its task closed, or its definition changed). */
  public void abandon(long now) {
    InFlight abandoned = inFlight;
    inFlight = null;
    takeBackInFlightSince();
    pinning = false;
    changedWhilePinning = false;
    if (abandoned != null) {
      putBack(abandoned, now);
    }
    status = pending == null ? Status.IDLE : Status.PENDING;
  }

  private void requeue(String error, long now, Duration maxBackoff, boolean isError) {
    InFlight failed = inFlight;
    pinning = false;
    changedWhilePinning = false;
    if (failed != null && isError) {
      remember(
          new LastRefresh(
              failed.refreshId(),
              "FAILED",
              null,
              now,
              now - failed.startedAt(),
              null,
              failed.sourceSnapshotId(),
              null,
              0,
              error));
    }
    inFlight = null;
    if (failed != null) {
      putBack(failed, now);
    }
    takeBackInFlightSince();
    failures++;
    long backoff = Math.min(maxBackoff.toMillis(), 1000L << Math.min(failures - 1, 20));
    retryAt = now + backoff;
    lastError = isError ? error : null;
    waitingFor = isError ? null : error;
    status = isError ? Status.ERROR : Status.PENDING;
    progress = null;
  }

  /** Puts the buckets of a refresh that did not complete back into the pending ones. */
  private void putBack(InFlight refresh, long now) {
    DirtyBuckets again =
        refresh.dirty() == null
            ? DirtyBuckets.all("refresh interrupted")
            : refresh.dirty().toDirtyBuckets();
    boolean hadSnapshot = pendingSnapshot != null;
    merge(again, now);
    addRanges(refresh.ranges());
    Scope scope = refresh.scope() == null ? Scope.CATCH_UP : refresh.scope();
    if (pendingScope == null
        || scope == Scope.FORCED
        || (scope == Scope.CATCH_UP && pendingScope == Scope.CHANGES)) {
      pendingScope = scope;
    }
    if (!hadSnapshot && refresh.sourceSnapshotId() != null) {
      Pin pin = refresh.pin();
      pendingSnapshot = pin.snapshotId();
      pendingSequence = pin.sequenceNumber();
      pendingCommittedAt = pin.committedAt();
      pendingTableUuid = pin.tableUuid();
    }
  }

  /** A source commit at {@code committedAt} is not reflected yet; the oldest one counts. */
  private void unreflected(long committedAt) {
    if (committedAt > 0 && (pendingSince == null || committedAt < pendingSince)) {
      pendingSince = committedAt;
    }
  }

  /** The commits of a refresh that did not complete are unreflected again. */
  private void takeBackInFlightSince() {
    if (inFlightSince != null) {
      unreflected(inFlightSince);
      inFlightSince = null;
    }
  }

  /**
   * The commit time (epoch millis) of the oldest source commit the target does not reflect yet, or
   * null when it reflects every commit seen.
   */
  public Long unreflectedSince() {
    if (inFlightSince == null) {
      return pendingSince;
    }
    return pendingSince == null ? inFlightSince : Math.min(pendingSince, inFlightSince);
  }

  /**
   * How far behind its source the target is at {@code now} (epoch millis): the time since the
   * oldest source commit it does not reflect yet, 0 when it reflects every commit seen.
   */
  public long stalenessMs(long now) {
    Long since = unreflectedSince();
    return since == null ? 0 : Math.max(0, now - since);
  }

  private void remember(LastRefresh refresh) {
    if (recent == null) {
      recent = new ArrayList<>();
    }
    recent.add(refresh);
    if (recent.size() > RECENT) {
      recent.remove(0);
    }
  }

  /** The view's definition as this state last saw it. */
  public StoredView view() {
    return view;
  }

  public Long watermark() {
    return watermark;
  }

  /** The source snapshot the target reflects, with its table, or null. */
  @JsonIgnore
  public Pin watermarkPin() {
    return watermark == null
        ? null
        : new Pin(
            watermark, watermarkSequence == null ? -1 : watermarkSequence, 0, watermarkTableUuid);
  }

  public InFlight inFlight() {
    return inFlight;
  }

  public boolean isPinning() {
    return pinning;
  }

  public Status status() {
    return status;
  }

  public String lastError() {
    return lastError;
  }

  /** Why the view waits (for an upstream view to create its source), or null. */
  public String waitingFor() {
    return waitingFor;
  }

  public int failures() {
    return failures;
  }

  public Long retryAt() {
    return retryAt;
  }

  public LastRefresh last() {
    return last;
  }

  /** The most recent refreshes, oldest first, failed attempts included. */
  public List<LastRefresh> recent() {
    return recent == null ? List.of() : List.copyOf(recent);
  }

  /** Buckets waiting for a refresh, or none. */
  @JsonIgnore
  public DirtyBuckets pending() {
    return pending == null ? DirtyBuckets.none() : pending.toDirtyBuckets();
  }

  /** Whether changes wait for a refresh. */
  @JsonIgnore
  public boolean hasPending() {
    return pending != null;
  }

  public Long pendingSnapshot() {
    return pendingSnapshot;
  }

  /** The pinned snapshot of the pending refresh, or null when it must be pinned. */
  @JsonIgnore
  public Pin pendingPin() {
    return pendingSnapshot == null
        ? null
        : new Pin(
            pendingSnapshot,
            pendingSequence == null ? -1 : pendingSequence,
            pendingCommittedAt == null ? 0 : pendingCommittedAt,
            pendingTableUuid);
  }

  /** What is known of the pending refresh's buckets. */
  public Scope pendingScope() {
    return pendingScope;
  }

  /** How many forced full refreshes were asked for. */
  public long forcedRequests() {
    return forcedRequests;
  }

  /** The time ranges the pending refresh is asked to recompute; empty when none. */
  public List<TimeRange> pendingRanges() {
    return pendingRanges == null ? List.of() : pendingRanges;
  }

  /** How many range refreshes were asked for. */
  public long rangeRequests() {
    return rangeRequests;
  }

  /** Progress of the refresh in flight, such as "3/10 chunks", or null. */
  public String progress() {
    return progress;
  }

  public void progress(String progress) {
    this.progress = progress;
  }
}
