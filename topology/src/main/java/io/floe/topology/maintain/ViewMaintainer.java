package io.floe.topology.maintain;

import io.floe.schemas.RefreshMode;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.SharedMetadataTables;
import io.floe.topology.refresh.RefreshCancelledException;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefreshException;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decisions of the maintain stage for one view (DESIGN §2, §6): what a dirty update, a change
 * of definition, the lookup of the source's current snapshot and the end of a refresh do to the
 * view's {@link ViewState}, what is due to start next, and how a failure is classified. Pure: no
 * Kafka, no I/O, the time given; each decision updates the state it is given, and says what to
 * start ({@link Next}) or what to report ({@link Report}). The processor reads and writes the
 * states, runs what a decision starts off the stream thread, and publishes the reports.
 */
public final class ViewMaintainer {

  private static final Logger LOG = LoggerFactory.getLogger(ViewMaintainer.class);

  private final ViewIndex index;
  private final Duration maxBackoff;

  /** What is to start for a view next. */
  public sealed interface Next {
    /** Nothing: no refresh is due. */
    record Idle() implements Next {}

    /** A look at the source's current snapshot, to pin the due refresh to it. */
    record Pin(TableName source) implements Next {}

    /** The due refresh, recorded in flight in the state. */
    record Refresh(RefreshRequest request) implements Next {}

    /** Nothing yet: the definition in force changed, which the state is to be synced to first. */
    record Resync() implements Next {}
  }

  /** What a lookup of the source's current snapshot found. */
  public sealed interface Lookup {
    /** Its current snapshot. */
    record Current(SourceSnapshot pin) implements Lookup {}

    /** The source has no snapshot yet. */
    record Empty() implements Lookup {}

    /** The source does not exist. */
    record Missing(TableName source) implements Lookup {}

    /** Catalog I/O, for Floe's I/O executor: what {@code source} holds now. */
    static Lookup current(Function<String, Catalog> catalogs, TableName source) {
      Table table;
      try {
        table = SharedMetadataTables.load(catalogs.apply(source.catalog()), source.identifier());
      } catch (NoSuchTableException e) {
        return new Missing(source);
      }
      Snapshot current = table.currentSnapshot();
      return current == null ? new Empty() : new Current(SourceSnapshot.of(table, current));
    }
  }

  /** What a decision reports, for the processor to publish and count. */
  public sealed interface Report {
    /**
     * A refresh that brought the target to a new source snapshot, to publish once per refresh id.
     *
     * @param refresh the refresh as it was in flight
     * @param lagMs from the source commit to the target commit; null when there was none
     * @param stalenessMs the wait of the oldest source commit the refresh brought into the target
     */
    record Refreshed(
        String view,
        StoredView definition,
        ViewState.InFlight refresh,
        RefreshOutcome outcome,
        RefreshMode mode,
        long durationMs,
        Long lagMs,
        long stalenessMs,
        long at)
        implements Report {}

    /**
     * A failed refresh or lookup, which the view retries after a backoff.
     *
     * @param refresh the refresh in flight; null when the lookup of the source failed
     */
    record Failed(
        String view, StoredView definition, ViewState.InFlight refresh, String message, long at)
        implements Report {}

    /** A compaction of the target that ran after a refresh. */
    record Compacted(String view, RefreshOutcome.Compaction compaction) implements Report {}
  }

  /**
   * @param index the views in force
   * @param maxBackoff the longest wait before retrying a failing view
   */
  public ViewMaintainer(ViewIndex index, Duration maxBackoff) {
    this.index = index;
    this.maxBackoff = maxBackoff;
  }

  /**
   * The state of {@code view} with a dirty update merged: its state, or a new one if the view is in
   * force and has none; null when it is not in force or there is no update.
   */
  public ViewState received(String view, ViewState state, DirtyUpdate update, long now) {
    if (update == null) {
      return null;
    }
    if (state == null) {
      Optional<CompiledView> defined = index.view(view);
      if (defined.isEmpty()) {
        return null;
      }
      state = ViewState.created(StoredView.of(defined.get()), now);
    }
    if (update instanceof DirtyUpdate.Request request && request.dimensionSnapshot() != null) {
      LOG.debug("View {} refreshes for {}", view, request.requestedBy());
      state.addDimensionChange(request.dimensionSnapshot(), now);
    } else if (update instanceof DirtyUpdate.Request request) {
      boolean full = request.kind() == DirtyUpdate.Request.Kind.FULL_REFRESH;
      LOG.info(
          "{} of view {} requested{}",
          full
              ? "A full refresh"
              : request.range() != null ? "A refresh of " + request.range() : "A refresh",
          view,
          request.requestedBy() == null ? "" : " by " + request.requestedBy());
      if (!full && request.range() != null) {
        state.requestRange(request.range(), now);
      } else {
        state.requestRefresh(full, now);
      }
    } else if (update instanceof DirtyUpdate.Change change) {
      state.addChange(
          sourceName(state.view()),
          change.table(),
          change.dirty().toDirtyBuckets(),
          change.snapshot(),
          now);
    }
    return state;
  }

