package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a view's target table to one pinned source snapshot (DESIGN §3.1, §3.5, §3.6, §5): reads
 * the source rows of the dirty buckets, evaluates the view, and replaces all target rows of those
 * buckets in one atomic, bookmark-guarded commit per chunk. Blocking; runs on a Floe executor, not
 * on a stream thread.
 */
public final class ViewRefresher {

  private static final Logger LOG = LoggerFactory.getLogger(ViewRefresher.class);
  private static final int COMMIT_ATTEMPTS = 3;
  private static final int MAX_CATCH_UP_SNAPSHOTS = 1000;

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

  /** A view bound to one source schema, compiled once. */
  private record Bound(ViewPlan plan, CompiledQuery query) {}

  private final Function<String, Catalog> catalogs;
  private final RefreshHooks hooks;
  private final Map<String, Bound> bound = new ConcurrentHashMap<>();

  /**
   * @param catalogs the catalog of each catalog name in view table names
   */
  public ViewRefresher(Function<String, Catalog> catalogs) {
    this(catalogs, RefreshHooks.NONE);
  }

  public ViewRefresher(Function<String, Catalog> catalogs, RefreshHooks hooks) {
    this.catalogs = catalogs;
    this.hooks = hooks;
  }

  /**
   * Runs one refresh.
   *
   * @throws ViewRefreshException when the view cannot be refreshed as it stands (source gone,
   *     schema no longer fits, target not Floe's); a retry will fail the same way until the cause
   *     goes
   * @throws RuntimeException for transient failures (I/O, commit conflicts), which a retry may cure
   */
  public RefreshOutcome refresh(RefreshRequest request, ProgressListener progress) {
    ViewDefinition view = request.view();
    Table source = load(view, sourceName(view));
    Snapshot snapshot =
        request.sourceSnapshotId() == null
            ? source.currentSnapshot()
            : source.snapshot(request.sourceSnapshotId());
    if (snapshot == null && request.sourceSnapshotId() == null) {
      throw new ViewRefreshException(
          "Cannot refresh view "
              + view.name()
              + ": source "
              + source.name()
              + " has no snapshot yet");
    }
    if (snapshot == null) {
      throw new ViewRefreshException(
          "Cannot refresh view "
              + view.name()
              + ": source snapshot "
              + request.sourceSnapshotId()
              + " of "
              + source.name()
              + " no longer exists");
    }
    Schema schema = snapshotSchema(source, snapshot);
    Bound compiled = bind(view, source, schema);
    Table target;
    try {
      target = TargetTables.prepare(catalog(view.target().catalog(), view), view, compiled.plan());
    } catch (TargetTables.TargetNotOwnedException e) {
      throw new ViewRefreshException(e.getMessage());
    }
    RefreshOutcome outcome =
        new Run(request, source, snapshot, schema, compiled, target, progress, hooks).run();
    if (outcome.status() == RefreshOutcome.Status.COMMITTED) {
      TargetMaintenance.afterRefresh(target, System.currentTimeMillis());
    }
    return outcome;
  }

  private static TableName sourceName(ViewDefinition view) {
    try {
      return ViewQueryParser.parse(view.query()).source();
    } catch (InvalidViewException e) {
      throw new ViewRefreshException("Cannot refresh view " + view.name() + ": " + e.getMessage());
    }
  }

  private Table load(ViewDefinition view, TableName name) {
    try {
      return catalog(name.catalog(), view).loadTable(name.identifier());
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      throw new ViewRefreshException.SourceMissing(view.name(), name);
    }
  }

  private Catalog catalog(String name, ViewDefinition view) {
    try {
      return catalogs.apply(name);
    } catch (IllegalArgumentException e) {
      throw new ViewRefreshException("Cannot refresh view " + view.name() + ": " + e.getMessage());
    }
  }

  private static Schema snapshotSchema(Table table, Snapshot snapshot) {
    Integer id = snapshot.schemaId();
    Schema schema = id == null ? null : table.schemas().get(id);
    return schema == null ? table.schema() : schema;
  }

  private Bound bind(ViewDefinition view, Table source, Schema schema) {
    String key = view.name() + "|" + view.version() + "|" + source.uuid() + "|" + schema.schemaId();
    return bound.computeIfAbsent(
        key,
        k -> {
          try {
            ViewPlan plan =
                ViewQueryBinder.bind(ViewQueryParser.parse(view.query()), schema, view.zone());
            return new Bound(plan, CompiledQuery.compile(plan));
          } catch (InvalidViewException e) {
            throw new ViewRefreshException(
                "Cannot refresh view "
                    + view.name()
                    + ": the query no longer fits source "
                    + source.name()
                    + ": "
                    + e.getMessage());
          }
        });
  }

