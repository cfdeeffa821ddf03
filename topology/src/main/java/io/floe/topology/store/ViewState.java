package io.floe.topology.store;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonIgnore;
import io.floe.topology.bucket.DirtyBuckets;
import java.time.Duration;

/**
 * The maintain stage's state of one view (store {@link StoreNames#VIEW_STATE}): its definition, the
 * source snapshot its target reflects (the watermark), the buckets changed since, the refresh in
 * flight and the outcome of the last one.
 *
 * <p>The in-flight refresh is recorded before it starts, so that after a crash the new owner of the
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
    /** Changes wait for the debounce or max delay. */
    PENDING,
    /** A refresh is running. */
    REFRESHING,
    /** The last refresh failed; it is retried with backoff. */
    ERROR
  }

  /** A refresh that has been started and not yet completed. */
  public record InFlight(
      String refreshId,
      Long sourceSnapshotId,
      Long sequenceNumber,
      Long sourceCommittedAt,
      Long watermark,
      StoredDirty dirty,
      boolean forceFull,
      boolean catchUp,
      long startedAt) {}

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
  private StoredDirty pending;
  private Long pendingSnapshot;
  private Long pendingSequence;
  private Long pendingCommittedAt;
  private Long firstPendingAt;
  private Long lastPendingAt;
  private boolean pendingForceFull;
  private Long forceFullRequestedAt;
  // The next refresh's snapshot was pinned as the current one, not named by a change.
  private boolean pendingCatchUp;
  private InFlight inFlight;
  private Status status = Status.IDLE;
  private String lastError;
  private int failures;
  private Long retryAt;
  private LastRefresh last;
  private java.util.List<LastRefresh> recent = new java.util.ArrayList<>();
  private String progress;

  /** For Jackson. */
  ViewState() {}

  /** A new view: everything is dirty until its first refresh. */
  public static ViewState created(StoredView view, long now) {
    ViewState state = new ViewState();
    state.view = view;
    state.addPending(DirtyBuckets.all("first refresh of the view"), null, null, null, now);
    return state;
  }

  /** The definition changed: everything is dirty again. */
  public void redefine(StoredView changed, long now) {
    this.view = changed;
    addPending(DirtyBuckets.all("view definition changed"), null, null, null, now);
  }

  /** Only refresh settings changed (same version): the rows stay valid. */
  public void updateSettings(StoredView changed) {
    this.view = changed;
  }

  /**
   * A user asked for a refresh now: everything when {@code full}, otherwise whatever is pending (an
   * incremental refresh that also catches up from the target's bookmark).
   */
  public void requestRefresh(boolean full, long requestedAt, long now) {
    addPending(
        full ? DirtyBuckets.all("full refresh requested") : DirtyBuckets.none(),
        null,
        null,
        null,
        now);
    if (full) {
      pendingForceFull = true;
      forceFullRequestedAt = requestedAt;
    }
    // Start at the next tick, without waiting for the debounce.
    firstPendingAt = now - view.maxDelayMs();
  }

  /**
   * Merges the buckets a source snapshot changed, unless the target already reflects that snapshot.
   */
  public void addPending(
      DirtyBuckets dirty, Long snapshotId, Long sequence, Long committedAt, long now) {
    if (sequence != null
        && watermarkSequence != null
        && sequence <= watermarkSequence
        && !dirty.full()) {
      return;
    }
    DirtyBuckets merged = pending == null ? dirty : pending.toDirtyBuckets().union(dirty);
    pending = StoredDirty.of(merged);
    if (snapshotId != null
        && (pendingSequence == null || sequence == null || sequence >= pendingSequence)) {
      pendingSnapshot = snapshotId;
      pendingSequence = sequence;
      pendingCommittedAt = committedAt;
    }
    if (firstPendingAt == null) {
      firstPendingAt = now;
    }
    lastPendingAt = now;
    if (status == Status.IDLE) {
      status = Status.PENDING;
    }
  }

  /**
   * True when a refresh should start: nothing is in flight, there are pending changes, no retry
   * backoff is running, and the view has been quiet for its debounce or has waited its max delay. A
   * view that has never been refreshed, or one being retried, does not wait.
   */
  public boolean isDue(long now) {
    if (inFlight != null || pending == null) {
      return false;
    }
    if (retryAt != null) {
      return now >= retryAt;
    }
    if (watermark == null && last == null) {
      return true;
    }
    return now - lastPendingAt >= view.debounceMs() || now - firstPendingAt >= view.maxDelayMs();
  }

  /** Names the source snapshot the next refresh reads, when no change has named one. */
  public void pin(long snapshotId, long sequence, long committedAt) {
    if (pendingSnapshot == null) {
      pendingCatchUp = true;
      pendingSnapshot = snapshotId;
      pendingSequence = sequence;
      pendingCommittedAt = committedAt;
    }
  }

  /**
   * The id suffix that sets a requested full refresh apart from an ordinary refresh of the same
   * snapshot, or an empty string.
   */
  public String refreshIdSuffix() {
    return pendingForceFull ? "/full@" + forceFullRequestedAt : "";
  }

  /** Moves the pending changes into a refresh that starts now. */
  public InFlight start(String refreshId, long now) {
    inFlight =
        new InFlight(
            refreshId,
            pendingSnapshot,
            pendingSequence,
            pendingCommittedAt,
            watermark,
            pending,
            pendingForceFull,
            pendingCatchUp,
            now);
    pending = null;
    pendingForceFull = false;
    forceFullRequestedAt = null;
    pendingCatchUp = false;
    pendingSnapshot = null;
    pendingSequence = null;
    pendingCommittedAt = null;
    firstPendingAt = null;
    lastPendingAt = null;
    status = Status.REFRESHING;
    progress = null;
    return inFlight;
  }

  /** The refresh in flight reached {@code sourceSnapshotId}. */
  public void complete(LastRefresh outcome, Long sourceSnapshotId, Long sequence, long now) {
    if (sourceSnapshotId != null) {
      watermark = sourceSnapshotId;
      watermarkSequence = sequence != null ? sequence : watermarkSequence;
    }
    // Changes that arrived during the refresh but that the pinned snapshot already held.
    if (pending != null
        && !pending.full()
        && !pendingForceFull
        && pendingSequence != null
        && watermarkSequence != null
        && pendingSequence <= watermarkSequence) {
      pending = null;
      pendingSnapshot = null;
      pendingSequence = null;
      pendingCommittedAt = null;
      firstPendingAt = null;
      lastPendingAt = null;
    }
    if (outcome != null && outcome != last) {
      remember(outcome);
    }
    last = outcome;
    inFlight = null;
    failures = 0;
    retryAt = null;
    lastError = null;
    progress = null;
    status = pending == null ? Status.IDLE : Status.PENDING;
  }

  private void remember(LastRefresh refresh) {
    if (recent == null) {
      recent = new java.util.ArrayList<>();
    }
    recent.add(refresh);
    if (recent.size() > RECENT) {
      recent.remove(0);
    }
  }

  /** The refresh in flight failed: its buckets are pending again, retried after a backoff. */
  public void fail(String error, long now, Duration maxBackoff) {
    requeue(error, now, maxBackoff, true);
  }

  /**
   * The refresh in flight could not start for a reason that is not an error and goes by itself (its
   * source is the target an upstream view has not created yet): its buckets are pending again,
   * retried after a backoff, and the view stays pending.
   */
  public void waitFor(String reason, long now, Duration maxBackoff) {
    requeue(reason, now, maxBackoff, false);
  }

  private void requeue(String error, long now, Duration maxBackoff, boolean isError) {
    InFlight failed = inFlight;
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
    if (failed != null && failed.dirty() != null) {
      DirtyBuckets again = failed.dirty().toDirtyBuckets();
      pending = StoredDirty.of(pending == null ? again : again.union(pending.toDirtyBuckets()));
      pendingForceFull |= failed.forceFull();
      pendingCatchUp |= failed.catchUp();
      if (pendingSnapshot == null) {
        pendingSnapshot = failed.sourceSnapshotId();
        pendingSequence = failed.sequenceNumber();
        pendingCommittedAt = failed.sourceCommittedAt();
      }
      if (firstPendingAt == null) {
        firstPendingAt = now;
        lastPendingAt = now;
      }
    }
    failures++;
    long backoff = Math.min(maxBackoff.toMillis(), 1000L << Math.min(failures - 1, 20));
    retryAt = now + backoff;
    lastError = isError ? error : null;
    status = isError ? Status.ERROR : Status.PENDING;
    progress = null;
  }

  /** The view's current definition. */
  public StoredView view() {
    return view;
  }

  public Long watermark() {
    return watermark;
  }

  public InFlight inFlight() {
    return inFlight;
  }

  public Status status() {
    return status;
  }

  public String lastError() {
    return lastError;
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
  public java.util.List<LastRefresh> recent() {
    return recent == null ? java.util.List.of() : java.util.List.copyOf(recent);
  }

  /** Buckets waiting for a refresh, or none. */
  @JsonIgnore
  public DirtyBuckets pending() {
    return pending == null ? DirtyBuckets.none() : pending.toDirtyBuckets();
  }

  public Long pendingSnapshot() {
    return pendingSnapshot;
  }

  /** Progress of the refresh in flight, such as "3/10 chunks", or null. */
  public String progress() {
    return progress;
  }

  public void progress(String progress) {
    this.progress = progress;
  }
}