  /**
   * The state of {@code view} brought to its definition in force: a new state for a new view, one
   * that recomputes every bucket for a new version, new settings; null when nothing changed.
   */
  public ViewState synced(CompiledView view, ViewState state, long now) {
    StoredView definition = StoredView.of(view);
    if (state == null) {
      LOG.info("View {} is new: its first refresh recomputes every bucket", view.name());
      return ViewState.created(definition, now);
    } else if (!definition.version().equals(state.view().version())) {
      LOG.info("View {} changed: recomputing every bucket", view.name());
      state.redefine(definition, now);
    } else if (!definition.equals(state.view())) {
      state.updateSettings(definition);
    } else {
      return null;
    }
    return state;
  }

  /** What starts for {@code view} now: its due refresh, pinning the source's snapshot first. */
  public Next next(String view, ViewState state, long now) {
    if (!state.isDue(now)) {
      return new Next.Idle();
    }
    if (state.needsPin()) {
      state.pinning();
      return new Next.Pin(sourceOf(state.view()));
    }
    Optional<CompiledView> defined = index.view(view);
    if (defined.isEmpty() || !defined.get().version().equals(state.view().version())) {
      return new Next.Resync();
    }
    CompiledView compiled = defined.get();
    SourceSnapshot pin = state.pendingPin();
    RefreshId id;
    if (state.pendingScope() == ViewState.Scope.FORCED) {
      id = RefreshId.forced(view, compiled.version(), pin.snapshotId(), state.forcedRequests());
    } else if (!state.pendingRanges().isEmpty()) {
      id = RefreshId.ranged(view, compiled.version(), pin.snapshotId(), state.rangeRequests());
    } else {
      id = RefreshId.of(view, compiled.version(), pin.snapshotId());
    }
    ViewState.InFlight refresh = state.start(id, now);
    LOG.debug("Refresh {} of view {} starts: {}", id, view, refresh.dirty().toDirtyBuckets());
    return new Next.Refresh(request(compiled, state));
  }

  /**
   * The refresh the state records in flight, to run again after a crash or a rebalance; empty, and
   * the refresh abandoned, when its definition is no longer in force.
   */
  public Optional<RefreshRequest> rerun(String view, ViewState state, long now) {
    ViewState.InFlight refresh = state.inFlight();
    Optional<CompiledView> defined = index.view(view);
    if (defined.isEmpty()
        || !defined.get().version().equals(refresh.version())
        || refresh.pin() == null) {
      state.abandon(now);
      return Optional.empty();
    }
    LOG.info("Re-running refresh {} of view {}", refresh.refreshId(), view);
    return Optional.of(request(defined.get(), state));
  }

  /** The refresh {@code state} records in flight. */
  private static RefreshRequest request(CompiledView compiled, ViewState state) {
    ViewState.InFlight refresh = state.inFlight();
    DirtyBuckets dirty =
        refresh.dirty() == null ? DirtyBuckets.none() : refresh.dirty().toDirtyBuckets();
    boolean ranged = refresh.ranges() != null && !refresh.ranges().isEmpty();
    RefreshRequest.Scope scope =
        switch (refresh.scope() == null ? ViewState.Scope.CATCH_UP : refresh.scope()) {
          case CHANGES, CATCH_UP ->
              ranged
                  ? new RefreshRequest.Ranged(dirty, refresh.ranges())
                  : refresh.scope() == ViewState.Scope.CHANGES
                      ? new RefreshRequest.Changes(dirty)
                      : new RefreshRequest.CatchUp(dirty);
          case FORCED ->
              new RefreshRequest.Forced(dirty.full() ? dirty.reason() : "full refresh requested");
        };
    return new RefreshRequest(
        compiled,
        refresh.refreshId(),
        refresh.pin().tableUuid(),
        refresh.watermark(),
        scope,
        state.inFlightSince());
  }

  /** Applies what the lookup of the source's current snapshot found. */
  public List<Report> looked(String view, ViewState state, Lookup found, long now) {
    if (found instanceof Lookup.Current current) {
      state.pinned(current.pin());
      return List.of();
    } else if (found instanceof Lookup.Missing missing) {
      return failed(
          view, state, new ViewRefreshException.SourceMissing(view, missing.source()), now);
    }
    LOG.info("The source of view {} has no snapshot yet: nothing to refresh", view);
    state.sourceEmpty();
    return List.of();
  }

  /** Whether {@code state} waits for the end of refresh {@code refreshId}. */
  public boolean awaits(ViewState state, RefreshId refreshId) {
    return state.inFlight() != null && state.inFlight().refreshId().equals(refreshId);
  }