  /** The state of one refresh call. */
  private static final class Run {
    private final RefreshRequest request;
    private final ViewDefinition view;
    private final Table source;
    private final Snapshot snapshot;
    private final Schema schema;
    private final ViewPlan plan;
    private final CompiledQuery query;
    private final Table target;
    private final ProgressListener progress;
    private final RefreshHooks hooks;
    private final BucketColumnType bucketType;
    private final String refreshId;
    private final int bucketPosition;

    private long rowsRead;
    private long bytesRead;
    private long rowsWritten;
    private long rowsRemoved;
    private int filesAdded;
    private int filesRemoved;
    private int chunksCommitted;

    /** The bookmark the delta path folds appended rows onto, or null to recompute buckets. */
    private Long deltaBase;

    Run(
        RefreshRequest request,
        Table source,
        Snapshot snapshot,
        Schema schema,
        Bound compiled,
        Table target,
        ProgressListener progress,
        RefreshHooks hooks) {
      this.request = request;
      this.hooks = hooks;
      this.view = request.view();
      this.source = source;
      this.snapshot = snapshot;
      this.schema = schema;
      this.plan = compiled.plan();
      this.query = compiled.query();
      this.target = target;
      this.progress = progress;
      this.bucketType = plan.bucketing().columnType();
      // A refresh of "the current snapshot" is named after the snapshot it pinned.
      this.refreshId =
          request.sourceSnapshotId() == null
              ? RefreshRequest.refreshId(view, snapshot.snapshotId())
              : request.refreshId();
      this.bucketPosition = schema.columns().indexOf(schema.findField(plan.bucketColumn()));
    }

    RefreshOutcome run() {
      String sourceSnapshot = Long.toString(snapshot.snapshotId());
      Map<String, String> properties = target.properties();
      String bookmark = properties.get(FloeProperties.SOURCE_SNAPSHOT_ID);
      String version = properties.get(FloeProperties.VIEW_VERSION);
      String inProgress = properties.get(FloeProperties.PROGRESS);

      // A forced full refresh is applied only when its own id is recorded, not just its snapshot.
      boolean applied =
          sourceSnapshot.equals(bookmark)
              && inProgress == null
              && view.version().equals(version)
              && (!request.forceFull()
                  || refreshId.equals(properties.get(FloeProperties.REFRESH_ID)));
      if (applied) {
        return skipped(RefreshOutcome.Status.ALREADY_APPLIED, null);
      }
      DirtyBuckets dirty = decide(bookmark, version);
      if (dirty == null) {
        return skipped(
            RefreshOutcome.Status.TARGET_AHEAD,
            "target already reflects source snapshot " + bookmark);
      }

      deltaBase = deltaBase(dirty, bookmark, inProgress);

      int size = view.refresh().chunkBuckets().orElse(Chunks.defaultSize(plan.granularity()));
      List<Chunks.Chunk> chunks =
          Chunks.plan(dirty, plan.bucketing(), size, dirty.full() ? extent() : null);
      int first = 0;
      String expectedProgress = inProgress;
      if (inProgress != null && inProgress.startsWith(refreshId + "#")) {
        int done =
            Integer.parseInt(
                inProgress.substring(inProgress.indexOf('#') + 1, inProgress.indexOf('/')));
        first = done + 1;
        LOG.info(
            "Resuming refresh {} of view {} at chunk {} of {}",
            refreshId,
            view.name(),
            first + 1,
            chunks.size());
      }

      Long targetSnapshotId = null;
      long buckets = chunks.stream().mapToLong(Chunks.Chunk::buckets).sum();
      long bucketsDone = chunks.subList(0, first).stream().mapToLong(Chunks.Chunk::buckets).sum();
      for (int i = first; i < chunks.size(); i++) {
        boolean last = i == chunks.size() - 1;
        String chunkId = chunks.size() == 1 ? refreshId : refreshId + "#" + i + "/" + chunks.size();
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put(FloeProperties.SOURCE_SNAPSHOT_ID, bookmark);
        expected.put(FloeProperties.PROGRESS, expectedProgress);
        Map<String, String> updates = new HashMap<>();
        Set<String> removals;
        if (last) {
          updates.put(FloeProperties.SOURCE_SNAPSHOT_ID, sourceSnapshot);
          updates.put(FloeProperties.VIEW_VERSION, view.version());
          updates.put(FloeProperties.REFRESH_ID, refreshId);
          updates.put(FloeProperties.SOURCE_TABLE_UUID, source.uuid().toString());
          removals = inProgress != null || i > 0 ? Set.of(FloeProperties.PROGRESS) : Set.of();
        } else {
          updates.put(FloeProperties.PROGRESS, chunkId);
          removals = Set.of();
        }
        targetSnapshotId =
            refreshChunk(chunks.get(i), chunkId, dirty.full(), expected, updates, removals);
        expectedProgress = last ? null : chunkId;
        chunksCommitted++;
        bucketsDone += chunks.get(i).buckets();
        if (chunks.size() > 1) {
          Progress now = new Progress(i + 1, chunks.size(), bucketsDone, buckets);
          LOG.info("Refresh {} of view {}: {}", refreshId, view.name(), now);
          progress.chunkCommitted(now);
        }
      }
      Snapshot committed = targetSnapshotId == null ? null : target.snapshot(targetSnapshotId);
      return new RefreshOutcome(
          RefreshOutcome.Status.COMMITTED,
          dirty.full(),
          deltaBase != null,
          dirty.full() ? dirty.reason() : null,
          dirty,
          bucketType,
          refreshId,
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
          metadataLocation(target));
    }

