package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.SourceColumns;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a view's target table to one pinned source snapshot (DESIGN §3.1, §3.5, §3.6, §5). The
 * {@link RefreshPlanner} decides what to read and why; {@link ChunkRecompute} computes and writes
 * each chunk; {@link GuardedCommit} commits it atomically, conditional on the bookmark the chunk
 * started from. A commit race lost to another instance plans again from the new bookmark. Blocking;
 * runs on a Floe executor, not on a stream thread.
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

  /** The refresh was cancelled before its next commit (its task closed); nothing more commits. */
  public static final class CancelledException extends RuntimeException {
    CancelledException(String refreshId) {
      super("Refresh " + refreshId + " was cancelled");
    }
  }

  private final Function<String, Catalog> catalogs;
  private final RefreshHooks hooks;
  private final Predicate<CompiledView> inForce;
  private final java.util.concurrent.Executor scanThreads;

  /**
   * @param catalogs the catalog of each catalog name in view table names
   */
  public ViewRefresher(Function<String, Catalog> catalogs) {
    this(catalogs, RefreshHooks.NONE, view -> true);
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
    this(catalogs, hooks, inForce, ViewScan.sharedExecutor());
  }

  /**
   * @param scanThreads where a recompute runs the workers that read and aggregate its files beside
   *     the refreshing thread
   */
  public ViewRefresher(
      Function<String, Catalog> catalogs,
      RefreshHooks hooks,
      Predicate<CompiledView> inForce,
      java.util.concurrent.Executor scanThreads) {
    this.catalogs = catalogs;
    this.hooks = hooks;
    this.inForce = inForce;
    this.scanThreads = RequestStage.propagating(scanThreads);
  }

  /** Runs one refresh, to its end. */
  public RefreshOutcome refresh(RefreshRequest request, ProgressListener progress) {
    return refresh(request, progress, () -> false);
  }

  /**
   * Runs one refresh.
   *
   * @param cancelled asked before every commit; once true, the refresh stops with {@link
   *     CancelledException}
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
      return new Outcomes(requested, source, null, null, null)
          .skipped(RefreshOutcome.Status.STALE_PIN, stale.reason());
    }
    Schema schema = readSchema(source, pinned);
    CompiledView.Bound bound;
    CompiledQuery evaluator;
    try {
      bound = view.bind(schema);
      evaluator = bound.evaluator();
    } catch (InvalidViewException e) {
      throw new ViewRefreshException(
          "Cannot refresh view "
              + view.name()
              + ": the query no longer fits source "
              + source.name()
              + ": "
              + e.getMessage());
    }
    SourceColumns reads =
        bound.plan().sourceColumns().withNameMapping(ViewScan.nameMapping(source));
    Table target;
    try {
      target = TargetTables.prepare(catalog(view.target().catalog(), view), view, bound.plan());
    } catch (TargetTables.TargetNotOwnedException e) {
      throw new ViewRefreshException(e.getMessage());
    } catch (CommitGuard.SupersededException e) {
      return superseded(view, new Outcomes(requested, source, pinned, bound.plan(), null), e);
    }
    BucketedView buckets = BucketedView.of(view);
    for (int attempt = 1; ; attempt++) {
      if (attempt > 1) {
        // Another commit moved the bookmark: plan from the table as it is now. The first attempt
        // plans from the table as just loaded; every later step of the refresh reads the target as
        // its own last commit left it (Floe is the target's only writer, and each commit's guard
        // catches any other).
        target.refresh();
      }
      Bookmark bookmark = Bookmark.of(target);
      RefreshRequest request = requested.withId(readId(requested.id(), bookmark, reads));
      Outcomes outcomes = new Outcomes(request, source, pinned, bound.plan(), target);
      RefreshPlanner.Plan plan =
          RefreshPlanner.plan(
              request,
              source,
              pinned,
              bookmark,
              reads,
              buckets,
              evaluator.decomposition().isPresent());
      if (plan instanceof RefreshPlanner.AlreadyApplied) {
        // The run that committed it may have stopped before its compaction.
        return maintain(target, view, outcomes.alreadyApplied(), null);
      }
      if (plan instanceof RefreshPlanner.TargetAhead ahead) {
        return outcomes.skipped(RefreshOutcome.Status.TARGET_AHEAD, ahead.reason());
      }
      if (plan instanceof RefreshPlanner.Superseded superseded) {
        return superseded(view, outcomes, superseded.reason());
      }
      RefreshPlanner.Recompute recompute = (RefreshPlanner.Recompute) plan;
      Run run =
          new Run(
              request,
              source,
              pinned,
              schema,
              bound.plan(),
              reads,
              evaluator,
              target,
              progress,
              cancelled,
              scanThreads);
      try {
        RefreshOutcome outcome = run.run(recompute, bookmark);
        return maintain(
            target,
            view,
            outcome,
            recompute.mode() == RefreshOutcome.Mode.FULL
                ? null
                : TargetCompaction.hotBuckets(
                    bound.plan().bucketing(), recompute.dirty().ranges()));
      } catch (CommitGuard.SupersededException e) {
        return superseded(view, outcomes, e);
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
  private RefreshOutcome superseded(CompiledView view, Outcomes outcomes, String reason) {
    if (!inForce.test(view)) {
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

  private RefreshOutcome superseded(
      CompiledView view, Outcomes outcomes, CommitGuard.SupersededException e) {
    return superseded(view, outcomes, e.reason());
  }

  /**
   * The target's upkeep after a committed refresh, in the view's slot: compaction, then snapshot
   * expiry. Neither fails the refresh.
   *
   * @param hot the buckets whose files compaction leaves alone, as the target stores them, or null
   */
  private RefreshOutcome maintain(
      Table target, CompiledView view, RefreshOutcome outcome, BucketRangeSet hot) {
    RefreshOutcome.Compaction compaction;
    try (RequestStage.Scope maintaining = RequestStage.MAINTAIN.enter()) {
      compaction = TargetCompaction.afterRefresh(target, view, hot, outcome.refreshId(), hooks);
      TargetMaintenance.afterRefresh(target, view, System.currentTimeMillis());
    }
    return compaction == null
        ? outcome
        : outcome.withCompaction(compaction, metadataLocation(target));
  }

  private Table load(CompiledView view, TableName name) {
    try {
      return catalog(name.catalog(), view).loadTable(name.identifier());
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

  /**
   * The schema a refresh reads its pinned snapshot with, by Iceberg's rule for a branch and a
   * snapshot ({@link SnapshotUtil#schemaFor(Table, String)}): the head of main reads as the table
   * does now, under its current schema, since schema changes create no snapshot and the view must
   * equal its query over the table as users read it; an older snapshot reads under its own schema.
   */
  static Schema readSchema(Table table, Snapshot pinned) {
    Snapshot current = table.currentSnapshot();
    return current != null && current.snapshotId() == pinned.snapshotId()
        ? SnapshotUtil.schemaFor(table, SnapshotRef.MAIN_BRANCH)
        : SnapshotUtil.schemaFor(table, pinned.snapshotId());
  }

  /**
   * The id of a refresh that reads the source columns {@code reads}, against the target's {@code
   * bookmark}: the requested one, or, when the target already reflects the refresh's snapshot but
   * read otherwise (a schema change or a name mapping set since, neither of which creates a
   * snapshot), one that names the columns read, so that the full refresh this causes at the same
   * snapshot is a refresh of its own (DESIGN §3.6). A run after a crash finds its own id recorded
   * and computes it again; every other refresh keeps the id it is requested under.
   */
  static RefreshId readId(RefreshId requested, Bookmark bookmark, SourceColumns reads) {
    if (bookmark.sourceSnapshotId() == null
        || bookmark.sourceSnapshotId() != requested.sourceSnapshotId()) {
      return requested;
    }
    RefreshId reread = requested.readingOtherColumns(reads.digest());
    SourceColumns recorded = bookmark.parsedSourceColumns();
    boolean readOtherwise =
        bookmark.sourceColumns() != null && (recorded == null || !recorded.isSameAs(reads));
    return readOtherwise || reread.toString().equals(bookmark.refreshId()) ? reread : requested;
  }

  private static String metadataLocation(Table table) {
    return table instanceof HasTableOperations ops
        ? ops.operations().current().metadataFileLocation()
        : null;
  }

  /** The outcomes of a refresh that committed nothing new. */
  private record Outcomes(
      RefreshRequest request, Table source, Snapshot pinned, ViewPlan plan, Table target) {

    RefreshOutcome skipped(RefreshOutcome.Status status, String reason) {
      Snapshot current = target == null ? null : target.currentSnapshot();
      return new RefreshOutcome(
          status,
          RefreshOutcome.Mode.NONE,
          reason,
          DirtyBuckets.none(),
          plan == null ? null : plan.bucketing().columnType(),
          request.id().toString(),
          request.sourceSnapshotId(),
          pinned == null ? -1 : pinned.sequenceNumber(),
          current == null ? null : current.snapshotId(),
          pinned == null ? 0 : pinned.timestampMillis(),
          current == null ? null : current.timestampMillis(),
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          source.uuid().toString(),
          target == null ? null : target.uuid().toString(),
          target == null ? null : metadataLocation(target),
          null,
          RequestCounts.NONE);
    }

    /**
     * The refresh was committed by an earlier run, which crashed before it could report it: report
     * it now as it was, from the summaries of its commits.
     */
    RefreshOutcome alreadyApplied() {
      RefreshId id = request.id();
      Snapshot last = null;
      long rowsWritten = 0;
      long rowsReplaced = 0;
      int added = 0;
      int removed = 0;
      for (Snapshot s : SnapshotUtil.currentAncestors(target)) {
        ChunkId chunk = chunkOf(s);
        if (chunk == null || !chunk.refresh().equals(id)) {
          if (last != null) {
            break;
          }
          continue;
        }
        last = last == null ? s : last;
        rowsWritten += summaryNumber(s, FloeProperties.ROWS_WRITTEN);
        rowsReplaced += summaryNumber(s, FloeProperties.ROWS_REPLACED);
        added += (int) summaryNumber(s, "added-data-files");
        removed += (int) summaryNumber(s, "deleted-data-files");
      }
      if (last == null) {
        // Its snapshots have expired: what it did is no longer known.
        return skipped(RefreshOutcome.Status.ALREADY_APPLIED, null);
      }
      RefreshOutcome.Mode mode =
          RefreshOutcome.Mode.ofLabel(last.summary().get(FloeProperties.REFRESH_MODE));
      String reason = mode == RefreshOutcome.Mode.FULL ? "reported after a restart" : null;
      DirtyBuckets recomputed;
      try {
        recomputed = DirtyBuckets.parse(last.summary().get(FloeProperties.DIRTY_BUCKETS), reason);
      } catch (IllegalArgumentException e) {
        recomputed = DirtyBuckets.all(reason);
      }
      return new RefreshOutcome(
          RefreshOutcome.Status.ALREADY_APPLIED,
          mode,
          reason,
          recomputed,
          plan.bucketing().columnType(),
          id.toString(),
          pinned.snapshotId(),
          pinned.sequenceNumber(),
          last.snapshotId(),
          pinned.timestampMillis(),
          last.timestampMillis(),
          0,
          0,
          rowsWritten,
          rowsReplaced,
          added,
          removed,
          0,
          source.uuid().toString(),
          target.uuid().toString(),
          metadataLocation(target),
          null,
          RequestCounts.NONE);
    }

    private static ChunkId chunkOf(Snapshot snapshot) {
      String recorded = snapshot.summary().get(FloeProperties.REFRESH_ID);
      try {
        return recorded == null ? null : ChunkId.parse(recorded);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }

    private static long summaryNumber(Snapshot snapshot, String key) {
      try {
        return Long.parseLong(snapshot.summary().getOrDefault(key, "0"));
      } catch (NumberFormatException e) {
        return 0;
      }
    }
  }

  /** One attempt at running a planned recompute, chunk by chunk. */
  private final class Run {
    private final RefreshRequest request;
    private final CompiledView view;
    private final Table source;
    private final Snapshot snapshot;
    private final Schema schema;
    private final ViewPlan plan;
    private final SourceColumns reads;
    private final Table target;
    private final ProgressListener progress;
    private final BooleanSupplier cancelled;
    private final ChunkRecompute work;
    private final BucketColumnType bucketType;

    private long rowsRead;
    private long bytesRead;
    private long rowsWritten;
    private long rowsRemoved;
    private int filesAdded;
    private int filesRemoved;
    private int chunksCommitted;
    private final long startedAt = System.currentTimeMillis();

    Run(
        RefreshRequest request,
        Table source,
        Snapshot snapshot,
        Schema schema,
        ViewPlan plan,
        SourceColumns reads,
        CompiledQuery query,
        Table target,
        ProgressListener progress,
        BooleanSupplier cancelled,
        java.util.concurrent.Executor scanThreads) {
      this.request = request;
      this.view = request.view();
      this.source = source;
      this.snapshot = snapshot;
      this.schema = schema;
      this.plan = plan;
      this.reads = reads;
      this.target = target;
      this.progress = progress;
      this.cancelled = cancelled;
      this.work = new ChunkRecompute(source, snapshot, schema, plan, query, target, scanThreads);
      this.bucketType = plan.bucketing().columnType();
    }

    RefreshOutcome run(RefreshPlanner.Recompute recompute, Bookmark bookmark) {
      RefreshId id = request.id();
      DirtyBuckets dirty = recompute.dirty();
      // The source is planned once: the chunks are cut and read from the same files.
      Types.NestedField bucketField = schema.findField(plan.bucketColumn());
      SourceReader reader =
          new SourceReader(
              source,
              snapshot.snapshotId(),
              schema,
              plan.requiredColumns(),
              dirty.full()
                  ? Expressions.alwaysTrue()
                  : BucketFilters.of(
                      plan.bucketColumn(), bucketType, dirty.ranges(), dirty.nullBucket()),
              plan.bucketColumn());
      List<FileScanTask> planned =
          (recompute.deltaBase() == null ? reader : reader.appendedAfter(recompute.deltaBase()))
              .plan();
      DataExtent extent = DataExtent.of(planned, bucketField, plan.bucketing());
      ChunkPlan chunkPlan =
          ChunkPlan.of(
              dirty,
              plan.bucketing(),
              extent,
              view.refresh().chunkRows().orElse(ChunkPlan.DEFAULT_CHUNK_ROWS),
              view.refresh().chunkBuckets());
      List<ChunkPlan.Chunk> chunks = chunkPlan.chunks();
      String fingerprint = chunkPlan.fingerprint(recompute.mode(), recompute.deltaBase(), reads);

      int first = 0;
      RefreshProgress recorded = bookmark.parsedProgress();
      if (recorded != null
          && recorded.continues(id, fingerprint)
          && recorded.lastCommitted().count() == chunks.size()) {
        first = recorded.lastCommitted().index() + 1;
        LOG.info(
            "Resuming refresh {} of view {} at chunk {} of {}",
            id,
            view.name(),
            first + 1,
            chunks.size());
      } else if (recorded != null) {
        LOG.info(
            "Refresh {} of view {} starts again from its first chunk: the progress recorded ({})"
                + " is of another plan",
            id,
            view.name(),
            bookmark.progress());
      }

      long revision = CommitGuard.revisionToRecord(bookmark, view.revision());
      // The bookmark as this refresh's own commits leave it, chunk by chunk.
      Bookmark current = bookmark;
      Long targetSnapshotId = null;
      long buckets = chunkPlan.buckets();
      long bucketsDone =
          chunks.subList(0, first).stream().mapToLong(ChunkPlan.Chunk::buckets).sum();
      for (int i = first; i < chunks.size(); i++) {
        ChunkId chunkId = new ChunkId(id, i, chunks.size());
        boolean last = chunkId.isLast();
        UnaryOperator<Bookmark> move;
        if (last) {
          Bookmark complete =
              new Bookmark(
                  snapshot.snapshotId(),
                  view.version(),
                  revision,
                  source.uuid().toString(),
                  id.toString(),
                  null,
                  reads.format());
          move = base -> complete;
        } else {
          RefreshProgress next = new RefreshProgress(chunkId, fingerprint);
          move = base -> base.inProgress(revision, next);
        }
        ChunkPlan.Chunk chunk = chunks.get(i);
        ChunkRecompute.Written written =
            work.compute(
                chunk,
                DataExtent.overlapping(planned, bucketField, plan.bucketing(), chunk),
                recompute.deltaBase(),
                chunkId.toString().replaceAll("[^A-Za-z0-9_.-]", "_"),
                last);
        hooks.filesWritten(view.name(), chunkId.toString());
        if (cancelled.getAsBoolean()) {
          throw new CancelledException(chunkId.toString());
        }
        if (!inForce.test(view)) {
          throw CommitGuard.SupersededException.redefined(view.name(), view.revision());
        }
        Map<String, String> summary = new HashMap<>();
        summary.put(FloeProperties.VIEW, view.name());
        summary.put(FloeProperties.VIEW_VERSION, view.version());
        summary.put(FloeProperties.VIEW_REVISION, Long.toString(revision));
        summary.put(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(snapshot.snapshotId()));
        summary.put(FloeProperties.SOURCE_TABLE, view.source().toString());
        summary.put(FloeProperties.REFRESH_MODE, recompute.mode().label());
        summary.put(FloeProperties.ROWS_WRITTEN, Long.toString(written.rowsWritten()));
        summary.put(FloeProperties.ROWS_REPLACED, Long.toString(written.rowsReplaced()));
        if (last) {
          summary.put(FloeProperties.DIRTY_BUCKETS, dirty.format());
          summary.put(FloeProperties.SOURCE_COLUMNS, reads.format());
          summary.putAll(
              EngineMetadata.complete(
                  view.target(),
                  view.source(),
                  source.uuid().toString(),
                  snapshot.snapshotId(),
                  revision,
                  startedAt));
        } else {
          summary.putAll(EngineMetadata.halfApplied());
        }
        long commitStart = System.nanoTime();
        long committed;
        try (RequestStage.Scope committing = RequestStage.COMMIT.enter()) {
          committed =
              GuardedCommit.commit(
                  target,
                  new GuardedCommit.Change(
                      chunkId,
                      written.startingTarget(),
                      written.added(),
                      written.removed(),
                      written.deletes(),
                      summary,
                      CommitGuard.of(current.expected(), view),
                      move));
        }
        long commitNanos = System.nanoTime() - commitStart;
        hooks.committed(view.name(), chunkId.toString());
        targetSnapshotId = committed;
        current = move.apply(current);
        rowsRead += written.read().rowsRead();
        bytesRead += written.read().bytesRead();
        rowsWritten += written.rowsWritten();
        rowsRemoved += written.rowsReplaced();
        filesAdded += written.added().size();
        filesRemoved += written.removed().size();
        chunksCommitted++;
        LOG.info(
            "Committed {} of view {} ({}): target snapshot {}, source snapshot {}, buckets {},"
                + " rows written {}, replaced {}, source rows read {} (read and aggregate {} ms,"
                + " write {} ms, commit {} ms)",
            chunkId,
            view.name(),
            recompute.mode().label(),
            committed,
            snapshot.snapshotId(),
            chunk.ranges() + (chunk.nullBucket() ? " + null" : ""),
            written.rowsWritten(),
            written.rowsReplaced(),
            written.read().rowsRead(),
            written.computeNanos() / 1_000_000,
            written.writeNanos() / 1_000_000,
            commitNanos / 1_000_000);
        bucketsDone += chunk.buckets();
        if (chunks.size() > 1) {
          Progress now = new Progress(i + 1, chunks.size(), bucketsDone, buckets);
          LOG.info("Refresh {} of view {}: {}", id, view.name(), now);
          progress.chunkCommitted(now);
        }
      }
      Snapshot committed = targetSnapshotId == null ? null : target.snapshot(targetSnapshotId);
      return new RefreshOutcome(
          RefreshOutcome.Status.COMMITTED,
          recompute.mode(),
          recompute.reason(),
          dirty,
          bucketType,
          id.toString(),
          snapshot.snapshotId(),
          snapshot.sequenceNumber(),
          targetSnapshotId,
          snapshot.timestampMillis(),
          committed == null ? null : committed.timestampMillis(),
          rowsRead,
          bytesRead,
          rowsWritten,
          rowsRemoved,
          filesAdded,
          filesRemoved,
          chunksCommitted,
          source.uuid().toString(),
          target.uuid().toString(),
          metadataLocation(target),
          null,
          RequestCounts.NONE);
    }
  }
}