  /** Applies the outcome of the refresh in flight. */
  public List<Report> completed(String view, ViewState state, RefreshOutcome outcome, long now) {
    ViewState.InFlight refresh = state.inFlight();
    if (outcome.status() == RefreshOutcome.Status.STALE_PIN) {
      LOG.info(
          "Refresh {} of view {} pins the source again: {}",
          refresh.refreshId(),
          view,
          outcome.reason());
      state.repin(outcome.reason(), now);
      return List.of();
    }
    long duration = now - refresh.startedAt();
    boolean ahead = outcome.status() == RefreshOutcome.Status.TARGET_AHEAD;
    // One refresh event per refresh id: a re-run that finds its change applied reports it only if
    // the earlier run could not (a crash between the Iceberg commit and the Kafka transaction).
    boolean reported =
        ahead
            || (outcome.status() == RefreshOutcome.Status.ALREADY_APPLIED
                && state.last() != null
                && outcome.refreshId().equals(state.last().refreshId()));
    Long lag =
        ahead || outcome.target().committedAt() == null
            ? null
            : Math.max(0, outcome.target().committedAt() - outcome.newestReadCommittedAt());
    RefreshMode mode =
        ahead ? RefreshMode.SKIPPED : outcome.full() ? RefreshMode.FULL : RefreshMode.INCREMENTAL;
    SourceSnapshot reached = ahead ? null : outcome.source();
    // What this refresh ended: the wait of the oldest commit it brought into the target.
    long staleness = state.stalenessMs(now);
    state.complete(
        reported
            ? state.last()
            : new ViewState.LastRefresh(
                outcome.refreshId(),
                mode.name(),
                outcome.reason(),
                now,
                duration,
                outcome.target().snapshotId(),
                outcome.source().snapshotId(),
                lag,
                outcome.work().rowsWritten(),
                null,
                ViewState.LastRefresh.dimensionSnapshotIds(outcome)),
        reached,
        now);
    List<Report> reports = new ArrayList<>();
    if (outcome.compaction() != null) {
      reports.add(new Report.Compacted(view, outcome.compaction()));
    }
    if (reported) {
      LOG.debug(
          "Refresh {} of view {} had nothing new to do: {} {}",
          outcome.refreshId(),
          view,
          outcome.status(),
          outcome.reason() == null ? "" : outcome.reason());
      return reports;
    }
    LOG.info(
        "View {} refreshed ({}{}) to source snapshot {} in {} ms: target snapshot {}, {} rows"
            + " written, {} replaced, {} source rows read, lag {} ms, object-store requests {}",
        view,
        outcome.mode().label(),
        outcome.reason() == null ? "" : ": " + outcome.reason(),
        outcome.source().snapshotId(),
        duration,
        outcome.target().snapshotId(),
        outcome.work().rowsWritten(),
        outcome.work().rowsRemoved(),
        outcome.work().rowsRead(),
        lag,
        outcome.requests());
    reports.add(
        new Report.Refreshed(
            view, state.view(), refresh, outcome, mode, duration, lag, staleness, now));
    return reports;
  }

  /**
   * Classifies the failure of the refresh in flight, or of the lookup of the source: a cancelled
   * refresh is abandoned (its view moved or was deleted); a source that an upstream view is to
   * create is waited for; anything else is an error, retried after a backoff.
   */
  public List<Report> failed(String view, ViewState state, Throwable error, long now) {
    if (error instanceof RefreshCancelledException) {
      state.abandon(now);
      return List.of();
    }
    ViewState.InFlight refresh = state.inFlight();
    if (error instanceof ViewRefreshException.SourceMissing missing) {
      Optional<CompiledView> upstream = index.writingTable(missing.source());
      if (upstream.isPresent()) {
        state.waitFor(
            "waiting for view " + upstream.get().name() + " to create " + missing.source(),
            now,
            maxBackoff);
        LOG.info(
            "View {} waits for view {} to create its source {}; retrying in {} ms",
            view,
            upstream.get().name(),
            missing.source(),
            state.retryAt() - now);
        return List.of();
      }
    }
    String message =
        error instanceof ViewRefreshException
            ? error.getMessage()
            : error.getClass().getSimpleName() + ": " + error.getMessage();
    state.fail(message, now, maxBackoff);
    LOG.warn(
        "Refresh {} of view {} failed (attempt {}), retrying in {} ms: {}",
        refresh == null ? "(pinning the source)" : refresh.refreshId(),
        view,
        state.failures(),
        state.retryAt() - now,
        message,
        error instanceof ViewRefreshException ? null : error);
    return List.of(new Report.Failed(view, state.view(), refresh, message, now));
  }

  /** The source table of a view as its state knows it. */
  public static TableName sourceOf(StoredView view) {
    return TableName.parse(sourceName(view));
  }

  private static String sourceName(StoredView view) {
    if (view.source() != null) {
      return view.source();
    }
    // A state written by an earlier release: its definition was validated when it was stored.
    try {
      return CompiledView.compile(view.toDefinition(), view.revision()).source().toString();
    } catch (InvalidViewException e) {
      throw new IllegalStateException("view " + view.name() + " was validated", e);
    }
  }
}
