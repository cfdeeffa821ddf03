package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.refresh.ViewRefresher.ProgressListener;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.SourceColumns;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at running a planned recompute, chunk by chunk (DESIGN §3.6, §5): the source is
 * planned once, cut into chunks ({@link ChunkPlan}), and each chunk is computed and written ({@link
 * ChunkRecompute}) and committed through {@link GuardedCommit}, conditional on the bookmark the
 * previous chunk left, moving the bookmark ({@link Bookmark}) only with the last chunk. A chunked
 * refresh that stopped resumes after its last committed chunk when its plan is the same.
 */
final class RefreshRun {

  // The refresh's log lines keep the logger they always had: operators filter on it.
  private static final Logger LOG = LoggerFactory.getLogger(ViewRefresher.class);

  /**
   * What a refresh reads: the view's query bound to the pinned source snapshot (and to the snapshot
   * of each dimension it joins, pinned for the whole refresh: DESIGN §3.10).
   *
   * @param request the refresh, under the id it runs as
   * @param source the source table
   * @param snapshot the pinned source snapshot
   * @param schema the schema the snapshot is read with
   * @param plan the view's plan bound to that schema (and the dimensions' at their pins)
   * @param reads the identity of the source columns read
   * @param query the compiled query
   * @param dimensions each dimension the view joins at its pinned snapshot, by table; empty for a
   *     view of one table
   * @param dimensionStates their states as the bookmark records them
   */
  record Pinned(
      RefreshRequest request,
      Table source,
      Snapshot snapshot,
      Schema schema,
      ViewPlan plan,
      SourceColumns reads,
      CompiledQuery query,
      Map<TableName, DimensionPin> dimensions,
      DimensionStates dimensionStates) {
    Pinned {
      dimensions = Map.copyOf(dimensions);
    }

    /**
     * What a refresh of {@code request} reads, pinned once for every chunk of it: the source's
     * schema at {@code snapshot}, each dimension the view joins at its current snapshot (DESIGN
     * §3.10), and the query bound to their schemas and compiled.
     *
     * @param load loads a table the view reads
     * @throws ViewRefreshException when the query no longer fits the source or its dimensions
     */
    static Pinned of(
        RefreshRequest request, Table source, Snapshot snapshot, Function<TableName, Table> load) {
      CompiledView view = request.view();
      Schema schema = SourceReader.readSchema(source, snapshot);
      Map<TableName, DimensionPin> dimensions = new LinkedHashMap<>();
      Map<TableName, Schema> dimensionSchemas = new HashMap<>();
      for (TableName name : view.dimensions()) {
        DimensionPin pin = DimensionPin.current(name, load.apply(name));
        dimensions.put(name, pin);
        dimensionSchemas.put(
            name,
            pin.snapshot() == null
                ? pin.table().schema()
                : SourceReader.readSchema(pin.table(), pin.snapshot()));
      }
      try {
        ViewPlan plan = view.bind(schema, dimensionSchemas).plan();
        return new Pinned(
            request,
            source,
            snapshot,
            schema,
            plan,
            plan.sourceColumns().withNameMapping(ViewScan.nameMapping(source)),
            CompiledQuery.of(plan),
            dimensions,
            DimensionStates.of(dimensions, plan.dimensions()));
      } catch (InvalidViewException e) {
        throw new ViewRefreshException(
            "Cannot refresh view "
                + view.name()
                + ": the query no longer fits source "
                + source.name()
                + (dimensions.isEmpty() ? "" : " and its dimensions " + dimensions.keySet())
                + ": "
                + e.getMessage());
      }
    }

    /** Each dimension at its pinned snapshot, as the outcome reports it, ordered by table name. */
    List<RefreshOutcome.Dimension> dimensionsRead() {
      return dimensions.values().stream()
          .map(DimensionPin::read)
          .sorted(Comparator.comparing(d -> d.table().toString()))
          .toList();
    }

    /** The same reads for {@code other}, the request as the bookmark names it. */
    Pinned withRequest(RefreshRequest other) {
      return new Pinned(
          other, source, snapshot, schema, plan, reads, query, dimensions, dimensionStates);
    }
  }

  private final RefreshServices services;
  private final Pinned read;
  private final CompiledView view;
  private final Table target;
  private final ProgressListener progress;
  private final BooleanSupplier cancelled;
  private final ChunkRecompute work;
  private final BucketColumnType bucketType;
  private final StateTable states;

  private long rowsRead;
  private long bytesRead;
  private long rowsWritten;
  private long rowsRemoved;
  private int filesAdded;
  private int filesRemoved;
  private int chunksCommitted;
  private final long startedAt = System.currentTimeMillis();

