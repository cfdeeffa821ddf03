package io.floe.topology.maintain;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.store.StoredDirty;
import io.floe.topology.store.StoredView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

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
   * A refresh that has been started and not yet completed. Stored with its pinned snapshot's fields
   * flat, under the names earlier releases gave them, so that either release reads the other's.
   *
   * @param pin the source snapshot it reads; null only in values of releases that could start a
   *     refresh without one
   */
  public record InFlight(
      RefreshId refreshId,
      @JsonIgnore SourceSnapshot pin,
      Long watermark,
      StoredDirty dirty,
      Scope scope,
      String version,
      long startedAt,
      List<TimeRange> ranges) {

    @JsonCreator
    static InFlight stored(
        @JsonProperty("refreshId") RefreshId refreshId,
        @JsonProperty("sourceSnapshotId") Long sourceSnapshotId,
        @JsonProperty("sequenceNumber") Long sequenceNumber,
        @JsonProperty("sourceCommittedAt") Long sourceCommittedAt,
        @JsonProperty("tableUuid") String tableUuid,
        @JsonProperty("watermark") Long watermark,
        @JsonProperty("dirty") StoredDirty dirty,
        @JsonProperty("scope") Scope scope,
        @JsonProperty("version") String version,
        @JsonProperty("startedAt") long startedAt,
        @JsonProperty("ranges") List<TimeRange> ranges) {
      return new InFlight(
          refreshId,
          SourceSnapshot.recorded(tableUuid, sourceSnapshotId, sequenceNumber, sourceCommittedAt),
          watermark,
          dirty,
          scope,
          version,
          startedAt,
          ranges);
    }

    @JsonProperty("sourceSnapshotId")
    private Long storedSnapshotId() {
      return pin == null ? null : pin.snapshotId();
    }

    @JsonProperty("sequenceNumber")
    private Long storedSequenceNumber() {
      return pin == null ? null : pin.sequenceNumber();
    }

    @JsonProperty("sourceCommittedAt")
    private Long storedCommittedAt() {
      return pin == null ? null : pin.committedAt();
    }

    @JsonProperty("tableUuid")
    private String storedTableUuid() {
      return pin == null ? null : pin.tableUuid();
    }
  }

  /**
   * The outcome of a completed (or failed) refresh.
   *
   * @param dimensionSnapshotIds the snapshot of each dimension the refresh joined, by table (one
   *     without a snapshot left out); null for a view of one table, a failed refresh, and in states
   *     of earlier releases, which it is left out of the stored value for, as they stored it
   */
  public record LastRefresh(
      RefreshId refreshId,
      String mode,
      String reason,
      long finishedAt,
      long durationMs,
      Long targetSnapshotId,
      Long sourceSnapshotId,
      Long lagMs,
      long rowsWritten,
      String error,
      @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Long> dimensionSnapshotIds) {

    /** The snapshot of each dimension {@code outcome} read, by table; null when it joined none. */
    static Map<String, Long> dimensionSnapshotIds(RefreshOutcome outcome) {
      if (outcome.dimensions().isEmpty()) {
        return null;
      }
      Map<String, Long> ids = new TreeMap<>();
      for (RefreshOutcome.Dimension dimension : outcome.dimensions()) {
        if (dimension.snapshot() != null) {
          ids.put(dimension.table().toString(), dimension.snapshot().snapshotId());
        }
      }
      return ids;
    }
  }

  /** How many recent refreshes the state keeps, for the API and the lag chart. */
  static final int RECENT = 30;

  private StoredView view;
  // The source snapshot the target reflects (the watermark), or null; stored flat (see creator),
  // without its commit time, which no decision reads (0 once read back).
  @JsonIgnore private SourceSnapshot reflected;
  private StoredDirty pending;
  // The snapshot the pending refresh reads, or null while it must be pinned; stored flat.
  @JsonIgnore private SourceSnapshot pendingPin;
  private Scope pendingScope;
  private Long firstPendingAt;
  // Staleness: the commit time (epoch millis) of the oldest source commit (of the source table or
  // of a dimension the view joins) the target does not reflect, among the pending changes and among
  // those of the refresh in flight; null
  // when there is none. A source that is another view's target counts from the commits of the
  // root source its snapshots bring in (SourceSnapshot#originCommittedAt), so that staleness is
  // end to end. A view's first refresh, or one of a new definition, counts from when the
  // definition came into force: there was no promise before it.
  private Long pendingSince;
  private Long inFlightSince;

  // When the definition came into force (epoch millis): a commit before it counts from then. Null
  // in states of earlier releases, and left out of the stored value then, as they stored it.
  @JsonInclude(JsonInclude.Include.NON_NULL)
  private Long inForceSince;

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

  private ViewState() {}

  /**
   * A state as stored: the source snapshots it holds are stored with their fields flat, under the
   * names earlier releases gave them, so that either release reads the other's.
   */
  @JsonCreator
  private ViewState(
      @JsonProperty("watermark") Long watermark,
      @JsonProperty("watermarkSequence") Long watermarkSequence,
      @JsonProperty("watermarkTableUuid") String watermarkTableUuid,
      @JsonProperty("pendingSnapshot") Long pendingSnapshot,
      @JsonProperty("pendingSequence") Long pendingSequence,
      @JsonProperty("pendingCommittedAt") Long pendingCommittedAt,
      @JsonProperty("pendingTableUuid") String pendingTableUuid) {
    this.reflected =
        SourceSnapshot.recorded(watermarkTableUuid, watermark, watermarkSequence, null);
    this.pendingPin =
        SourceSnapshot.recorded(
            pendingTableUuid, pendingSnapshot, pendingSequence, pendingCommittedAt);
  }

  @JsonProperty("watermarkSequence")
  private Long storedWatermarkSequence() {
    return reflected == null ? null : reflected.sequenceNumber();
  }

  @JsonProperty("watermarkTableUuid")
  private String storedWatermarkTableUuid() {
    return reflected == null ? null : reflected.tableUuid();
  }

  @JsonProperty("pendingSequence")
  private Long storedPendingSequence() {
    return pendingPin == null ? null : pendingPin.sequenceNumber();
  }

  @JsonProperty("pendingCommittedAt")
  private Long storedPendingCommittedAt() {
    return pendingPin == null ? null : pendingPin.committedAt();
  }

  @JsonProperty("pendingTableUuid")
  private String storedPendingTableUuid() {
    return pendingPin == null ? null : pendingPin.tableUuid();
  }

  /** A new view: everything is dirty until its first refresh, which catches up with the source. */
  public static ViewState created(StoredView view, long now) {
    ViewState state = new ViewState();
    state.view = view;
    state.inForceSince = now;
    state.catchUp(DirtyBuckets.all("first refresh of the view"), now);
    state.unreflected(now);
    return state;
  }

  /** The definition changed: everything is dirty again. */
  public void redefine(StoredView changed, long now) {
    this.view = changed;
    inForceSince = now;
    // The commits still pending were promised under the definition that went.
    if (pendingSince != null && pendingSince < now) {
      pendingSince = now;
    }
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
      pendingPin = null;
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
  public void addChange(
      String source, String table, DirtyBuckets dirty, SourceSnapshot snapshot, long now) {
    if (!source.equals(table)) {
      return;
    }
    if (snapshot.isReflectedBy(reflected) && !dirty.full()) {
      return;
    }
    merge(dirty, now);
    if (pendingScope == null) {
      pendingScope = Scope.CHANGES;
    }
    if (inFlight != null && snapshot.isReflectedBy(inFlight.pin())) {
      // A change that reaches the view after its refresh was pinned to a snapshot holding it (a
      // catch-up, a first refresh): that refresh brings the commit in, the next one need not.
      long since = promised(snapshot.originCommittedAt());
      if (since > 0 && (inFlightSince == null || since < inFlightSince)) {
        inFlightSince = since;
      }
    } else {
      unreflected(snapshot.originCommittedAt());
    }
    pendingPin = snapshot;
  }

  /**
   * A commit of a dimension the view joins (DESIGN §3.10), in {@code snapshot}: the next refresh
   * catches up with the source, pinning each dimension's current snapshot, and the planner tells
   * from the bookmark what the dimension changed. It is a commit of a source like the others: it
   * waits for {@code linger} and {@code min_interval}, and the view is stale by its age until a
   * refresh that starts after it completes (one in flight may have pinned the dimension before it).
   */
  public void addDimensionChange(SourceSnapshot snapshot, long now) {
    catchUp(DirtyBuckets.none(), now);
    unreflected(snapshot.originCommittedAt());
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

  /** When the pending refresh is due (epoch millis), or null when nothing can start. */
  public Long dueAt() {
    if (inFlight != null || pinning || pending == null) {
      return null;
    }
    if (retryAt != null) {
      return retryAt;
    }
    if (pendingUrgent || (reflected == null && last == null)) {
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
    return pending != null && pendingPin == null;
  }

  /** The current snapshot of the source is being looked up. */
  public void pinning() {
    pinning = true;
    changedWhilePinning = false;
  }

  /** The source's current snapshot, looked up for the pending refresh. */
  public void pinned(SourceSnapshot current) {
    pinning = false;
    changedWhilePinning = false;
    if (pending != null && pendingPin == null) {
      // A catch-up found a snapshot no change named: its commit is unreflected, unless the target
      // reflects it already (a refresh asked for with nothing new).
      if (!Objects.equals(watermark(), current.snapshotId())) {
        unreflected(current.originCommittedAt());
      }
      pendingPin = current;
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
  public InFlight start(RefreshId refreshId, long now) {
    inFlight =
        new InFlight(
            refreshId,
            pendingPin,
            watermark(),
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
    pendingPin = null;
  }

  /**
   * The refresh in flight brought the target to {@code reached} (or found it there); null when the
   * target moved on without it (a newer definition or another instance committed past it).
   */
  public void complete(LastRefresh outcome, SourceSnapshot reached, long now) {
    if (reached != null) {
      reflected = reached;
    }
    lastRefreshAt = now;
    // Changes that arrived during the refresh but that the reached snapshot already held.
    if (pending != null
        && pendingScope == Scope.CHANGES
        && !pending.full()
        && pendingPin != null
        && pendingPin.isReflectedBy(reflected)) {
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
    pendingPin = null;
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
              failed.pin() == null ? null : failed.pin().snapshotId(),
              null,
              0,
              error,
              null));
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
    boolean hadSnapshot = pendingPin != null;
    merge(again, now);
    addRanges(refresh.ranges());
    Scope scope = refresh.scope() == null ? Scope.CATCH_UP : refresh.scope();
    if (pendingScope == null
        || scope == Scope.FORCED
        || (scope == Scope.CATCH_UP && pendingScope == Scope.CHANGES)) {
      pendingScope = scope;
    }
    if (!hadSnapshot && refresh.pin() != null) {
      pendingPin = refresh.pin();
    }
  }

  /**
   * A source commit at {@code committedAt} is not reflected yet; the oldest one counts, and none
   * counts from before the definition came into force: there was no promise before it.
   */
  private void unreflected(long committedAt) {
    long since = promised(committedAt);
    if (since > 0 && (pendingSince == null || since < pendingSince)) {
      pendingSince = since;
    }
  }

  /** Where the staleness of a commit at {@code committedAt} counts from (0: unknown). */
  private long promised(long committedAt) {
    return committedAt > 0 && inForceSince != null
        ? Math.max(committedAt, inForceSince)
        : committedAt;
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
   * The commit time (epoch millis) of the oldest source commit the refresh in flight brings into
   * the target, which its commits record for the views reading the target; null when it brings in
   * none (a forced refresh of a current view) or none is in flight.
   */
  public Long inFlightSince() {
    return inFlight == null ? null : inFlightSince;
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

  /** The id of the source snapshot the target reflects, or null. */
  @JsonProperty("watermark")
  public Long watermark() {
    return reflected == null ? null : reflected.snapshotId();
  }

  /** The source snapshot the target reflects, with its table, or null. */
  public SourceSnapshot watermarkPin() {
    return reflected;
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

  /** The id of the snapshot the pending refresh reads, or null when it must be pinned. */
  @JsonProperty("pendingSnapshot")
  public Long pendingSnapshot() {
    return pendingPin == null ? null : pendingPin.snapshotId();
  }

  /** The pinned snapshot of the pending refresh, or null when it must be pinned. */
  public SourceSnapshot pendingPin() {
    return pendingPin;
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