    /**
     * The buckets to recompute, given the target's bookmark; null when the target is already past
     * the source snapshot.
     */
    private DirtyBuckets decide(String bookmark, String version) {
      if (bookmark == null) {
        return DirtyBuckets.all("first refresh of the view");
      }
      if (!view.version().equals(version)) {
        return DirtyBuckets.all("view definition changed");
      }
      String uuid = target.properties().get(FloeProperties.SOURCE_TABLE_UUID);
      if (uuid != null && !uuid.equals(source.uuid().toString())) {
        return DirtyBuckets.all("source table " + source.name() + " was dropped and recreated");
      }
      long reflected = Long.parseLong(bookmark);
      long pinned = snapshot.snapshotId();
      if (source.snapshot(reflected) == null) {
        return DirtyBuckets.all(
            "target reflects source snapshot "
                + reflected
                + ", which has expired or is not an ancestor of snapshot "
                + pinned);
      }
      Snapshot current = source.currentSnapshot();
      if (current != null && !SnapshotUtil.isAncestorOf(source, current.snapshotId(), reflected)) {
        return DirtyBuckets.all(
            "target reflects source snapshot "
                + reflected
                + ", which is no longer in the history of "
                + source.name()
                + " (rolled back)");
      }
      if (reflected != pinned && SnapshotUtil.isAncestorOf(source, reflected, pinned)) {
        return null;
      }
      if (request.forceFull()) {
        return DirtyBuckets.all(
            request.dirty().reason() == null ? "full refresh requested" : request.dirty().reason());
      }
      boolean asExpected = request.watermark() != null && reflected == request.watermark();
      // The dirty buckets cover the watermark up to the snapshot a change named; a refresh of
      // "the current snapshot" may reach further, so it catches up from the bookmark.
      boolean pinnedAsRequested = request.sourceSnapshotId() != null && !request.catchUp();
      if (asExpected && pinnedAsRequested && !request.dirty().full()) {
        return request.dirty();
      }
      if (reflected == pinned) {
        return DirtyBuckets.none();
      }
      if (!SnapshotUtil.isAncestorOf(source, pinned, reflected)) {
        return DirtyBuckets.all(
            "target reflects source snapshot "
                + reflected
                + ", which is not an ancestor of snapshot "
                + pinned);
      }
      List<Long> between = SnapshotUtil.snapshotIdsBetween(source, reflected, pinned);
      if (between.size() > MAX_CATCH_UP_SNAPSHOTS) {
        return DirtyBuckets.all(
            between.size() + " source snapshots since the target's bookmark " + reflected);
      }
      try {
        BucketedView bucketed = BucketedView.of(CompiledView.compile(view, 0));
        DirtyBuckets detected =
            pinnedAsRequested || request.dirty().full() ? DirtyBuckets.none() : request.dirty();
        for (long id : between) {
          detected =
              detected.union(
                  DirtyBucketDetector.detect(source, id, List.of(bucketed)).get(view.name()));
        }
        return detected;
      } catch (InvalidViewException e) {
        throw new ViewRefreshException(
            "Cannot refresh view " + view.name() + ": " + e.getMessage());
      }
    }