  /**
   * @param progress told about each committed chunk
   * @param cancelled asked before every commit
   * @param services the refresher's hooks, definition check (asked before every commit), scan
   *     threads, manifest work and dimension tables
   * @param states the view's state table, or null for a view that keeps no partial states
   */
  RefreshRun(
      Pinned read,
      Table target,
      ProgressListener progress,
      BooleanSupplier cancelled,
      RefreshServices services,
      StateTable states) {
    this.states = states;
    this.services = services;
    this.read = read;
    this.view = read.request().view();
    this.target = target;
    this.progress = progress;
    this.cancelled = cancelled;
    this.work =
        new ChunkRecompute(
            read,
            target,
            services.dimensionTables(),
            services.scanThreads(),
            services.manifests(),
            states);
    this.bucketType = read.plan().bucketing().columnType();
  }

  /**
   * The sub-buckets an incremental refresh of a view whose states are kept per sub-bucket
   * recomputes (DESIGN §5): those the files of the source snapshots since the bookmark dirty,
   * detected at sub-bucket granularity by the rule that detected the dirty buckets, and every
   * sub-bucket of a dirty bucket those files do not explain. Null (every sub-bucket of the dirty
   * buckets) for another refresh, a view that joins dimensions (whose changes dirty buckets no file
   * bounds), or when the files do not bound their sub-buckets.
   */
  private DirtyBuckets dirtySubBuckets(RefreshPlanner.Recompute recompute, Bookmark bookmark) {
    Long reflected = bookmark.sourceSnapshotId();
    long pin = read.snapshot().snapshotId();
    if (states == null
        || states.layout().subBuckets().isEmpty()
        || recompute.mode() != RefreshOutcome.Mode.INCREMENTAL
        || read.plan().hasDimensions()
        || reflected == null
        || reflected == pin
        || !SnapshotUtil.isAncestorOf(read.source(), pin, reflected)) {
      return null;
    }
    List<Long> between = SnapshotUtil.snapshotIdsBetween(read.source(), reflected, pin);
    if (between.size() > RefreshPlanner.MAX_CATCH_UP_SNAPSHOTS) {
      return null;
    }
    Bucketing finer = states.layout().subBuckets().get();
    DirtyBuckets detected =
        RefreshPlanner.detect(
            read.source(),
            between,
            new BucketedView(
                view.name(), read.plan().bucketColumn(), finer.granularity(), finer.zone()),
            services.manifests());
    if (detected.full()) {
      return null;
    }
    BucketRangeSet unexplained = recompute.dirty().ranges();
    for (BucketRange range : detected.ranges().ranges()) {
      unexplained =
          unexplained.minus(read.plan().bucketing().expand(range.start(), range.end() - 1));
    }
    return DirtyBuckets.of(
        detected.ranges().union(unexplained),
        detected.nullBucket() || recompute.dirty().nullBucket());
  }

