package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.iceberg.SharedMetadataTables;
import io.floe.topology.refresh.eval.SharedWork;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a view's target table to one pinned source snapshot (DESIGN §3.1, §3.5, §3.6, §5): loads
 * the source and prepares the target ({@link TargetTables}), lets the {@link RefreshPlanner} decide
 * what to read and why, runs the recompute chunk by chunk ({@link RefreshRun}, each chunk committed
 * through {@link GuardedCommit}, conditional on the bookmark it started from), and then the
 * target's upkeep. A commit race lost to another instance plans again from the new bookmark.
 * Blocking; runs on a Floe executor, not on a stream thread.
 */
public final class ViewRefresher {

  private static final Logger LOG = LoggerFactory.getLogger(ViewRefresher.class);

  /** How many times a refresh plans again after another commit moved the target under it. */
  private static final int PLAN_ATTEMPTS = 3;

  /** Told about each committed chunk of a refresh: progress of long refreshes. */
  @FunctionalInterface
  public interface ProgressListener {
    void chunkCommitted(Progress progress);

    ProgressListener NONE = progress -> {};
  }

  /** How far a chunked refresh has come: chunks, and buckets of the source's extent. */
  public record Progress(int chunksDone, int chunks, long bucketsDone, long buckets) {
    @Override
    public String toString() {
      return bucketsDone + "/" + buckets + " buckets (chunk " + chunksDone + "/" + chunks + ")";
    }
  }

  private final Function<String, Catalog> catalogs;
  private final RefreshServices services;

  /**
   * No helper threads: a refresher given no executor reads, aggregates and writes on the refreshing
   * thread alone ({@link SharedWork} runs every item on the caller when its executor refuses).
   */
  private static final java.util.concurrent.Executor CALLER_ONLY =
      task -> {
        throw new java.util.concurrent.RejectedExecutionException("no scan threads");
      };

  /**
   * A refresher that works on the refreshing thread alone.
   *
   * @param catalogs the catalog of each catalog name in view table names
   */
  public ViewRefresher(Function<String, Catalog> catalogs) {
    this(catalogs, RefreshHooks.NONE, view -> true);
  }

  /** A refresher whose recomputes run their workers on {@code scanThreads} too. */
  public ViewRefresher(
      Function<String, Catalog> catalogs, java.util.concurrent.Executor scanThreads) {
    this(catalogs, RefreshHooks.NONE, view -> true, scanThreads);
  }

  public ViewRefresher(Function<String, Catalog> catalogs, RefreshHooks hooks) {
    this(catalogs, hooks, view -> true);
  }

  /**
   * @param hooks points where tests stop the process
   * @param inForce whether a definition is still the one in force: a refresh commits nothing else
   */
  public ViewRefresher(
      Function<String, Catalog> catalogs, RefreshHooks hooks, Predicate<CompiledView> inForce) {
    this(catalogs, hooks, inForce, CALLER_ONLY);
  }

  /**
   * A refresher without a pool of remote reads: a table on a remote store is read as a local one.
   *
   * @param scanThreads where a recompute runs the workers that read and aggregate its files beside
   *     the refreshing thread
   */
  public ViewRefresher(
      Function<String, Catalog> catalogs,
      RefreshHooks hooks,
      Predicate<CompiledView> inForce,
      java.util.concurrent.Executor scanThreads) {
    this(catalogs, hooks, inForce, scanThreads, ManifestWork.LOCAL_READS);
  }

  /**
   * @param scanThreads where a recompute runs the workers that read and aggregate its files beside
   *     the refreshing thread
   * @param manifests where scans and commits read and write their manifests, and the pools that
   *     overlap the reads and the commits' manifest work of tables on a remote store ({@link
   *     ManifestWork#overlappingRemoteReadsOn}); the pools stay the caller's to shut down
   */
  public ViewRefresher(
      Function<String, Catalog> catalogs,
      RefreshHooks hooks,
      Predicate<CompiledView> inForce,
      java.util.concurrent.Executor scanThreads,
      ManifestWork manifests) {
    this(
        catalogs,
        hooks,
        inForce,
        scanThreads,
        manifests,
        new DimensionTables(DimensionTables.BYTES_DEFAULT, manifests));
  }

