package io.floe.topology.processor;

import io.floe.schemas.BucketRange;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.TableRef;
import io.floe.topology.FloeMetrics;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefreshException;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.store.ViewState;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import io.floe.topology.view.sql.ViewQueryParser;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The maintain stage (DESIGN §2, §6): per view, merges dirty buckets into the view's state, starts
 * a refresh once the view has been quiet for its debounce or has waited its max delay, runs it on
 * the {@link RefreshExecutor} (never on the stream thread), and when it completes records the new
 * watermark and publishes a {@link RefreshEvent} and a {@link TableCommitted} notice for the
 * target, so that chained views follow.
 *
 * <p>Views are owned by the task whose partition of the dirty-buckets topic their name hashes to;
 * the task creates the state of new views it finds in the global views store and drops the state of
 * deleted ones. A refresh is recorded in the state before it starts and re-run after a crash or a
 * move to another instance; the target's bookmark makes that idempotent, and the refresh event goes
 * out in the same transaction as the state change.
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
  private final Map<String, CompletableFuture<RefreshOutcome>> running = new HashMap<>();
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, ViewState> states;
  private int partition;

  /**
   * @param partitions partitions of the dirty-buckets topic, which decide which task owns a view
   * @param tick how often due refreshes start and completed ones are collected
   * @param maxBackoff the longest wait before retrying a failing view
   */
  public MaintainViewProcessor(
      RefreshExecutor executor,
      Function<String, Catalog> catalogs,
      ViewIndex index,
      int partitions,
      Duration tick,
      Duration maxBackoff,
      FloeMetrics metrics) {
    this.executor = executor;
    this.catalogs = catalogs;
    this.index = index;
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
      StoredView definition = definition(view);
      if (definition == null) {
        return;
      }
      state = ViewState.created(definition, now);
    }
    if (update instanceof DirtyUpdate.Request request) {
      boolean full = request.kind() == DirtyUpdate.Request.Kind.FULL_REFRESH;
      LOG.info("{} of view {} requested", full ? "A full refresh" : "A refresh", view);
      state.requestRefresh(full, request.requestedAt(), now);
    } else if (update instanceof DirtyUpdate.Change change) {
      state.addPending(
          change.dirty().toDirtyBuckets(),
          change.snapshotId(),
          change.sequenceNumber(),
          change.committedAt(),
          now);
    }
    states.put(view, state);
  }

  private void tick(long now) {
    syncDefinitions(now);
    collectCompleted(now);
    startDue(now);
    reportStatus();
  }

  private void reportStatus() {
    try (KeyValueIterator<String, ViewState> all = states.all()) {
      all.forEachRemaining(
          entry ->
              metrics.viewStatus(
                  entry.key,
                  entry.value.status().name(),
                  entry.value.pending().full()
                      ? -1
                      : entry.value.pending().ranges().ranges().size(),
                  entry.value.last() == null ? null : entry.value.last().lagMs()));
    }
  }

  /** Creates, redefines and drops the states of the views this task owns. */
  private void syncDefinitions(long now) {
    Set<String> defined = new HashSet<>();
    {
      for (io.floe.topology.view.CompiledView compiled : index.views()) {
        String name = compiled.name();
        if (!owns(name)) {
          continue;
        }
        StoredView definition = definition(name);
        if (definition == null) {
          continue;
        }
        defined.add(name);
        ViewState state = states.get(name);
        if (state == null) {
          LOG.info("View {} is new: its first refresh recomputes every bucket", name);
          states.put(name, ViewState.created(definition, now));
        } else if (!definition.version().equals(state.view().version())) {
          LOG.info("View {} changed: recomputing every bucket", name);
          state.redefine(definition, now);
          states.put(name, state);
        } else if (!definition.equals(state.view())) {
          state.updateSettings(definition);
          states.put(name, state);
        }
      }
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
      running.remove(name);
    }
  }

  /** The stored form of a view's current definition, or null if it is unknown or invalid. */
  private StoredView definition(String name) {
    return index.view(name).map(v -> StoredView.of(v.definition())).orElse(null);
  }

  private boolean owns(String view) {
    byte[] key = view.getBytes(StandardCharsets.UTF_8);
    return Utils.toPositive(Utils.murmur2(key)) % partitions == partition;
  }

  private void collectCompleted(long now) {
    List<String> done = new ArrayList<>();
    for (Map.Entry<String, CompletableFuture<RefreshOutcome>> entry : running.entrySet()) {
      if (entry.getValue().isDone()) {
        done.add(entry.getKey());
      }
    }
    for (String view : done) {
      CompletableFuture<RefreshOutcome> future = running.remove(view);
      ViewState state = states.get(view);
      if (state == null || state.inFlight() == null) {
        continue;
      }
      try {
        completed(view, state, future.join(), now);
      } catch (CompletionException e) {
        failed(view, state, e.getCause() == null ? e : e.getCause(), now);
      }
      states.put(view, state);
    }
    // Show the progress of long refreshes.
    for (String view : running.keySet()) {
      String progress = executor.progress(view).orElse(null);
      ViewState state = states.get(view);
      if (state != null && progress != null && !progress.equals(state.progress())) {
        state.progress(progress);
        states.put(view, state);
      }
    }
  }

  private void startDue(long now) {
    List<KeyValue<String, ViewState>> due = new ArrayList<>();
    try (KeyValueIterator<String, ViewState> all = states.all()) {
      all.forEachRemaining(
          entry -> {
            ViewState state = entry.value;
            boolean orphaned = state.inFlight() != null && !running.containsKey(entry.key);
            if (orphaned || state.isDue(now)) {
              due.add(entry);
            }
          });
    }
    for (KeyValue<String, ViewState> entry : due) {
      start(entry.key, entry.value, now);
    }
  }

  /** Starts the view's due refresh, or re-runs the one recorded in flight (after a crash). */
  private void start(String view, ViewState state, long now) {
    ViewDefinition definition;
    try {
      definition = state.view().toDefinition();
    } catch (RuntimeException e) {
      return;
    }
    ViewState.InFlight refresh = state.inFlight();
    if (refresh == null) {
      if (state.pendingSnapshot() == null) {
        // Pin the source's current snapshot now, so that the refresh recorded in the state, and
        // any re-run of it after a crash, reads exactly that snapshot under exactly one id.
        try {
          TableName source = sourceOf(definition);
          Snapshot current =
              catalogs.apply(source.catalog()).loadTable(source.identifier()).currentSnapshot();
          if (current != null) {
            state.pin(current.snapshotId(), current.sequenceNumber(), current.timestampMillis());
          }
        } catch (RuntimeException e) {
          LOG.debug("Cannot pin the current snapshot of the source of view {}", view, e);
        }
      }
      refresh =
          state.start(
              RefreshRequest.refreshId(definition, state.pendingSnapshot())
                  + state.refreshIdSuffix(),
              now);
      states.put(view, state);
      LOG.debug(
          "Refresh {} of view {} starts: {}",
          refresh.refreshId(),
          view,
          refresh.dirty().toDirtyBuckets());
    } else {
      LOG.info("Re-running refresh {} of view {}", refresh.refreshId(), view);
    }
    DirtyBuckets dirty =
        refresh.dirty() == null ? DirtyBuckets.none() : refresh.dirty().toDirtyBuckets();
    RefreshRequest request =
        new RefreshRequest(
            definition,
            refresh.sourceSnapshotId(),
            refresh.watermark(),
            dirty,
            refresh.forceFull(),
            refresh.catchUp(),
            refresh.refreshId());
    running.put(view, executor.submit(request));
  }

  private void completed(String view, ViewState state, RefreshOutcome outcome, long now) {
    ViewState.InFlight refresh = state.inFlight();
    long duration = now - refresh.startedAt();
    Long lag =
        outcome.targetCommitMillis() == null
                || outcome.status() == RefreshOutcome.Status.TARGET_AHEAD
            ? null
            : Math.max(0, outcome.targetCommitMillis() - outcome.sourceCommitMillis());
    RefreshMode mode =
        outcome.status() == RefreshOutcome.Status.TARGET_AHEAD
            ? RefreshMode.SKIPPED
            : outcome.full() ? RefreshMode.FULL : RefreshMode.INCREMENTAL;
    boolean advanced = outcome.status() != RefreshOutcome.Status.TARGET_AHEAD;
    // One refresh event per refresh id: a re-run that finds its change applied reports it only if
    // the earlier run could not (a crash between the Iceberg commit and the Kafka transaction).
    boolean reported =
        !advanced
            || (outcome.status() == RefreshOutcome.Status.ALREADY_APPLIED
                && state.last() != null
                && outcome.refreshId().equals(state.last().refreshId()));
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
        advanced ? outcome.sourceSnapshotId() : null,
        advanced ? outcome.sourceSequenceNumber() : null,
        now);
    if (reported) {
      LOG.debug(
          "Refresh {} of view {} had nothing new to do: {}",
          outcome.refreshId(),
          view,
          outcome.status());
      return;
    }
    metrics.refreshed(view, outcome, duration, lag);
    ViewDefinition definition = state.view().toDefinition();
    context.forward(
        new Record<>(view, refreshEvent(definition, refresh, outcome, mode, lag, null, now), now));
    if (outcome.targetSnapshotId() != null) {
      TableName target = definition.target();
      TableCommitted notice =
          CommitNotice.of(
              target,
              outcome.targetSnapshotId(),
              outcome.targetMetadataLocation(),
              Instant.ofEpochMilli(now),
              "floe");
      context.forward(new Record<>(target.toString(), notice, now));
    }
    LOG.info(
        "View {} refreshed ({}{}) to source snapshot {} in {} ms: target snapshot {}, {} rows"
            + " written, {} replaced, {} source rows read, lag {} ms",
        view,
        outcome.delta() ? mode + ", delta path" : mode,
        outcome.reason() == null ? "" : ": " + outcome.reason(),
        outcome.sourceSnapshotId(),
        duration,
        outcome.targetSnapshotId(),
        outcome.rowsWritten(),
        outcome.rowsRemoved(),
        outcome.rowsRead(),
        lag);
  }

  private void failed(String view, ViewState state, Throwable error, long now) {
    ViewState.InFlight refresh = state.inFlight();
    if (error instanceof ViewRefreshException.SourceMissing missing) {
      String upstream = viewWithTarget(missing.source());
      if (upstream != null) {
        state.waitFor(
            "waiting for view " + upstream + " to create " + missing.source(), now, maxBackoff);
        LOG.info(
            "View {} waits for view {} to create its source {}; retrying in {} ms",
            view,
            upstream,
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
        refresh.refreshId(),
        view,
        state.failures(),
        state.retryAt() - now,
        message,
        error instanceof ViewRefreshException ? null : error);
    ViewDefinition definition = state.view().toDefinition();
    context.forward(
        new Record<>(
            view,
            refreshEvent(definition, refresh, null, RefreshMode.FAILED, null, message, now),
            now));
  }

  /** The view, on any instance, whose target is {@code table}, or null. */
  private String viewWithTarget(TableName table) {
    return index.writingTable(table).map(io.floe.topology.view.CompiledView::name).orElse(null);
  }

  private static RefreshEvent refreshEvent(
      ViewDefinition view,
      ViewState.InFlight refresh,
      RefreshOutcome outcome,
      RefreshMode mode,
      Long lag,
      String error,
      long now) {
    TableName source = sourceOf(view);
    List<BucketRange> ranges = new ArrayList<>();
    boolean nullBucket = false;
    if (outcome != null && !outcome.recomputed().full() && outcome.bucketType() != null) {
      for (io.floe.topology.bucket.BucketRange range : outcome.recomputed().ranges().ranges()) {
        ranges.add(
            BucketRange.newBuilder()
                .setStart(micros(outcome.bucketType().toEpochMicros(range.start())))
                .setEnd(micros(outcome.bucketType().toEpochMicros(range.end())))
                .build());
      }
      nullBucket = outcome.recomputed().nullBucket();
    } else if (outcome != null && outcome.recomputed().full()) {
      nullBucket = true;
    }
    return RefreshEvent.newBuilder()
        .setRefreshId(outcome == null ? refresh.refreshId() : outcome.refreshId())
        .setView(view.name())
        .setViewVersion(view.version())
        .setTarget(ref(view.target(), outcome == null ? null : outcome.targetTableUuid()))
        .setTargetSnapshotId(
            outcome == null || mode == RefreshMode.SKIPPED ? null : outcome.targetSnapshotId())
        .setSource(ref(source, outcome == null ? null : outcome.sourceTableUuid()))
        .setSourceSnapshotId(
            outcome != null
                ? outcome.sourceSnapshotId()
                : refresh.sourceSnapshotId() == null ? -1L : refresh.sourceSnapshotId())
        .setMode(mode)
        .setReason(outcome == null ? null : outcome.reason())
        .setDirtyRanges(ranges)
        .setNullBucket(nullBucket)
        .setRowsWritten(outcome == null ? 0 : outcome.rowsWritten())
        .setRowsRemoved(outcome == null ? 0 : outcome.rowsRemoved())
        .setFilesAdded(outcome == null ? 0 : outcome.filesAdded())
        .setFilesRemoved(outcome == null ? 0 : outcome.filesRemoved())
        .setRowsRead(outcome == null ? 0 : outcome.rowsRead())
        .setBytesRead(outcome == null ? 0 : outcome.bytesRead())
        .setStartTime(Instant.ofEpochMilli(refresh.startedAt()))
        .setFinishTime(Instant.ofEpochMilli(now))
        .setLagMs(lag)
        .setError(error)
        .build();
  }

  private static Instant micros(long epochMicros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(epochMicros, 1_000_000L), Math.floorMod(epochMicros, 1_000_000L) * 1_000L);
  }

  private static TableRef ref(TableName table, String uuid) {
    return TableRef.newBuilder()
        .setCatalog(table.catalog())
        .setNamespace(table.namespace())
        .setName(table.table())
        .setUuid(uuid)
        .build();
  }

  private static TableName sourceOf(ViewDefinition view) {
    try {
      return ViewQueryParser.parse(view.query()).source();
    } catch (io.floe.topology.view.InvalidViewException e) {
      throw new IllegalStateException("view " + view.name() + " was validated", e);
    }
  }

  @Override
  public void close() {
    // Refreshes still running finish on their own; their results are not collected here, and the
    // next owner of each view re-runs it, which the target's bookmark makes idempotent.
    running.clear();
  }
}