    /**
     * The delta path (DESIGN §5): when the view is decomposable and every source snapshot since the
     * target's bookmark only appended rows (or compacted files, which changes no row), the target
     * rows of the dirty buckets plus the view over the appended rows alone give the new target
     * rows, and the rest of those buckets need not be read. Returns the bookmark to fold onto, or
     * null whenever that would not be exact: a full refresh, any other kind of snapshot, a schema
     * change, or a chunked refresh of another snapshot left half applied (its chunks already hold
     * some of the appended rows).
     */
    private Long deltaBase(DirtyBuckets dirty, String bookmark, String inProgress) {
      if (dirty.full()
          || bookmark == null
          || request.forceFull()
          || query.decomposition().isEmpty()
          || (inProgress != null && !inProgress.startsWith(refreshId + "#"))) {
        return null;
      }
      long reflected = Long.parseLong(bookmark);
      long pinned = snapshot.snapshotId();
      // snapshotIdsBetween walks back to the root when the bookmark is not an ancestor.
      if (reflected == pinned || !SnapshotUtil.isAncestorOf(source, pinned, reflected)) {
        return null;
      }
      boolean appended = false;
      for (long id : SnapshotUtil.snapshotIdsBetween(source, reflected, pinned)) {
        Snapshot between = source.snapshot(id);
        String operation = between == null ? null : between.operation();
        if (!DataOperations.APPEND.equals(operation) && !DataOperations.REPLACE.equals(operation)
            || !java.util.Objects.equals(between.schemaId(), snapshot.schemaId())) {
          return null;
        }
        appended |= DataOperations.APPEND.equals(operation);
      }
      return appended ? reflected : null;
    }

    private RefreshOutcome skipped(RefreshOutcome.Status status, String reason) {
      Snapshot current = target.currentSnapshot();
      return new RefreshOutcome(
          status,
          false,
          false,
          reason,
          DirtyBuckets.none(),
          bucketType,
          refreshId,
          snapshot.snapshotId(),
          snapshot.sequenceNumber(),
          current == null ? null : current.snapshotId(),
          snapshot.timestampMillis(),
          current == null ? null : current.timestampMillis(),
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          source.uuid().toString(),
          target.uuid().toString(),
          metadataLocation(target));
    }

    private static String metadataLocation(Table table) {
      return table instanceof HasTableOperations ops
          ? ops.operations().current().metadataFileLocation()
          : null;
    }