  /**
   * @param scanThreads where a recompute runs the workers that read and aggregate its files beside
   *     the refreshing thread
   * @param manifests where scans and commits read and write their manifests, and the pool that
   *     overlaps the reads of tables on a remote store
   * @param dimensionTables the hash tables of the dimensions that views join, within their memory
   *     bound ({@code floe.join.dimension.bytes}), shared by every refresh of this refresher
   */
  public ViewRefresher(
      Function<String, Catalog> catalogs,
      RefreshHooks hooks,
      Predicate<CompiledView> inForce,
      java.util.concurrent.Executor scanThreads,
      ManifestWork manifests,
      DimensionTables dimensionTables) {
    this.catalogs = catalogs;
    this.services =
        new RefreshServices(
            hooks, inForce, RequestStage.propagating(scanThreads), manifests, dimensionTables);
  }

  /** Runs one refresh, to its end. */
  public RefreshOutcome refresh(RefreshRequest request, ProgressListener progress) {
    return refresh(request, progress, () -> false);
  }

  /**
   * Runs one refresh.
   *
   * @param cancelled asked before every commit; once true, the refresh stops with {@link
   *     RefreshCancelledException}
   * @throws ViewRefreshException when the view cannot be refreshed as it stands (source gone,
   *     schema no longer fits, target not Floe's); a retry will fail the same way until the cause
   *     goes
   * @throws RuntimeException for transient failures (I/O, commit conflicts), which a retry may cure
   */
  public RefreshOutcome refresh(
      RefreshRequest requested, ProgressListener progress, BooleanSupplier cancelled) {
    // What is not read, written or committed plans: loading the source and target, planning.
    RequestTally requests = new RequestTally();
    try (RequestStage.Scope counting = requests.open();
        RequestStage.Scope planning = RequestStage.PLAN.enter()) {
      return refreshCounted(requested, progress, cancelled).withRequests(requests.counts());
    }
  }

  private RefreshOutcome refreshCounted(
      RefreshRequest requested, ProgressListener progress, BooleanSupplier cancelled) {
    CompiledView view = requested.view();
    Table source = load(view, view.source());
    Snapshot pinned = source.snapshot(requested.sourceSnapshotId());
    RefreshPlanner.StalePin stale = RefreshPlanner.checkPin(requested, source, pinned);
    if (stale != null) {
      LOG.info(
          "Refresh {} of view {} does not run: {}", requested.id(), view.name(), stale.reason());
      return new RefreshOutcomes(requested, source, null, null, null)
          .skipped(RefreshOutcome.Status.STALE_PIN, stale.reason());
    }
    RefreshRun.Pinned query =
        RefreshRun.Pinned.of(requested, source, pinned, name -> load(view, name));
    ViewPlan viewPlan = query.plan();
    Table target;
    StateTable states;
    try {
      Catalog targets = catalog(view.target().catalog(), view);
      target = TargetTables.prepare(targets, view, viewPlan);
      states = StateTable.prepare(targets, view, viewPlan, query.query(), target);
    } catch (TargetTables.TargetNotOwnedException e) {
      throw new ViewRefreshException(e.getMessage());
    } catch (CommitGuard.SupersededException e) {
      return superseded(
          view, new RefreshOutcomes(requested, source, pinned, viewPlan, null), e.reason());
    }
    BucketedView buckets = BucketedView.of(view);
    // Not Iceberg's Tasks: a try after a moved bookmark is a new plan from the target as it is
    // now, and each try ends in one of several outcomes (applied, ahead, superseded, committed).
    for (int attempt = 1; ; attempt++) {
      if (attempt > 1) {
        // Another commit moved the bookmark: plan from the table as it is now. The first attempt
        // plans from the table as just loaded; every later step of the refresh reads the target as
        // its own last commit left it (Floe is the target's only writer, and each commit's guard
        // catches any other).
        target.refresh();
      }
      Bookmark bookmark = Bookmark.of(target);
      DimensionChange dimensions =
          DimensionChange.since(bookmark, query, services.dimensionTables(), services.manifests());
      RefreshRequest request =
          requested.withId(
              RefreshPlanner.readId(
                  requested.id(), bookmark, query.reads(), dimensions.named(query, bookmark)));
      RefreshOutcomes outcomes = new RefreshOutcomes(request, source, pinned, viewPlan, target);
      RefreshPlanner.Plan plan =
          RefreshPlanner.plan(
              request,
              source,
              pinned,
              bookmark,
              query.reads(),
              dimensions,
              buckets,
              viewPlan.bucketing(),
              // A view that joins folds appended fact rows in only while its dimensions are those
              // the target reflects: the planner recomputes every bucket otherwise.
              query.query().decomposition().isPresent() || states != null,
              services.manifests());
      plan = StateTable.trusted(states, plan, bookmark, view.name());
      if (plan instanceof RefreshPlanner.AlreadyApplied) {
        // The run that committed it may have stopped before its compaction.
        return maintain(target, states, view, outcomes.alreadyApplied(), null);
      }
      if (plan instanceof RefreshPlanner.TargetAhead ahead) {
        return outcomes.skipped(RefreshOutcome.Status.TARGET_AHEAD, ahead.reason());
      }
      if (plan instanceof RefreshPlanner.Superseded superseded) {
        return superseded(view, outcomes, superseded.reason());
      }
      RefreshPlanner.Recompute recompute = (RefreshPlanner.Recompute) plan;
      RefreshRun run =
          new RefreshRun(query.withRequest(request), target, progress, cancelled, services, states);
      try {
        RefreshOutcome outcome = run.run(recompute, bookmark);
        BucketRangeSet hot = TargetCompaction.hotBuckets(viewPlan.bucketing(), recompute);
        return maintain(target, states, view, outcome, hot);
      } catch (CommitGuard.SupersededException e) {
        return superseded(view, outcomes, e.reason());
      } catch (CommitGuard.BookmarkMovedException e) {
        if (attempt >= PLAN_ATTEMPTS) {
          throw e;
        }
        LOG.info(
            "Refresh {} of view {}: {}; planning again", request.id(), view.name(), e.getMessage());
      }
    }
  }

