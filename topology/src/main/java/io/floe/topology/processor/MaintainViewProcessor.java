package io.floe.topology.processor;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.TableCommitted;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.maintain.DueViews;
import io.floe.topology.maintain.ViewMaintainer;
import io.floe.topology.maintain.ViewMaintainer.Lookup;
import io.floe.topology.maintain.ViewMaintainer.Next;
import io.floe.topology.maintain.ViewMaintainer.Report;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoreNames;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The maintain stage (DESIGN §2, §6), an adapter: it keeps each view's {@link ViewState} in the
 * view-state store, lets {@link ViewMaintainer} decide what updates, lookups and refresh outcomes
 * do to it, runs what is due off the stream thread ({@link Jobs}: pins on Floe's I/O executor,
 * refreshes on the {@link RefreshExecutor}), and publishes what is reported.
 *
 * <p>Views are owned by the task whose partition of the dirty-buckets topic {@link ViewPartitioner}
 * places them on; the task creates the state of new views it finds in the {@link ViewIndex} and
 * drops the state of deleted ones, looking only when the index changed. A refresh (and a pin) is
 * recorded in the state before it starts and re-run after a crash or a move to another instance;
 * the target's bookmark makes that idempotent, and the refresh event goes out in the same
 * transaction as the state change. When the task closes, its queued refreshes are cancelled; what
 * still runs commits nothing more. Outputs {@link RefreshEvent}s keyed by view and {@link
 * TableCommitted} notices keyed by target table, so that chained views follow.
 */
public final class MaintainViewProcessor implements Processor<String, DirtyUpdate, String, Object> {

  /** The node name. */
  public static final String NAME = "maintain-views";

  private static final Logger LOG = LoggerFactory.getLogger(MaintainViewProcessor.class);

  private final TopologySettings settings;
  private final TopologyServices services;
  private final ViewMaintainer maintainer;
  private final Jobs<String, Lookup> pins;
  private final Jobs<Submitted, RefreshOutcome> refreshes = Jobs.tracking();
  private final DueViews due = new DueViews();
  private long syncedGeneration = -1;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, ViewState> states;
  private int partition;

  private record Submitted(String view, RefreshId refreshId) {} // A refresh on the executor.

  /**
   * Works with the refresh executor, catalogs, view index, I/O executor and metrics of {@code
   * services}, and the partitions of the dirty-buckets topic (which decide which task owns a view),
   * tick and longest backoff of {@code settings}.
   */
  public MaintainViewProcessor(TopologySettings settings, TopologyServices services) {
    this.settings = settings;
    this.services = services;
    this.maintainer = new ViewMaintainer(services.views(), settings.maxBackoff());
    this.pins = new Jobs<>(services.io());
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.states = context.getStateStore(StoreNames.VIEW_STATE);
    this.partition = context.taskId().partition();
    long now = context.currentSystemTimeMs();
    // Work a previous owner of these views left: refreshes in flight run again, pins are redone.
    for (String view : storedViews()) {
      ViewState state = states.get(view);
      if (state.inFlight() != null) {
        maintainer
            .rerun(view, state, now)
            .ifPresentOrElse(request -> submit(view, request), () -> states.put(view, state));
      } else if (state.isPinning()) {
        startPin(view, ViewMaintainer.sourceOf(state.view()));
      }
      changed(view, state);
    }
    context.schedule(settings.tick(), PunctuationType.WALL_CLOCK_TIME, this::tick);
  }

  @Override
  public void process(Record<String, DirtyUpdate> record) {
    String view = record.key();
    long now = context.currentSystemTimeMs();
    ViewState state =
        view == null ? null : maintainer.received(view, states.get(view), record.value(), now);
    if (state == null) {
      return;
    }
    states.put(view, state);
    changed(view, state);
    startIfDue(view, state, now);
    applyPins(now);
  }

  private void tick(long now) {
    if (services.views().generation() != syncedGeneration) {
      syncDefinitions(now);
    }
    applyPins(now);
    collectCompleted(now);
    startDue(now);
  }

