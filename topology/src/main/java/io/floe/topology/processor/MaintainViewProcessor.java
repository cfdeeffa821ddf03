package io.floe.topology.processor;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.TableCommitted;
import io.floe.topology.FloeMetrics;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefreshException;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The maintain stage (DESIGN §2, §6): per view, merges dirty buckets into the view's state ({@link
 * ViewState}, which also keeps its schedule), pins the source snapshot a refresh reads, runs the
 * refresh on the {@link RefreshExecutor} (never on the stream thread), and when it completes
 * records the new watermark and publishes a {@link RefreshEvent} and a {@link TableCommitted}
 * notice for the target, so that chained views follow.
 *
 * <p>Views are owned by the task whose partition of the dirty-buckets topic {@link ViewPartitioner}
 * places them on; the task creates the state of new views it finds in the {@link ViewIndex} and
 * drops the state of deleted ones, looking only when the index changed. A refresh is recorded in
 * the state before it starts and re-run after a crash or a move to another instance; the target's
 * bookmark makes that idempotent, and the refresh event goes out in the same transaction as the
 * state change. When the task closes, its queued refreshes are cancelled; what still runs commits
 * nothing more.
 *
 * <p>Pinning (reading the source's current snapshot, for a refresh that no change named) is catalog
 * I/O and runs on Floe's I/O executor; the state records it, so a restart pins again.
 *
 * <p>Outputs {@link RefreshEvent}s keyed by view and {@link TableCommitted} notices keyed by target
 * table.
 */
public final class MaintainViewProcessor implements Processor<String, DirtyUpdate, String, Object> {

  /** The node name. */
  public static final String NAME = "maintain-views";

  private static final Logger LOG = LoggerFactory.getLogger(MaintainViewProcessor.class);

  private final RefreshExecutor executor;
  private final Function<String, Catalog> catalogs;
  private final ViewIndex index;
  private final int partitions;
  private final Duration tick;
  private final Duration maxBackoff;
  private final FloeMetrics metrics;
  private final Jobs<String, Pinned> pins;
  private final Jobs<Submitted, RefreshOutcome> refreshes = Jobs.tracking();
  // The views whose state has pending changes, with when their refresh is due.
  private final Map<String, Long> due = new HashMap<>();
  private long syncedGeneration = -1;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, ViewState> states;
  private int partition;

  /** A refresh submitted to the refresh executor. */
  private record Submitted(String view, String refreshId) {}

  /** What a look at the source's current snapshot found. */
  private sealed interface Pinned {
    record Current(ViewState.Pin pin) implements Pinned {}

    record Empty() implements Pinned {}

    record Missing(TableName source) implements Pinned {}
  }

  /**
   * @param io the executor that pins source snapshots
   * @param partitions partitions of the dirty-buckets topic, which decide which task owns a view
   * @param tick how often due refreshes start and completed ones are collected
   * @param maxBackoff the longest wait before retrying a failing view
   */
  public MaintainViewProcessor(
      RefreshExecutor executor,
      Function<String, Catalog> catalogs,
      ViewIndex index,
      Executor io,
      int partitions,
      Duration tick,
      Duration maxBackoff,
      FloeMetrics metrics) {
    this.executor = executor;
    this.catalogs = catalogs;
    this.index = index;
    this.pins = new Jobs<>(io);
    this.partitions = partitions;
    this.tick = tick;
    this.maxBackoff = maxBackoff;
    this.metrics = metrics;
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.states = context.getStateStore(StoreNames.VIEW_STATE);
    this.partition = context.taskId().partition();
    long now = context.currentSystemTimeMs();
    // Work a previous owner of these views left: refreshes in flight run again, pins are redone.
    List<String> names = new ArrayList<>();
    try (KeyValueIterator<String, ViewState> all = states.all()) {
      all.forEachRemaining(entry -> names.add(entry.key));
    }
    for (String view : names) {
      ViewState state = states.get(view);
      if (state.inFlight() != null) {
        rerun(view, state, now);
      } else if (state.isPinning()) {
        startPin(view, state);
      }
      changed(view, state);
    }
    context.schedule(tick, PunctuationType.WALL_CLOCK_TIME, this::tick);
  }

  @Override
  public void process(Record<String, DirtyUpdate> record) {
    String view = record.key();
    DirtyUpdate update = record.value();
    if (view == null || update == null) {
      return;
    }
    long now = context.currentSystemTimeMs();
    ViewState state = states.get(view);
    if (state == null) {
      Optional<CompiledView> defined = index.view(view);
      if (defined.isEmpty()) {
        return;
      }
      state = ViewState.created(StoredView.of(defined.get()), now);
    }
    if (update instanceof DirtyUpdate.Request request) {
      boolean full = request.kind() == DirtyUpdate.Request.Kind.FULL_REFRESH;
      LOG.info(
          "{} of view {} requested{}",
          full ? "A full refresh" : "A refresh",
          view,
          request.requestedBy() == null ? "" : " by " + request.requestedBy());
      state.requestRefresh(full, now);
    } else if (update instanceof DirtyUpdate.Change change) {
      String source = sourceOf(state);
      state.addChange(
          source,
          change.table(),
          change.dirty().toDirtyBuckets(),
          new ViewState.Pin(
              change.snapshotId(),
              change.sequenceNumber(),
              change.committedAt(),
              change.tableUuid()),
          now);
    }
    states.put(view, state);
    changed(view, state);
    startIfDue(view, state, now);
    applyPins(now);
  }

  private void tick(long now) {
    if (index.generation() != syncedGeneration) {
      syncDefinitions(now);
    }
    applyPins(now);
    collectCompleted(now);
    startDue(now);
  }

  /** Creates, redefines and drops the states of the views this task owns. */
  private void syncDefinitions(long now) {
    syncedGeneration = index.generation();
    Set<String> defined = new HashSet<>();
    for (CompiledView view : index.views()) {
      if (!owns(view.name())) {
        continue;
      }
      defined.add(view.name());
      StoredView definition = StoredView.of(view);
      ViewState state = states.get(view.name());
      if (state == null) {
        LOG.info("View {} is new: its first refresh recomputes every bucket", view.name());
        state = ViewState.created(definition, now);
      } else if (!definition.version().equals(state.view().version())) {
        LOG.info("View {} changed: recomputing every bucket", view.name());
        state.redefine(definition, now);
      } else if (!definition.equals(state.view())) {
        state.updateSettings(definition);
      } else {
        continue;
      }
      states.put(view.name(), state);
      changed(view.name(), state);
    }
    List<String> dropped = new ArrayList<>();
    try (KeyValueIterator<String, ViewState> all = states.all()) {
      all.forEachRemaining(
          entry -> {
            if (!defined.contains(entry.key)) {
              dropped.add(entry.key);
            }
          });
    }
    for (String name : dropped) {
      LOG.info("View {} was deleted: no longer maintained", name);
      states.delete(name);
      due.remove(name);
      refreshes.keys().stream()
          .filter(refresh -> refresh.view().equals(name))
          .toList()
          .forEach(refreshes::abandon);
    }
  }

  private boolean owns(String view) {
    return ViewPartitioner.INSTANCE.partition(view, partitions) == partition;
  }

  /** Records when the view's next refresh is due, and reports its status. */
  private void changed(String view, ViewState state) {
    Long at = state.dueAt();
    if (at == null) {
      due.remove(view);
    } else {
      due.put(view, at);
    }
    metrics.viewStatus(
        view,
        state.status().name(),
        state.pending().full() ? -1 : state.pending().ranges().ranges().size(),
        state.last() == null ? null : state.last().lagMs());
  }

  /** Starts the refreshes that are due, the longest waiting first; pins those that need it. */
  private void startDue(long now) {
    List<Map.Entry<String, Long>> ready = new ArrayList<>();
    for (Map.Entry<String, Long> entry : due.entrySet()) {
      if (entry.getValue() <= now) {
        ready.add(entry);
      }
    }
    ready.sort(Map.Entry.comparingByValue(Comparator.naturalOrder()));
    for (Map.Entry<String, Long> entry : ready) {
      String view = entry.getKey();
      ViewState state = states.get(view);
      if (state == null) {
        due.remove(view);
      } else {
        startIfDue(view, state, now);
      }
    }
    applyPins(now);
  }

  /** Starts the view's refresh if it is due, pinning the source's current snapshot first. */
  private void startIfDue(String view, ViewState state, long now) {
    if (!state.isDue(now)) {
      changed(view, state);
    } else if (state.needsPin()) {
      state.pinning();
      states.put(view, state);
      changed(view, state);
      startPin(view, state);
    } else {
      start(view, state, now);
    }
  }

  private void startPin(String view, ViewState state) {
    if (pins.isRunning(view)) {
      return;
    }
    TableName source = TableName.parse(sourceOf(state));
    pins.start(view, RequestStage.RESOLVE, () -> pin(source));
  }

  /** Runs on the I/O executor: the source's current snapshot. */
  private Pinned pin(TableName source) {
    Table table;
    try {
      table = catalogs.apply(source.catalog()).loadTable(source.identifier());
    } catch (NoSuchTableException e) {
      return new Pinned.Missing(source);
    }
    Snapshot current = table.currentSnapshot();
    return current == null
        ? new Pinned.Empty()
        : new Pinned.Current(
            new ViewState.Pin(
                current.snapshotId(),
                current.sequenceNumber(),
                current.timestampMillis(),
                table.uuid().toString()));
  }

  private void applyPins(long now) {
    for (Jobs.Done<String, Pinned> done : pins.collect()) {
      String view = done.key();
      ViewState state = states.get(view);
      if (state == null || !state.isPinning()) {
        continue;
      }
      if (done.failed()) {
        failed(view, state, done.failure(), now);
      } else if (done.result() instanceof Pinned.Current current) {
        state.pinned(current.pin());
      } else if (done.result() instanceof Pinned.Missing missing) {
        failed(view, state, new ViewRefreshException.SourceMissing(view, missing.source()), now);
      } else {
        LOG.info("The source of view {} has no snapshot yet: nothing to refresh", view);
        state.sourceEmpty();
      }
      states.put(view, state);
      // A change or a request that arrived during an empty lookup keeps the view due: it starts,
      // or looks the source up again.
      startIfDue(view, state, now);
    }
  }

  /** Starts the view's due refresh, whose snapshot is pinned. */
  private void start(String view, ViewState state, long now) {
    Optional<CompiledView> defined = index.view(view);
    if (defined.isEmpty() || !defined.get().version().equals(state.view().version())) {
      // The definition changed: the next sync redefines the state first.
      syncedGeneration = -1;
      return;
    }
    CompiledView compiled = defined.get();
    ViewState.Pin pin = state.pendingPin();
    RefreshId id =
        state.pendingScope() == ViewState.Scope.FORCED
            ? RefreshId.forced(view, compiled.version(), pin.snapshotId(), state.forcedRequests())
            : RefreshId.of(view, compiled.version(), pin.snapshotId());
    ViewState.InFlight refresh = state.start(id.toString(), now);
    states.put(view, state);
    changed(view, state);
    LOG.debug("Refresh {} of view {} starts: {}", id, view, refresh.dirty().toDirtyBuckets());
    submit(view, compiled, refresh);
  }

  /** Runs the refresh recorded in flight again (after a crash or a rebalance). */
  private void rerun(String view, ViewState state, long now) {
    ViewState.InFlight refresh = state.inFlight();
    Optional<CompiledView> defined = index.view(view);
    if (defined.isEmpty()
        || !defined.get().version().equals(refresh.version())
        || refresh.sourceSnapshotId() == null) {
      // A refresh of a definition no longer in force is not run again.
      state.abandon(now);
      states.put(view, state);
      return;
    }
    LOG.info("Re-running refresh {} of view {}", refresh.refreshId(), view);
    submit(view, defined.get(), refresh);
  }

  private void submit(String view, CompiledView compiled, ViewState.InFlight refresh) {
    DirtyBuckets dirty =
        refresh.dirty() == null ? DirtyBuckets.none() : refresh.dirty().toDirtyBuckets();
    RefreshRequest.Scope scope =
        switch (refresh.scope() == null ? ViewState.Scope.CATCH_UP : refresh.scope()) {
          case CHANGES -> new RefreshRequest.Changes(dirty);
          case CATCH_UP -> new RefreshRequest.CatchUp(dirty);
          case FORCED ->
              new RefreshRequest.Forced(dirty.full() ? dirty.reason() : "full refresh requested");
        };
    RefreshRequest request =
        new RefreshRequest(
            compiled,
            RefreshId.parse(refresh.refreshId()),
            refresh.tableUuid(),
            refresh.watermark(),
            scope);
    refreshes.track(
        new Submitted(view, refresh.refreshId()),
        executor.submit(request),
        () -> executor.cancel(refresh.refreshId()));
  }

  private void collectCompleted(long now) {
    for (Jobs.Done<Submitted, RefreshOutcome> done : refreshes.collect()) {
      String view = done.key().view();
      ViewState state = states.get(view);
      if (state == null
          || state.inFlight() == null
          || !state.inFlight().refreshId().equals(done.key().refreshId())) {
        continue;
      }
      if (!done.failed()) {
        completed(view, state, done.result(), now);
      } else if (done.failure() instanceof ViewRefresher.CancelledException) {
        state.abandon(now);
      } else {
        failed(view, state, done.failure(), now);
      }
      states.put(view, state);
      changed(view, state);
    }
    // Show the progress of long refreshes.
    for (String view : refreshes.keys().stream().map(Submitted::view).toList()) {
      String progress = executor.progress(view).orElse(null);
      ViewState state = states.get(view);
      if (state != null && progress != null && !progress.equals(state.progress())) {
        state.progress(progress);
        states.put(view, state);
      }
    }
  }

  private void completed(String view, ViewState state, RefreshOutcome outcome, long now) {
    ViewState.InFlight refresh = state.inFlight();
    if (outcome.status() == RefreshOutcome.Status.STALE_PIN) {
      LOG.info(
          "Refresh {} of view {} pins the source again: {}",
          refresh.refreshId(),
          view,
          outcome.reason());
      state.repin(outcome.reason(), now);
      return;
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
        ahead || outcome.targetCommitMillis() == null
            ? null
            : Math.max(0, outcome.targetCommitMillis() - outcome.sourceCommitMillis());
    RefreshMode mode =
        ahead ? RefreshMode.SKIPPED : outcome.full() ? RefreshMode.FULL : RefreshMode.INCREMENTAL;
    ViewState.Pin reached =
        ahead
            ? null
            : new ViewState.Pin(
                outcome.sourceSnapshotId(),
                outcome.sourceSequenceNumber(),
                outcome.sourceCommitMillis(),
                outcome.sourceTableUuid());
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
                outcome.targetSnapshotId(),
                outcome.sourceSnapshotId(),
                lag,
                outcome.rowsWritten(),
                null),
        reached,
        now);
    if (outcome.compaction() != null) {
      metrics.compacted(view, outcome.compaction());
    }
    if (reported) {
      LOG.debug(
          "Refresh {} of view {} had nothing new to do: {} {}",
          outcome.refreshId(),
          view,
          outcome.status(),
          outcome.reason() == null ? "" : outcome.reason());
      return;
    }
    metrics.refreshed(view, outcome, duration, lag);
    StoredView definition = state.view();
    TableName target = TableName.parse(definition.target());
    context.forward(
        new Record<>(
            view,
            EventRecords.refreshEvent(
                definition,
                TableName.parse(sourceOf(definition)),
                refresh,
                outcome,
                mode,
                lag,
                staleness,
                null,
                now),
            now));
    if (outcome.targetSnapshotId() != null) {
      TableCommitted notice =
          CommitNotice.of(
              target,
              outcome.compaction() != null
                  ? outcome.compaction().targetSnapshotId()
                  : outcome.targetSnapshotId(),
              outcome.targetMetadataLocation(),
              Instant.ofEpochMilli(now),
              "floe");
      context.forward(new Record<>(target.toString(), notice, now));
    }
    LOG.info(
        "View {} refreshed ({}{}) to source snapshot {} in {} ms: target snapshot {}, {} rows"
            + " written, {} replaced, {} source rows read, lag {} ms, object-store requests {}",
        view,
        outcome.mode().label(),
        outcome.reason() == null ? "" : ": " + outcome.reason(),
        outcome.sourceSnapshotId(),
        duration,
        outcome.targetSnapshotId(),
        outcome.rowsWritten(),
        outcome.rowsRemoved(),
        outcome.rowsRead(),
        lag,
        outcome.requests());
  }

  private void failed(String view, ViewState state, Throwable error, long now) {
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
        return;
      }
    }
    String message =
        error instanceof ViewRefreshException
            ? error.getMessage()
            : error.getClass().getSimpleName() + ": " + error.getMessage();
    state.fail(message, now, maxBackoff);
    metrics.refreshFailed(view, message);
    LOG.warn(
        "Refresh {} of view {} failed (attempt {}), retrying in {} ms: {}",
        refresh == null ? "(pinning the source)" : refresh.refreshId(),
        view,
        state.failures(),
        state.retryAt() - now,
        message,
        error instanceof ViewRefreshException ? null : error);
    context.forward(
        new Record<>(
            view,
            EventRecords.refreshEvent(
                state.view(),
                TableName.parse(sourceOf(state)),
                refresh,
                null,
                RefreshMode.FAILED,
                null,
                null,
                message,
                now),
            now));
  }

  /** The source table of the view as the state knows it. */
  private static String sourceOf(ViewState state) {
    return sourceOf(state.view());
  }

  private static String sourceOf(StoredView view) {
    if (view.source() != null) {
      return view.source();
    }
    // A state written by an earlier release: its definition was validated when it was stored.
    try {
      return CompiledView.compile(view.toDefinition(), view.revision()).source().toString();
    } catch (io.floe.topology.view.InvalidViewException e) {
      throw new IllegalStateException("view " + view.name() + " was validated", e);
    }
  }

  @Override
  public void close() {
    // Refreshes of this task's views that have not started never will, and those running commit
    // nothing more; the next owner of each view re-runs it, which the target's bookmark makes
    // idempotent.
    refreshes.abandonAll();
    pins.abandonAll();
  }
}