  /**
   * A refresh whose target another definition of the view wrote at a larger revision: nothing to do
   * when a later definition is in force (this refresh was queued before it came), a conflict when
   * this definition is the one in force, reported as the view's error and never silence (DESIGN
   * §3.6): the views topic lost the later definition (recreated, or mirrored from an older copy) or
   * another deployment writes the target.
   *
   * @throws ViewRefreshException when the definition is in force
   */
  private RefreshOutcome superseded(CompiledView view, RefreshOutcomes outcomes, String reason) {
    if (!services.inForce().test(view)) {
      return outcomes.skipped(RefreshOutcome.Status.TARGET_AHEAD, reason);
    }
    throw new ViewRefreshException(
        "Cannot refresh view "
            + view.name()
            + ": "
            + reason
            + ", which is in force; floe.views may have lost the later definition (recreated, or"
            + " mirrored from an older copy) or another Floe deployment writes "
            + view.target()
            + ": define the view again (PUT /api/views/"
            + view.name()
            + " or a change in the views file) to make the definition in force the newest");
  }

  /**
   * The target's upkeep after a committed refresh, in the view's slot: compaction, then snapshot
   * expiry, of the target and then of its state table. None fails the refresh.
   *
   * @param states the view's state table, or null for a view that keeps no partial states
   * @param hot the buckets whose files compaction leaves alone, as the target stores them, or null
   */
  private RefreshOutcome maintain(
      Table target,
      StateTable states,
      CompiledView view,
      RefreshOutcome outcome,
      BucketRangeSet hot) {
    RefreshOutcome.Compaction compaction;
    ManifestWork manifests = services.manifests();
    try (RequestStage.Scope maintaining = RequestStage.MAINTAIN.enter()) {
      compaction =
          TargetCompaction.afterRefresh(
              target, view, hot, outcome.refreshId(), services.hooks(), manifests);
      TargetMaintenance.afterRefresh(target, view, System.currentTimeMillis(), manifests);
      if (states != null) {
        states.compact(target, view, hot, outcome.refreshId(), manifests);
        states.expire(target, view, System.currentTimeMillis(), manifests);
      }
    }
    return compaction == null
        ? outcome
        : outcome.withCompaction(compaction, RefreshOutcome.Target.metadataLocation(target));
  }

  private Table load(CompiledView view, TableName name) {
    try {
      return SharedMetadataTables.load(catalog(name.catalog(), view), name.identifier());
    } catch (NoSuchTableException e) {
      throw new ViewRefreshException.SourceMissing(view.name(), name);
    }
  }

  private Catalog catalog(String name, CompiledView view) {
    try {
      return catalogs.apply(name);
    } catch (IllegalArgumentException e) {
      throw new ViewRefreshException("Cannot refresh view " + view.name() + ": " + e.getMessage());
    }
  }
}