  RefreshOutcome run(RefreshPlanner.Recompute recompute, Bookmark bookmark) {
    RefreshId id = read.request().id();
    DirtyBuckets dirty = recompute.dirty();
    // The source is planned once: the chunks are cut and read from the same files.
    Types.NestedField bucketField = read.schema().findField(read.plan().bucketColumn());
    SourceReader reader =
        new SourceReader(
            read.source(),
            read.snapshot().snapshotId(),
            read.schema(),
            read.plan().requiredColumns(),
            dirty.full()
                ? Expressions.alwaysTrue()
                : BucketFilters.of(
                    read.plan().bucketColumn(), bucketType, dirty.ranges(), dirty.nullBucket()),
            read.plan().bucketColumn(),
            services.manifests());
    List<FileScanTask> planned =
        recompute.deltaBase() == null
            ? reader.plan()
            : reader.planAppendedAfter(recompute.deltaBase());
    DataExtent extent = DataExtent.of(planned, bucketField, read.plan().bucketing());
    ChunkPlan chunkPlan =
        ChunkPlan.of(
            dirty,
            read.plan().bucketing(),
            extent,
            view.refresh().chunkRows().orElse(ChunkPlan.DEFAULT_CHUNK_ROWS),
            view.refresh().chunkBuckets());
    List<ChunkPlan.Chunk> chunks = chunkPlan.chunks();
    String fingerprint =
        chunkPlan.fingerprint(
            recompute.mode(), recompute.deltaBase(), read.reads(), read.dimensionStates());

    DirtyBuckets dirtySubBuckets = dirtySubBuckets(recompute, bookmark);
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
    long bucketsDone = chunks.subList(0, first).stream().mapToLong(ChunkPlan.Chunk::buckets).sum();
    for (int i = first; i < chunks.size(); i++) {
      ChunkId chunkId = new ChunkId(id, i, chunks.size());
      boolean last = chunkId.isLast();
      UnaryOperator<Bookmark> move;
      if (last) {
        Bookmark complete =
            Bookmark.completed(
                id,
                read.snapshot().snapshotId(),
                view.version(),
                revision,
                read.source().uuid().toString(),
                read.reads().format(),
                read.dimensionStates().format());
        move = base -> complete;
      } else {
        RefreshProgress next = new RefreshProgress(chunkId, fingerprint);
        move = base -> base.inProgress(revision, next);
      }
      ChunkPlan.Chunk chunk = chunks.get(i);
      ChunkRecompute.Written written =
          work.compute(
              chunk,
              DataExtent.overlapping(planned, bucketField, read.plan().bucketing(), chunk),
              dirtySubBuckets,
              recompute.deltaBase(),
              chunkId.toString().replaceAll("[^A-Za-z0-9_.-]", "_"),
              last,
              dirty.full() && i == 0);
      services.hooks().filesWritten(view.name(), chunkId);
      if (cancelled.getAsBoolean()) {
        throw new RefreshCancelledException(chunkId);
      }
      if (!services.inForce().test(view)) {
        throw CommitGuard.SupersededException.redefined(view.name(), view.revision());
      }
      Map<String, String> summary = new HashMap<>();
      if (written.state() != null) {
        // The state first: a crash before the target's commit leaves a state the target does not
        // record, which the next refresh sets back (StateTable#trust).
        long stateSnapshot;
        try (RequestStage.Scope committing = RequestStage.COMMIT.enter()) {
          stateSnapshot =
              states.commit(
                  written.state().starting(),
                  written.state().added(),
                  written.state().removed(),
                  chunkId,
                  view.name(),
                  services.manifests());
        }
        services.hooks().stateCommitted(view.name(), chunkId);
        summary.put(FloeProperties.STATE_SNAPSHOT_ID, Long.toString(stateSnapshot));
        UnaryOperator<Bookmark> rows = move;
        move = base -> rows.apply(base).withStateSnapshot(stateSnapshot);
      }
      summary.put(FloeProperties.VIEW, view.name());
      summary.put(FloeProperties.VIEW_VERSION, view.version());
      summary.put(FloeProperties.VIEW_REVISION, Long.toString(revision));
      summary.put(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(read.snapshot().snapshotId()));
      summary.put(FloeProperties.SOURCE_TABLE, view.source().toString());
      summary.put(FloeProperties.REFRESH_MODE, recompute.mode().label());
      summary.put(FloeProperties.ROWS_WRITTEN, Long.toString(written.rowsWritten()));
      summary.put(FloeProperties.ROWS_REPLACED, Long.toString(written.rowsReplaced()));
      if (read.request().originCommittedAt() != null) {
        summary.put(
            FloeProperties.SOURCE_COMMITTED_AT, Long.toString(read.request().originCommittedAt()));
      }
      if (last) {
        summary.put(FloeProperties.DIRTY_BUCKETS, dirty.format());
        summary.put(FloeProperties.SOURCE_COLUMNS, read.reads().format());
        if (!read.dimensionStates().isEmpty()) {
          summary.put(FloeProperties.DIMENSION_STATES, read.dimensionStates().format());
        }
        summary.putAll(
            EngineMetadata.complete(
                view.target(),
                view.source(),
                read.source().uuid().toString(),
                read.snapshot().snapshotId(),
                read.dimensionStates(),
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
                    move),
                services.manifests());
      }
      long commitNanos = System.nanoTime() - commitStart;
      services.hooks().committed(view.name(), chunkId);
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
          read.snapshot().snapshotId(),
          chunk.ranges() + (chunk.nullBucket() ? " + null" : ""),
          written.rowsWritten(),
          written.rowsReplaced(),
          written.read().rowsRead(),
          written.computeNanos() / 1_000_000,
          written.writeNanos() / 1_000_000,
          commitNanos / 1_000_000);
      bucketsDone += chunk.buckets();
      if (chunks.size() > 1) {
        ViewRefresher.Progress now =
            new ViewRefresher.Progress(i + 1, chunks.size(), bucketsDone, buckets);
        LOG.info("Refresh {} of view {}: {}", id, view.name(), now);
        progress.chunkCommitted(now);
      }
    }
    Snapshot committed = targetSnapshotId == null ? null : target.snapshot(targetSnapshotId);
    return RefreshOutcome.committed(
        id,
        recompute.mode(),
        recompute.reason(),
        dirty,
        bucketType,
        SourceSnapshot.of(read.source(), read.snapshot()),
        read.dimensionsRead(),
        new RefreshOutcome.Target(
            target.uuid().toString(),
            targetSnapshotId,
            committed == null ? null : committed.timestampMillis(),
            RefreshOutcome.Target.metadataLocation(target)),
        new RefreshOutcome.Work(
            rowsRead,
            bytesRead,
            rowsWritten,
            rowsRemoved,
            filesAdded,
            filesRemoved,
            chunksCommitted));
  }
}