  /** Creates, redefines and drops the states of the views this task owns. */
  private void syncDefinitions(long now) {
    syncedGeneration = services.views().generation();
    Set<String> defined = new HashSet<>();
    for (CompiledView view : services.views().views()) {
      if (ViewPartitioner.INSTANCE.partition(view.name(), settings.partitions()) != partition) {
        continue;
      }
      defined.add(view.name());
      ViewState state = maintainer.synced(view, states.get(view.name()), now);
      if (state != null) {
        states.put(view.name(), state);
        changed(view.name(), state);
      }
    }
    for (String name : storedViews()) {
      if (!defined.contains(name)) {
        LOG.info("View {} was deleted: no longer maintained", name);
        states.delete(name);
        due.remove(name);
        refreshes.abandonIf(refresh -> refresh.view().equals(name));
      }
    }
  }

  private List<String> storedViews() {
    List<String> names = new ArrayList<>();
    try (KeyValueIterator<String, ViewState> all = states.all()) {
      all.forEachRemaining(entry -> names.add(entry.key));
    }
    return names;
  }

  /** Records when the view's next refresh is due, and reports its status. */
  private void changed(String view, ViewState state) {
    due.update(view, state);
    services.metrics().viewStatus(view, state);
  }

  /** Starts the refreshes that are due, the longest waiting first; pins those that need it. */
  private void startDue(long now) {
    for (String view : due.dueBy(now)) {
      ViewState state = states.get(view);
      if (state == null) {
        due.remove(view);
      } else {
        startIfDue(view, state, now);
      }
    }
    applyPins(now);
  }

  /** Starts what the view's state has due: a pin of the source's snapshot, or the refresh. */
  private void startIfDue(String view, ViewState state, long now) {
    Next next = maintainer.next(view, state, now);
    if (next instanceof Next.Resync) {
      // The definition changed: the next sync redefines the state first.
      syncedGeneration = -1;
      return;
    }
    if (!(next instanceof Next.Idle)) {
      states.put(view, state);
    }
    changed(view, state);
    if (next instanceof Next.Pin pin) {
      startPin(view, pin.source());
    } else if (next instanceof Next.Refresh refresh) {
      submit(view, refresh.request());
    }
  }

  private void startPin(String view, TableName source) {
    if (!pins.isRunning(view)) {
      pins.start(view, RequestStage.RESOLVE, () -> Lookup.current(services.catalogs(), source));
    }
  }

  private void applyPins(long now) {
    for (Jobs.Done<String, Lookup> done : pins.collect()) {
      String view = done.key();
      ViewState state = states.get(view);
      if (state == null || !state.isPinning()) {
        continue;
      }
      apply(view, state, done, found -> maintainer.looked(view, state, found, now), now);
      // A change or a request that came during an empty lookup keeps the view due: it starts.
      startIfDue(view, state, now);
    }
  }

  private void submit(String view, RefreshRequest request) {
    Submitted key = new Submitted(view, request.id());
    refreshes.track(
        key,
        services.refreshes().submit(request),
        () -> services.refreshes().cancel(key.refreshId()));
  }

  private void collectCompleted(long now) {
    for (Jobs.Done<Submitted, RefreshOutcome> done : refreshes.collect()) {
      String view = done.key().view();
      ViewState state = states.get(view);
      if (state == null || !maintainer.awaits(state, done.key().refreshId())) {
        continue;
      }
      apply(view, state, done, outcome -> maintainer.completed(view, state, outcome, now), now);
      changed(view, state);
    }
    // Show the progress of long refreshes.
    for (Submitted running : List.copyOf(refreshes.keys())) {
      String view = running.view();
      String progress = services.refreshes().progress(view).orElse(null);
      ViewState state = progress == null ? null : states.get(view);
      if (state != null && !progress.equals(state.progress())) {
        state.progress(progress);
        states.put(view, state);
      }
    }
  }

  /**
   * Applies a finished job of the view to its state, as the maintainer decides for its failure or,
   * through {@code onResult}, for its result; stores the state and reports.
   */
  private <R> void apply(
      String view,
      ViewState state,
      Jobs.Done<?, R> done,
      Function<R, List<Report>> onResult,
      long now) {
    report(
        done.failed()
            ? maintainer.failed(view, state, done.failure(), now)
            : onResult.apply(done.result()));
    states.put(view, state);
  }

  /** Counts and publishes what the maintainer reports. */
  private void report(List<Report> reports) {
    for (Report report : reports) {
      services.metrics().report(report);
      EventRecords.of(report).forEach(context::forward);
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
