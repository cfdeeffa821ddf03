package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.detect.FileBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.SortOrderComparators;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compaction of a target, driven by its own refreshes (DESIGN §5): run by the refresh that just
 * committed, on its thread and in its view's slot, so never concurrently with a refresh of the
 * view. Per partition of the target it merges small data files into sorted files of the target's
 * {@code write.target-file-size-bytes}, and rewrites the data files that delete files apply to once
 * a partition holds too many delete files, removing the delete files that then apply to nothing.
 *
 * <p>Small files are merged a size tier at a time (a tier holds the files within a factor {@code
 * min-input-files} of each other in size): {@code min-input-files} files of one tier become about
 * one file of the next, so a row is rewritten about log(file size / bucket size) times over its
 * life, instead of once per compaction. Under copy-on-write the files holding the buckets the
 * refresh just recomputed stay out: they are the ones the next refresh is likely to rewrite, and
 * merging them into larger files would make that rewrite dear.
 *
 * <p>The commit is a {@code replace} (Iceberg's {@code RewriteFiles}): no row changes, so chained
 * views dirty nothing. It goes through the same guarded commit as a refresh ({@link GuardedCommit}:
 * the bookmark the compaction started from unchanged, no newer definition committed, a commit whose
 * state is unknown looked for in the table by its {@value #COMPACTION_AFTER}), leaves the bookmark
 * properties as they are and carries the summary keys of the snapshot it rewrites forward ({@code
 * floe.view}, {@code floe.view-version}, {@code floe.source-snapshot-id}, ..., the engines' keys of
 * {@link EngineMetadata}), but not {@code floe.refresh-id}: it is no refresh. A compaction that
 * fails is logged and tried again after a later refresh; it never fails the refresh.
 *
 * <p>Tuned by table properties of the target: Iceberg's {@code write.target-file-size-bytes}, and
 * {@value #ENABLED}, {@value #MIN_INPUT_FILES}, {@value #MAX_DELETE_FILES}, {@value
 * #SMALL_FILE_BYTES}.
 */
final class TargetCompaction {

  private static final Logger LOG = LoggerFactory.getLogger(TargetCompaction.class);

  /** Table property: whether Floe compacts the target after its refreshes (default true). */
  static final String ENABLED = "floe.compaction.enabled";

  /**
   * Table property: how many small files of one size tier in one partition are merged (default 8);
   * also the factor between tiers.
   */
  static final String MIN_INPUT_FILES = "floe.compaction.min-input-files";

  /**
   * Table property: past how many delete files in a partition the data files they apply to are
   * rewritten (default 8).
   */
  static final String MAX_DELETE_FILES = "floe.compaction.max-delete-files";

  /**
   * Table property: data files smaller than this many bytes are small (default three quarters of
   * {@code write.target-file-size-bytes}).
   */
  static final String SMALL_FILE_BYTES = "floe.compaction.small-file-bytes";

  /** Snapshot summary of a compaction: the refresh after which it ran. */
  static final String COMPACTION_AFTER = "floe.compaction-after";

  static final int DEFAULT_MIN_INPUT_FILES = 8;
  static final int DEFAULT_MAX_DELETE_FILES = 8;

  /** The most files one merge reads at once. */
  static final int MAX_MERGE_WIDTH = 32;

  /** The summary keys a compaction carries forward from the snapshot it rewrites. */
  private static final List<String> CARRIED =
      List.of(
          FloeProperties.VIEW,
          FloeProperties.VIEW_VERSION,
          FloeProperties.VIEW_REVISION,
          FloeProperties.SOURCE_SNAPSHOT_ID,
          FloeProperties.SOURCE_TABLE);

  private TargetCompaction() {}

  /**
   * Compacts the target if one of its partitions needs it; returns what was done, or null.
   *
   * @param hot the buckets whose files stay out under copy-on-write, as the target stores them
   *     ({@link #hotBuckets}; null: none)
   * @param refreshId the refresh that ran it, recorded as {@value #COMPACTION_AFTER}
   * @param manifests where its scan and commit read and write manifests
   */
  static RefreshOutcome.Compaction afterRefresh(
      Table target,
      CompiledView view,
      BucketRangeSet hot,
      RefreshId refreshId,
      RefreshHooks hooks,
      ManifestWork manifests) {
    long started = System.nanoTime();
    RefreshOutcome.Compaction result;
    try {
      result = compact(target, view, hot, refreshId, started, manifests);
    } catch (RuntimeException e) {
      LOG.warn(
          "Cannot compact target {} of view {} after refresh {}; trying again after a later"
              + " refresh: {}",
          target.name(),
          view.name(),
          refreshId,
          e.toString());
      return null;
    }
    if (result != null) {
      hooks.compacted(view.name(), refreshId);
      LOG.info(
          "Compacted target {} of view {} after refresh {}: {} data files ({} bytes) and {} delete"
              + " files in {} partitions into {} files ({} bytes, {} rows) in {} ms; target"
              + " snapshot {}",
          target.name(),
          view.name(),
          refreshId,
          result.dataFilesRewritten(),
          result.bytesRewritten(),
          result.deleteFilesRemoved(),
          result.partitions(),
          result.filesAdded(),
          result.bytesWritten(),
          result.rowsWritten(),
          result.durationMs(),
          result.targetSnapshotId());
    }
    return result;
  }

  /**
   * Compacts a view's state table ({@link StateTable}) by the rules and table properties a target
   * is compacted by, then moves the state snapshot its target records ({@link
   * FloeProperties#STATE_SNAPSHOT_ID}) to the compaction's, in a guarded commit of the target's
   * properties: a compaction changes no state, and a state the target does not record would be set
   * back by the next refresh ({@link StateTable#trust}), undoing it. Runs only while the state's
   * current snapshot is the one the target records; a stop between the two commits leaves the
   * compaction to be set back, nothing else. Returns what was done, or null; never throws.
   */
  static RefreshOutcome.Compaction afterStateCommit(
      Table state,
      Table target,
      CompiledView view,
      BucketRangeSet hot,
      RefreshId refreshId,
      ManifestWork manifests) {
    Long recorded = Bookmark.of(target).stateSnapshotId();
    Snapshot current = state.currentSnapshot();
    if (recorded == null || current == null || current.snapshotId() != recorded) {
      return null;
    }
    try {
      RefreshOutcome.Compaction result =
          compact(state, view, hot, refreshId, System.nanoTime(), manifests);
      if (result == null) {
        return null;
      }
      long compacted = result.targetSnapshotId();
      String value = Long.toString(compacted);
      GuardedCommit.transaction(
          target,
          "state compaction " + value + " of " + target.name(),
          CommitGuard.of(Bookmark.of(target).expected(), view),
          bookmark -> bookmark.withStateSnapshot(compacted),
          transaction ->
              transaction.updateProperties().set(FloeProperties.STATE_SNAPSHOT_ID, value).commit(),
          table -> value.equals(table.properties().get(FloeProperties.STATE_SNAPSHOT_ID)));
      LOG.info(
          "Compacted state table {} of view {} after refresh {}: {} files ({} bytes) into {} in"
              + " {} ms; state snapshot {}",
          state.name(),
          view.name(),
          refreshId,
          result.dataFilesRewritten(),
          result.bytesRewritten(),
          result.filesAdded(),
          result.durationMs(),
          compacted);
      return result;
    } catch (RuntimeException e) {
      LOG.warn(
          "Cannot compact state table {} of view {} after refresh {}; trying again after a later"
              + " refresh: {}",
          state.name(),
          view.name(),
          refreshId,
          e.toString());
      return null;
    }
  }

  private static RefreshOutcome.Compaction compact(
      Table target,
      CompiledView view,
      BucketRangeSet hot,
      RefreshId refreshId,
      long started,
      ManifestWork manifests) {
    // The target as the refresh left it, just committed or planned from: its own, so not read
    // again; the compaction's guarded commit catches any other writer.
    Map<String, String> properties = target.properties();
    if (!PropertyUtil.propertyAsBoolean(properties, ENABLED, true)) {
      return null;
    }
    Snapshot current = target.currentSnapshot();
    if (current == null || !mayNeedCompaction(current, minInputFiles(properties))) {
      return null;
    }
    Plan plan =
        plan(
            target,
            current,
            WriteMode.of(target) == WriteMode.COPY_ON_WRITE ? hot : null,
            manifests);
    if (plan.rewrites.isEmpty() && plan.removedDeletes.isEmpty()) {
      return null;
    }
    return rewrite(target, view, current, plan, refreshId, started, manifests);
  }

  /**
   * Whether the target may hold anything to compact, told from the totals of its snapshot's summary
   * alone, before a plan reads every manifest: without delete files only a tier of {@code minInput}
   * small data files in one partition is merged, which a target of fewer data files in all cannot
   * hold (most targets of small views, after every refresh). A summary without the totals plans.
   */
  static boolean mayNeedCompaction(Snapshot current, int minInput) {
    Map<String, String> summary = current.summary();
    String dataFiles = summary.get(SnapshotSummary.TOTAL_DATA_FILES_PROP);
    String deleteFiles = summary.get(SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    if (dataFiles == null || deleteFiles == null) {
      return true;
    }
    try {
      return Long.parseLong(deleteFiles) > 0 || Long.parseLong(dataFiles) >= minInput;
    } catch (NumberFormatException e) {
      return true;
    }
  }

  /**
   * How many small files of one tier a compaction merges ({@value #MIN_INPUT_FILES}), 2 or more.
   */
  private static int minInputFiles(Map<String, String> properties) {
    return Math.max(
        2, PropertyUtil.propertyAsInt(properties, MIN_INPUT_FILES, DEFAULT_MIN_INPUT_FILES));
  }

  /** The files one compaction rewrites and removes. */
  private record Plan(
      Map<String, List<FileScanTask>> rewrites, List<DeleteFile> removedDeletes, int partitions) {}

  /** One partition of one spec: its live data files and delete files. */
  private static final class Partition {
    final List<FileScanTask> tasks = new ArrayList<>();
    final Map<String, DeleteFile> deletes = new LinkedHashMap<>();
  }

  private static Plan plan(
      Table target, Snapshot current, BucketRangeSet hot, ManifestWork manifests) {
    Map<String, String> properties = target.properties();
    long targetSize =
        PropertyUtil.propertyAsLong(
            properties,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    long small = PropertyUtil.propertyAsLong(properties, SMALL_FILE_BYTES, targetSize / 4 * 3);
    int minInput = minInputFiles(properties);
    int maxDeletes =
        Math.max(
            0, PropertyUtil.propertyAsInt(properties, MAX_DELETE_FILES, DEFAULT_MAX_DELETE_FILES));

    Map<String, Partition> partitions = new LinkedHashMap<>();
    // Which data files each delete file applies to, as Iceberg's planning matches them.
    Map<String, Set<String>> appliesTo = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        manifests
            .scan(
                target.newScan().useSnapshot(current.snapshotId()).includeColumnStats(),
                target,
                current)
            .planFiles()) {
      for (FileScanTask task : tasks) {
        partitions
            .computeIfAbsent(key(task.spec(), task.file().partition()), k -> new Partition())
            .tasks
            .add(task);
        for (DeleteFile delete : task.deletes()) {
          appliesTo
              .computeIfAbsent(delete.location(), k -> new HashSet<>())
              .add(task.file().location());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (DeleteFile delete : liveDeletes(target, current)) {
      partitions
          .computeIfAbsent(
              key(target.specs().get(delete.specId()), delete.partition()), k -> new Partition())
          .deletes
          .put(delete.location(), delete);
    }

    Types.NestedField bucket = bucketField(target);
    Map<String, List<FileScanTask>> rewrites = new LinkedHashMap<>();
    List<DeleteFile> removedDeletes = new ArrayList<>();
    int compacted = 0;
    for (Map.Entry<String, Partition> entry : partitions.entrySet()) {
      Partition partition = entry.getValue();
      Map<String, FileScanTask> chosen = new LinkedHashMap<>();
      if (partition.deletes.size() > maxDeletes) {
        for (FileScanTask task : partition.tasks) {
          if (!task.deletes().isEmpty()) {
            chosen.put(task.file().location(), task);
          }
        }
      }
      Map<Integer, List<FileScanTask>> tiers = new HashMap<>();
      for (FileScanTask task : partition.tasks) {
        DataFile file = task.file();
        if (file.fileSizeInBytes() < small && !isHot(file, bucket, hot)) {
          tiers
              .computeIfAbsent(tier(file.fileSizeInBytes(), minInput), k -> new ArrayList<>())
              .add(task);
        }
      }
      for (List<FileScanTask> tier : tiers.values()) {
        if (tier.size() >= minInput) {
          tier.forEach(task -> chosen.put(task.file().location(), task));
        }
      }
      Set<String> rewritten = chosen.keySet();
      List<DeleteFile> removable = new ArrayList<>();
      for (DeleteFile delete : partition.deletes.values()) {
        Set<String> files = appliesTo.getOrDefault(delete.location(), Set.of());
        if (rewritten.containsAll(files)) {
          removable.add(delete);
        }
      }
      boolean worthIt =
          chosen.size() >= 2
              || !removable.isEmpty()
              || chosen.values().stream().anyMatch(t -> !t.deletes().isEmpty());
      if (!worthIt) {
        continue;
      }
      rewrites.put(entry.getKey(), new ArrayList<>(chosen.values()));
      removedDeletes.addAll(removable);
      compacted++;
    }
    return new Plan(rewrites, removedDeletes, compacted);
  }

  private static int tier(long size, int factor) {
    return (int) Math.floor(Math.log(Math.max(size, 1024)) / Math.log(factor));
  }

  private static String key(PartitionSpec spec, StructLike partition) {
    return spec.specId() + "/" + spec.partitionToPath(partition);
  }

  /** The delete files live in the snapshot. */
  private static List<DeleteFile> liveDeletes(Table target, Snapshot snapshot) {
    List<DeleteFile> deletes = new ArrayList<>();
    for (ManifestFile manifest : snapshot.deleteManifests(target.io())) {
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(manifest, target.io(), target.specs())) {
        for (DeleteFile delete : reader) {
          deletes.add(delete.copyWithoutStats());
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return deletes;
  }

  /** The target's bucket column: the first field of its sort order. */
  private static Types.NestedField bucketField(Table target) {
    SortOrder order = target.sortOrder();
    if (order.isUnsorted()) {
      return null;
    }
    return target.schema().findField(order.fields().get(0).sourceId());
  }

  /**
   * The buckets whose files compaction leaves alone under copy-on-write, as the target stores them,
   * after a refresh that recomputed {@code recompute}'s buckets (in the source's units): the
   * recomputed ones and the bucket before each run of them; null (none) after a full recompute. A
   * source that commits into its newest bucket still commits into the one before for a moment after
   * a bucket boundary (trades stamped just before it); were that bucket's small file merged into a
   * large one at once, that moment's refresh would rewrite the large file.
   */
  static BucketRangeSet hotBuckets(Bucketing bucketing, RefreshPlanner.Recompute recompute) {
    if (recompute.mode() == RefreshOutcome.Mode.FULL) {
      return null;
    }
    List<BucketRange> ranges = new ArrayList<>();
    for (BucketRange range : recompute.dirty().ranges().ranges()) {
      long start = range.start();
      long before = start == Long.MIN_VALUE ? start : bucketing.floor(start - 1);
      ranges.add(bucketing.columnType().toTargetRange(new BucketRange(before, range.end())));
    }
    return BucketRangeSet.of(ranges);
  }

  private static boolean isHot(DataFile file, Types.NestedField bucket, BucketRangeSet hot) {
    if (hot == null || hot.isEmpty() || bucket == null) {
      return false;
    }
    // The target's bucket column holds bucket starts: a file's buckets are its values.
    BucketRange values = FileBuckets.of(file, bucket).valueRange();
    return values == null || hot.overlaps(values);
  }

  private static RefreshOutcome.Compaction rewrite(
      Table target,
      CompiledView view,
      Snapshot current,
      Plan plan,
      RefreshId refreshId,
      long started,
      ManifestWork manifests) {
    Schema schema = target.schema();
    Comparator<StructLike> order =
        target.sortOrder().isUnsorted()
            ? null
            : SortOrderComparators.forSchema(schema, target.sortOrder());
    List<DataFile> removed = new ArrayList<>();
    List<DataFile> added = new ArrayList<>();
    long bytesRewritten = 0;
    long rows = 0;
    String operation = "compaction-" + current.snapshotId();
    for (List<FileScanTask> tasks : plan.rewrites.values()) {
      tasks.sort(Comparator.comparingLong(t -> lowerBucket(target, t.file())));
      for (int from = 0; from < tasks.size(); from += MAX_MERGE_WIDTH) {
        List<FileScanTask> group =
            tasks.subList(from, Math.min(tasks.size(), from + MAX_MERGE_WIDTH));
        TargetWriter writer = new TargetWriter(target, schema, operation);
        try {
          rows += merge(target, group, order, writer);
          added.addAll(writer.complete());
        } catch (RuntimeException e) {
          writer.close();
          throw e;
        }
        for (FileScanTask task : group) {
          removed.add(task.file());
          bytesRewritten += task.file().fileSizeInBytes();
        }
      }
    }

    Map<String, String> summary = new HashMap<>();
    for (String key : CARRIED) {
      String value = current.summary().get(key);
      if (value != null) {
        summary.put(key, value);
      }
    }
    summary.putAll(EngineMetadata.carriedFrom(current));
    summary.put(COMPACTION_AFTER, refreshId.toString());
    long committed =
        GuardedCommit.rewrite(
            target,
            current,
            CommitGuard.of(Bookmark.of(target).expected(), view),
            removed,
            plan.removedDeletes,
            added,
            summary,
            Map.entry(COMPACTION_AFTER, refreshId.toString()),
            manifests);
    long bytesWritten = added.stream().mapToLong(ContentFile::fileSizeInBytes).sum();
    return new RefreshOutcome.Compaction(
        committed,
        plan.partitions,
        removed.size(),
        plan.removedDeletes.size(),
        added.size(),
        bytesRewritten,
        bytesWritten,
        rows,
        (System.nanoTime() - started) / 1_000_000);
  }

  private static long lowerBucket(Table target, DataFile file) {
    Types.NestedField bucket = bucketField(target);
    Long lower = bucket == null ? null : FileBuckets.of(file, bucket).lower();
    return lower == null ? Long.MIN_VALUE : lower;
  }

  /**
   * Writes the live rows of the files, merged in sort order when there is one: the files Floe
   * writes are each sorted, so a k-way merge sorts the output with one row per file in memory.
   * Returns the rows written.
   */
  private static long merge(
      Table target, List<FileScanTask> tasks, Comparator<StructLike> order, TargetWriter writer) {
    List<CloseableIterable<Record>> open = new ArrayList<>();
    try {
      long rows = 0;
      if (order == null) {
        for (FileScanTask task : tasks) {
          CloseableIterable<Record> records = BucketReplacement.readLive(target, task);
          open.add(records);
          for (Record record : records) {
            writer.write(record);
            rows++;
          }
        }
        return rows;
      }
      Types.StructType struct = target.schema().asStruct();
      PriorityQueue<Head> heads =
          new PriorityQueue<>((a, b) -> order.compare(a.wrapper, b.wrapper));
      for (FileScanTask task : tasks) {
        CloseableIterable<Record> records = BucketReplacement.readLive(target, task);
        open.add(records);
        Head head = new Head(records.iterator(), new InternalRecordWrapper(struct));
        if (head.advance()) {
          heads.add(head);
        }
      }
      while (!heads.isEmpty()) {
        Head head = heads.poll();
        writer.write(head.record);
        rows++;
        if (head.advance()) {
          heads.add(head);
        }
      }
      return rows;
    } finally {
      for (CloseableIterable<Record> records : open) {
        try {
          records.close();
        } catch (IOException e) {
          LOG.debug("Cannot close a compacted file", e);
        }
      }
    }
  }

  /** The next row of one file in a merge. */
  private static final class Head {
    private final Iterator<Record> rows;
    private final InternalRecordWrapper wrapper;
    private Record record;

    Head(Iterator<Record> rows, InternalRecordWrapper wrapper) {
      this.rows = rows;
      this.wrapper = wrapper;
    }

    boolean advance() {
      if (!rows.hasNext()) {
        return false;
      }
      record = rows.next().copy();
      wrapper.wrap(record);
      return true;
    }
  }
}