    /** The extent of non-null bucket values in the source snapshot, from file statistics. */
    private Chunks.Extent extent() {
      Types.NestedField field = schema.findField(plan.bucketColumn());
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      try (CloseableIterable<FileScanTask> tasks =
          source.newScan().useSnapshot(snapshot.snapshotId()).includeColumnStats().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile file = task.file();
          ByteBuffer lower =
              file.lowerBounds() == null ? null : file.lowerBounds().get(field.fieldId());
          ByteBuffer upper =
              file.upperBounds() == null ? null : file.upperBounds().get(field.fieldId());
          if (lower == null || upper == null) {
            Long nulls =
                file.nullValueCounts() == null ? null : file.nullValueCounts().get(field.fieldId());
            if (nulls != null && nulls == file.recordCount()) {
              continue;
            }
            // Without statistics the extent is unknown: one chunk then covers everything.
            return null;
          }
          min = Math.min(min, toLong(Conversions.fromByteBuffer(field.type(), lower)));
          max = Math.max(max, toLong(Conversions.fromByteBuffer(field.type(), upper)));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return min > max ? null : new Chunks.Extent(min, max);
    }

    private Long refreshChunk(
        Chunks.Chunk chunk,
        String chunkId,
        boolean full,
        Map<String, String> expected,
        Map<String, String> updates,
        Set<String> removals) {
      target.refresh();
      Snapshot startingTarget = target.currentSnapshot();

      // 1. Recompute the chunk's buckets from the pinned source snapshot.
      CompiledQuery.Aggregation aggregation = query.newAggregation();
      boolean isDate = bucketType.isDate();
      Expression sourceFilter =
          BucketFilters.of(plan.bucketColumn(), isDate, chunk.ranges(), chunk.nullBucket());
      // On the delta path, only the rows appended since the bookmark.
      SourceReader reader =
          new SourceReader(
              source, snapshot.snapshotId(), schema, plan.requiredColumns(), sourceFilter);
      SourceReader.Stats stats =
          (deltaBase == null ? reader : reader.appendedAfter(deltaBase))
              .read(
                  row -> {
                    if (inChunk(chunk, row[bucketPosition])) {
                      aggregation.add(row);
                    }
                  });
      List<Object[]> rows = aggregation.results();
      int bucketOutput = outputPosition(plan.bucketOutput());
      for (Object[] row : rows) {
        row[bucketOutput] = toTarget(row[bucketOutput]);
      }
      DeltaMerger delta =
          deltaBase == null
              ? null
              : new DeltaMerger(
                  plan.outputSchema(), target.schema(), query.decomposition().orElseThrow(), rows);

      // 2. Rewrite the target files holding rows of those buckets, keeping the other rows.
      String operationId = chunkId.replaceAll("[^A-Za-z0-9_.-]", "_");
      TargetWriter writer = new TargetWriter(target, plan.outputSchema(), operationId);
      List<DataFile> removed = new ArrayList<>();
      long replaced = 0;
      try {
        if (startingTarget != null) {
          replaced = rewriteTargetFiles(chunk, writer, removed, delta);
        }
        if (delta != null) {
          rows = delta.rows();
        }
        for (Object[] row : rows) {
          writer.writeOutputRow(row);
        }
      } catch (RuntimeException e) {
        writer.close();
        throw e;
      }
      List<DataFile> added = writer.complete();
      hooks.filesWritten(view.name(), chunkId);

      // 3. One atomic, bookmark-guarded commit.
      Long committed =
          commit(chunkId, full, startingTarget, added, removed, expected, updates, removals);
      hooks.committed(view.name(), chunkId);
      rowsRead += stats.rowsRead();
      bytesRead += stats.bytesRead();
      rowsWritten += rows.size();
      rowsRemoved += replaced;
      filesAdded += added.size();
      filesRemoved += removed.size();
      LOG.info(
          "Committed {} of view {} ({}): target snapshot {}, source snapshot {}, buckets {}, rows"
              + " written {}, replaced {}, source rows read {}",
          chunkId,
          view.name(),
          mode(full),
          committed,
          snapshot.snapshotId(),
          chunk.ranges() + (chunk.nullBucket() ? " + null" : ""),
          rows.size(),
          replaced,
          stats.rowsRead());
      return committed;
    }

    /** The refresh mode recorded in target snapshot summaries and logs. */
    private String mode(boolean full) {
      return full ? "full" : deltaBase != null ? "delta" : "incremental";
    }

    private Object toTarget(Object bucket) {
      if (bucket instanceof Long value) {
        return bucketType.toTargetValue(value);
      }
      return bucket;
    }

    private boolean inChunk(Chunks.Chunk chunk, Object value) {
      if (value == null) {
        return chunk.nullBucket();
      }
      return chunk.ranges().contains(((Number) value).longValue());
    }

    private int outputPosition(String column) {
      List<Types.NestedField> columns = plan.outputSchema().columns();
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).name().equals(column)) {
          return i;
        }
      }
      throw new IllegalStateException("no output column " + column);
    }

    /**
     * Copy-on-write: every target file overlapping the chunk is rewritten without the rows the
     * refresh replaces: all rows of the chunk's buckets, or on the delta path only those that the
     * delta absorbed (the other groups of those buckets did not change). Returns the rows replaced.
     */
    private long rewriteTargetFiles(
        Chunks.Chunk chunk, TargetWriter writer, List<DataFile> removed, DeltaMerger delta)
        throws UncheckedIOException {
      BucketRangeSet targetRanges = toTargetRanges(chunk.ranges());
      Expression filter =
          BucketFilters.of(
              plan.bucketOutput(), bucketType.isDate(), targetRanges, chunk.nullBucket());
      Map<String, FileScanTask> files = new LinkedHashMap<>();
      try (CloseableIterable<FileScanTask> tasks = target.newScan().filter(filter).planFiles()) {
        for (FileScanTask task : tasks) {
          files.putIfAbsent(task.file().location(), task);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Schema targetSchema = target.schema();
      int bucketColumn =
          targetSchema.columns().indexOf(targetSchema.findField(plan.bucketOutput()));
      long replaced = 0;
      for (FileScanTask task : files.values()) {
        try (CloseableIterable<Record> records = readWholeFile(task, targetSchema)) {
          for (Record record : records) {
            Object value = record.get(bucketColumn);
            Object stored =
                value == null
                    ? null
                    : IcebergValues.toNative(
                        targetSchema.columns().get(bucketColumn).type(), value);
            boolean dirty =
                stored == null
                    ? chunk.nullBucket()
                    : targetRanges.contains(((Number) stored).longValue());
            if (dirty && (delta == null || delta.absorb(record))) {
              replaced++;
            } else {
              writer.write(record);
            }
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        removed.add(task.file());
      }
      return replaced;
    }

    private BucketRangeSet toTargetRanges(BucketRangeSet ranges) {
      List<BucketRange> converted = new ArrayList<>();
      for (BucketRange range : ranges.ranges()) {
        long start =
            range.start() == Long.MIN_VALUE
                ? Long.MIN_VALUE
                : bucketType.toTargetValue(range.start());
        long end =
            range.end() == Long.MAX_VALUE ? Long.MAX_VALUE : bucketType.toTargetValue(range.end());
        converted.add(new BucketRange(start, end));
      }
      return BucketRangeSet.of(converted);
    }

    private CloseableIterable<Record> readWholeFile(FileScanTask task, Schema targetSchema) {
      DeleteFilter<Record> deletes =
          new GenericDeleteFilter(target.io(), task, targetSchema, targetSchema);
      CloseableIterable<Record> records =
          FormatModelRegistry.<Record, Object>readBuilder(
                  task.file().format(), Record.class, target.io().newInputFile(task.file()))
              .project(deletes.requiredSchema())
              .idToConstant(
                  PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant))
              .build();
      return deletes.filter(records);
    }

    private Long commit(
        String chunkId,
        boolean full,
        Snapshot startingTarget,
        List<DataFile> added,
        List<DataFile> removed,
        Map<String, String> expected,
        Map<String, String> updates,
        Set<String> removals) {
      GuardedTableOperations ops =
          new GuardedTableOperations(
              ((HasTableOperations) target).operations(), expected, updates, removals);
      Table guarded = new BaseTable(ops, target.name());
      for (int attempt = 1; ; attempt++) {
        OverwriteFiles overwrite = guarded.newOverwrite();
        removed.forEach(overwrite::deleteFile);
        added.forEach(overwrite::addFile);
        if (startingTarget != null) {
          overwrite
              .validateFromSnapshot(startingTarget.snapshotId())
              .validateNoConflictingData()
              .validateNoConflictingDeletes();
        }
        overwrite
            .set(FloeProperties.VIEW, view.name())
            .set(FloeProperties.VIEW_VERSION, view.version())
            .set(FloeProperties.SOURCE_SNAPSHOT_ID, Long.toString(snapshot.snapshotId()))
            .set(FloeProperties.SOURCE_TABLE, plan.source().toString())
            .set(FloeProperties.REFRESH_ID, chunkId)
            .set(FloeProperties.REFRESH_MODE, mode(full));
        try {
          overwrite.commit();
          break;
        } catch (CommitStateUnknownException e) {
          // Before anything else, find out whether the commit happened (DESIGN §3.6).
          target.refresh();
          if (findCommit(chunkId) != null) {
            LOG.warn("Commit state of {} was unknown; the table shows it committed", chunkId);
            break;
          }
          if (attempt >= COMMIT_ATTEMPTS) {
            throw e;
          }
          LOG.warn(
              "Commit state of {} was unknown and it is not in the table; retrying", chunkId, e);
        }
      }
      target.refresh();
      Long committed = findCommit(chunkId);
      if (committed == null) {
        throw new IllegalStateException("Committed " + chunkId + " but cannot find its snapshot");
      }
      return committed;
    }

    /** The target snapshot whose summary carries {@code refreshId}, searching back from current. */
    private Long findCommit(String refreshId) {
      for (Snapshot s = target.currentSnapshot();
          s != null;
          s = s.parentId() == null ? null : target.snapshot(s.parentId())) {
        if (refreshId.equals(s.summary().get(FloeProperties.REFRESH_ID))) {
          return s.snapshotId();
        }
      }
      return null;
    }

    private static long toLong(Object value) {
      return ((Number) value).longValue();
    }
  }
}
