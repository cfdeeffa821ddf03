package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.detect.FileBuckets;
import io.floe.topology.iceberg.HadoopConfigurations;
import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.SharedWork;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;

/**
 * Replaces the target rows of one chunk's buckets with the recomputed rows (DESIGN §3.1, §5), in
 * the target's write mode, and lays the new files out as {@link TargetLayout} says. Nothing is
 * committed here.
 *
 * <ul>
 *   <li>A target data file whose bucket bounds lie wholly inside the chunk's buckets is removed
 *       without being read: it holds nothing to keep.
 *   <li>Copy-on-write (the default): every other file overlapping the chunk is rewritten without
 *       the replaced rows; the rows it keeps go to files of their own, apart from the recomputed
 *       ones.
 *   <li>Merge-on-read ({@link WriteMode#MERGE_ON_READ}): files are not rewritten; an equality
 *       delete file per partition removes every older row of the chunk's buckets that the
 *       overlapping files may hold (equality on the bucket column, values enumerated from the
 *       file's bounds, so nothing is read). On the delta path, where only some groups of a bucket
 *       are replaced, the target rows are read anyway (their values are merged) and the absorbed
 *       groups are deleted by equality on the bucket column and the group keys. Equality deletes
 *       never apply to the data files of their own commit, so the new rows stay.
 *   <li>The recomputed rows are sorted by bucket and keys (the target's sort order) and written in
 *       files per contiguous dirty range, so that the next refresh of those buckets meets only
 *       them.
 * </ul>
 */
final class BucketReplacement {

  /**
   * The most bucket values one equality delete enumerates for one file; past it, the file is
   * rewritten instead (a chunk boundary inside a file spanning years of minutes).
   */
  static final int MAX_DELETED_BUCKETS_PER_FILE = 100_000;

  /** Recomputed rows go to at most this many groups of files, per partition. */
  static final int MAX_RANGE_GROUPS = 16;

  /**
   * Recomputed rows a writer takes at least before the rows of one file group are split across
   * writers: below it, one file per partition is worth more than the time a second writer saves.
   */
  static final int MIN_ROWS_PER_WRITER = 20_000;

  /**
   * What replacing a chunk's rows wrote.
   *
   * @param added new data files: recomputed rows and rows kept from rewritten files
   * @param removed data files removed, rewritten or wholly replaced
   * @param deletes new delete files (merge-on-read)
   * @param rowsWritten recomputed rows written
   * @param rowsReplaced target rows known to be replaced (rows hidden by a bucket equality delete
   *     are not counted: counting them would mean reading the files merge-on-read spares)
   */
  record Result(
      List<DataFile> added,
      List<DataFile> removed,
      List<DeleteFile> deletes,
      long rowsWritten,
      long rowsReplaced) {}

  private final Table target;
  private final Executor writers;
  private final int parallelism;
  private final ViewPlan plan;
  private final String operationId;
  private final WriteMode mode;
  private final BucketColumnType bucketType;
  private final Bucketing bucketing;
  private final Schema schema;
  private final Types.NestedField bucketField;
  private final int bucketColumn;
  private final ManifestWork manifests;

  /** The columns of the recomputed rows: the view's output, or a state table's columns. */
  private final Schema rowSchema;

  /**
   * @param writers runs helpers that write recomputed rows (the refresh threads)
   * @param parallelism writers at most, the calling thread included
   * @param manifests where the scan of the target's files reads its manifests
   */
  BucketReplacement(
      Table target,
      ViewPlan plan,
      String operationId,
      Executor writers,
      int parallelism,
      ManifestWork manifests) {
    this(target, plan, plan.outputSchema(), operationId, writers, parallelism, manifests);
  }

  /**
   * Replaces rows of {@code rows}' columns in {@code target}, a table bucketed and keyed as the
   * view's target is (its state table, {@link StateTable}).
   */
  BucketReplacement(
      Table target,
      ViewPlan plan,
      Schema rows,
      String operationId,
      Executor writers,
      int parallelism,
      ManifestWork manifests) {
    this.rowSchema = rows;
    this.manifests = manifests;
    this.target = target;
    this.writers = writers;
    this.parallelism = parallelism;
    this.plan = plan;
    this.operationId = operationId;
    this.mode = WriteMode.of(target);
    this.bucketType = plan.bucketing().columnType();
    this.bucketing = plan.bucketing();
    this.schema = target.schema();
    this.bucketField = schema.findField(plan.bucketOutput());
    this.bucketColumn = schema.columns().indexOf(bucketField);
  }

  WriteMode mode() {
    return mode;
  }

  /**
   * Replaces the target rows of the chunk's buckets.
   *
   * @param rows the recomputed output rows of the chunk, bucket values as the target stores them;
   *     on the delta path the rows over the appended source rows only
   * @param delta the delta merger on the delta path, or null
   * @param targetExists whether the target has a snapshot (otherwise there is nothing to replace)
   * @param newestApart whether the newest bucket's rows get files of their own: for the last chunk
   *     of a refresh, whose newest bucket (the current minute after a first run or a catch-up) is
   *     the one the next refreshes most likely touch again, so that copy-on-write then rewrites its
   *     rows alone and not those of every bucket written with it
   */
  Result replace(
      ChunkPlan.Chunk chunk,
      List<Object[]> rows,
      DeltaMerger delta,
      boolean targetExists,
      boolean newestApart) {
    BucketRangeSet targetRanges = bucketType.toTargetRanges(chunk.ranges());
    Predicate<Record> inChunk = record -> isDirty(record, chunk, targetRanges);
    List<DataFile> removed = new ArrayList<>();
    List<DeleteFile> deletes = new ArrayList<>();
    List<DataFile> added = new ArrayList<>();
    long replaced = 0;
    TargetWriter kept = new TargetWriter(target, rowSchema, operationId + "-kept");
    try {
      if (targetExists) {
        Map<String, DeleteGroup> groups = new LinkedHashMap<>();
        for (FileScanTask task : overlapping(chunk, targetRanges)) {
          DataFile file = task.file();
          if (delta == null && isWhollyDirty(file, chunk, targetRanges)) {
            removed.add(file);
            replaced += file.recordCount();
            continue;
          }
          if (mode == WriteMode.MERGE_ON_READ) {
            DeleteGroup group =
                groups.computeIfAbsent(
                    task.spec().specId() + "/" + task.spec().partitionToPath(file.partition()),
                    k -> new DeleteGroup(task.spec(), file.partition()));
            if (delta != null) {
              replaced += absorbInto(task, inChunk, delta, group);
              continue;
            }
            Set<Object> values = bucketValues(file, chunk, targetRanges);
            if (values != null) {
              group.buckets.addAll(values);
              continue;
            }
          }
          replaced += rewrite(task, inChunk, delta, kept);
          removed.add(file);
        }
        for (DeleteGroup group : groups.values()) {
          deletes.addAll(group.write(delta != null));
        }
      }
      List<Object[]> toWrite = delta == null ? rows : delta.rows();
      added.addAll(writeRecomputed(toWrite, targetRanges, newestApart));
      added.addAll(kept.complete());
      return new Result(added, removed, deletes, toWrite.size(), replaced);
    } catch (RuntimeException e) {
      kept.close();
      throw e;
    }
  }

  /** The live data files whose bounds overlap the chunk, by their lower bucket bound. */
  private List<FileScanTask> overlapping(ChunkPlan.Chunk chunk, BucketRangeSet targetRanges) {
    Expression filter =
        BucketFilters.of(
            plan.bucketOutput(), bucketType.targetType(), targetRanges, chunk.nullBucket());
    Map<String, FileScanTask> files = new LinkedHashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        manifests
            .scan(
                target.newScan().filter(filter).includeColumnStats(),
                target,
                target.currentSnapshot())
            .planFiles()) {
      for (FileScanTask task : tasks) {
        files.putIfAbsent(task.file().location(), task);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<FileScanTask> ordered = new ArrayList<>(files.values());
    ordered.sort(
        Comparator.comparingLong(
            (FileScanTask task) -> {
              Long lower = FileBuckets.of(task.file(), bucketField).lower();
              return lower == null ? Long.MIN_VALUE : lower;
            }));
    return ordered;
  }

  /**
   * Whether every row the file can hold is in the chunk's buckets, by its statistics: its bucket
   * bounds in one dirty range, and nulls only if the null bucket is dirty.
   */
  private boolean isWhollyDirty(DataFile file, ChunkPlan.Chunk chunk, BucketRangeSet targetRanges) {
    FileBuckets buckets = FileBuckets.of(file, bucketField);
    Long nulls = buckets.nullCount();
    if (nulls == null || (nulls > 0 && !chunk.nullBucket())) {
      return false;
    }
    Long lower = buckets.lower();
    Long upper = buckets.upper();
    if (!buckets.hasBounds()) {
      return buckets.holdsOnlyNulls() && chunk.nullBucket();
    }
    for (BucketRange range : targetRanges.ranges()) {
      if (range.start() <= lower && upper < range.end()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The bucket values (as the target stores them; null for the null bucket) of the chunk that the
   * file's bounds admit, or null when there are too many to enumerate or no bounds.
   */
  private Set<Object> bucketValues(
      DataFile file, ChunkPlan.Chunk chunk, BucketRangeSet targetRanges) {
    Set<Object> values = new LinkedHashSet<>();
    FileBuckets buckets = FileBuckets.of(file, bucketField);
    if (chunk.nullBucket() && buckets.mayHoldNulls()) {
      values.add(null);
    }
    if (!buckets.hasBounds()) {
      return buckets.holdsOnlyNulls() ? values : null;
    }
    long lower = buckets.lower();
    long upper = buckets.upper();
    // Buckets are enumerated in the bucketing's own unit (nanoseconds for a _ns source).
    long from = bucketing.floor(bucketType.fromTargetValue(lower));
    long to = bucketType.fromTargetValue(upper);
    for (BucketRange range :
        chunk.ranges().intersect(new BucketRange(from, saturatedNext(to))).ranges()) {
      long start = Math.max(range.start(), from);
      for (long b = bucketing.floor(start); b < range.end() && b <= to; ) {
        values.add(targetValue(bucketing.toTargetValue(b)));
        if (values.size() > MAX_DELETED_BUCKETS_PER_FILE) {
          return null;
        }
        long next = bucketing.next(b);
        if (next <= b) {
          break;
        }
        b = next;
      }
    }
    return values;
  }

  private static long saturatedNext(long value) {
    return value == Long.MAX_VALUE ? Long.MAX_VALUE : value + 1;
  }

  /** A bucket value as a generic record of the target holds it. */
  private Object targetValue(long stored) {
    return IcebergValues.toIceberg(bucketField.type(), stored);
  }

  /**
   * Delta path, merge-on-read: offers the file's rows of the chunk's buckets to the delta; the
   * absorbed ones are deleted by group. Returns the rows absorbed.
   */
  private long absorbInto(
      FileScanTask task, Predicate<Record> inChunk, DeltaMerger delta, DeleteGroup group) {
    long absorbed = 0;
    try (CloseableIterable<Record> records = readWholeFile(task)) {
      for (Record record : records) {
        if (inChunk.test(record) && delta.absorb(record)) {
          group.rows.add(record.copy());
          absorbed++;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return absorbed;
  }

  /**
   * Copy-on-write: writes the rows of the file that the refresh keeps: every row outside the
   * chunk's buckets, and on the delta path those the delta did not absorb. Returns the rows
   * replaced.
   */
  private long rewrite(
      FileScanTask task, Predicate<Record> inChunk, DeltaMerger delta, TargetWriter kept) {
    long replaced = 0;
    try (CloseableIterable<Record> records = readWholeFile(task)) {
      for (Record record : records) {
        if (inChunk.test(record) && (delta == null || delta.absorb(record))) {
          replaced++;
        } else {
          kept.write(record);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return replaced;
  }

  /** Whether the row is in one of the chunk's buckets. */
  private boolean isDirty(Record record, ChunkPlan.Chunk chunk, BucketRangeSet targetRanges) {
    Object value = record.get(bucketColumn);
    Object stored = value == null ? null : IcebergValues.toNative(bucketField.type(), value);
    return stored == null
        ? chunk.nullBucket()
        : targetRanges.contains(((Number) stored).longValue());
  }

  /**
   * Writes the recomputed rows sorted by bucket then keys, a group of files per run of adjacent
   * dirty ranges (at most {@link #MAX_RANGE_GROUPS}), the null bucket apart.
   */
  private List<DataFile> writeRecomputed(
      List<Object[]> rows, BucketRangeSet targetRanges, boolean newestApart) {
    List<String> outputs = rowSchema.columns().stream().map(Types.NestedField::name).toList();
    int bucket = outputs.indexOf(plan.bucketOutput());
    int[] keys = plan.groupKeys().stream().mapToInt(outputs::indexOf).toArray();
    Comparator<Object[]> order = Comparator.comparing(r -> (Comparable) r[bucket], NULLS_FIRST);
    for (int key : keys) {
      order = order.thenComparing(r -> (Comparable) r[key], NULLS_FIRST);
    }
    List<Object[]> sorted = new ArrayList<>(rows);
    sorted.sort(order);
    List<Run> runs = runs(sorted, bucket, targetRanges.ranges(), newestApart);
    @SuppressWarnings("unchecked")
    List<DataFile>[] byRun = new List[runs.size()];
    try {
      SharedWork.drain(
          runs, () -> new RunWriter(byRun), writers, Math.min(parallelism, runs.size()));
    } catch (RuntimeException | Error e) {
      // Every writer has stopped: delete what the runs that finished wrote, or it stays behind.
      for (List<DataFile> written : byRun) {
        if (written != null) {
          written.forEach(file -> deleteQuietly(file.location()));
        }
      }
      throw e;
    }
    // In the order of the runs, so that a refresh lists its files the same way every time.
    List<DataFile> files = new ArrayList<>();
    for (List<DataFile> written : byRun) {
      files.addAll(written);
    }
    return files;
  }

  private void deleteQuietly(String location) {
    try {
      target.io().deleteFile(location);
    } catch (RuntimeException e) {
      // An orphan file, which orphan-file removal deletes later; the refresh's failure matters.
    }
  }

  /**
   * A slice of the sorted recomputed rows that one writer turns into files of their own: the rows
   * of one file group (a run of adjacent dirty ranges), or, when a group has rows enough for
   * several writers, a part of it cut at a bucket boundary.
   */
  private record Run(int index, int group, List<Object[]> rows) {}

  private List<Run> runs(
      List<Object[]> sorted, int bucket, List<BucketRange> ranges, boolean newestApart) {
    List<Run> runs = new ArrayList<>();
    int from = 0;
    while (from < sorted.size()) {
      int group = group(sorted.get(from)[bucket], ranges);
      int to = from;
      while (to < sorted.size() && group(sorted.get(to)[bucket], ranges) == group) {
        to++;
      }
      // The newest bucket (of the last group, rows being sorted) apart, when asked.
      int newest = to;
      while (newestApart
          && to == sorted.size()
          && newest > from
          && Objects.equals(sorted.get(newest - 1)[bucket], sorted.get(to - 1)[bucket])) {
        newest--;
      }
      int end = newest > from ? newest : to;
      int parts = Math.max(1, Math.min(parallelism, (end - from) / MIN_ROWS_PER_WRITER));
      addParts(runs, sorted, bucket, group, from, end, parts);
      if (end < to) {
        runs.add(new Run(runs.size(), group, sorted.subList(end, to)));
      }
      from = to;
    }
    return runs;
  }

  /** Cuts rows {@code [from, to)} of a file group into {@code parts} runs at bucket boundaries. */
  private static void addParts(
      List<Run> runs, List<Object[]> sorted, int bucket, int group, int from, int to, int parts) {
    int start = from;
    for (int part = 1; part <= parts; part++) {
      int end = part == parts ? to : from + (int) ((long) (to - from) * part / parts);
      // Never split a bucket: a bucket's rows stay in one file of the partition.
      while (end < to
          && end > start
          && Objects.equals(sorted.get(end)[bucket], sorted.get(end - 1)[bucket])) {
        end++;
      }
      if (end > start) {
        runs.add(new Run(runs.size(), group, sorted.subList(start, end)));
        start = end;
      }
    }
  }

  /**
   * Writes the runs a worker takes, each into files of its own, and leaves them at the run's index
   * (each index is written by one worker; {@link SharedWork} publishes them to the caller).
   */
  private final class RunWriter implements SharedWork.Worker<Run> {
    final List<DataFile>[] byRun;

    RunWriter(List<DataFile>[] byRun) {
      this.byRun = byRun;
    }

    @Override
    public void process(Run run) {
      TargetWriter writer =
          new TargetWriter(
              target,
              rowSchema,
              operationId + "-g" + run.group() + (run.index() == 0 ? "" : "-r" + run.index()));
      try {
        for (Object[] row : run.rows()) {
          writer.writeOutputRow(row);
        }
        byRun[run.index()] = writer.complete();
      } catch (RuntimeException | Error e) {
        try {
          writer.close();
        } catch (RuntimeException closing) {
          e.addSuppressed(closing);
        }
        for (DataFile partial : writer.written()) {
          deleteQuietly(partial.location());
        }
        throw e;
      }
    }
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private static final Comparator<Comparable> NULLS_FIRST =
      Comparator.nullsFirst(Comparator.naturalOrder());

  /** The file group of a bucket value: its dirty range, runs of ranges past the limit. */
  private static int group(Object value, List<BucketRange> ranges) {
    if (value == null || ranges.isEmpty()) {
      return -1;
    }
    long v = ((Number) value).longValue();
    int low = 0;
    int high = ranges.size() - 1;
    while (low < high) {
      int mid = (low + high + 1) >>> 1;
      if (ranges.get(mid).start() <= v) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return ranges.size() <= MAX_RANGE_GROUPS
        ? low
        : (int) ((long) low * MAX_RANGE_GROUPS / ranges.size());
  }

  private CloseableIterable<Record> readWholeFile(FileScanTask task) {
    return readLive(target, task);
  }

  /** The live rows of a target data file, its delete files applied. */
  static CloseableIterable<Record> readLive(Table target, FileScanTask task) {
    Schema schema = target.schema();
    DeleteFilter<Record> deletes = new GenericDeleteFilter(target.io(), task, schema, schema);
    CloseableIterable<Record> records =
        FormatModelRegistry.<Record, Object>readBuilder(
                task.file().format(), Record.class, target.io().newInputFile(task.file()))
            .project(deletes.requiredSchema())
            .idToConstant(
                PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant))
            .build();
    return deletes.filter(records);
  }

  /** The equality deletes of one partition of one spec. */
  private final class DeleteGroup {
    private final PartitionSpec spec;
    private final StructLike partition;
    private final Set<Object> buckets = new LinkedHashSet<>();
    private final List<Record> rows = new ArrayList<>();

    DeleteGroup(PartitionSpec spec, StructLike partition) {
      this.spec = spec;
      this.partition = partition;
    }

    /** Writes the group's delete file, if it deletes anything. */
    List<DeleteFile> write(boolean byGroup) {
      if (buckets.isEmpty() && rows.isEmpty()) {
        return List.of();
      }
      List<String> columns = new ArrayList<>();
      columns.add(plan.bucketOutput());
      if (byGroup) {
        columns.addAll(plan.groupKeys());
      }
      Schema deleteSchema = schema.select(columns);
      int[] ids = deleteSchema.columns().stream().mapToInt(Types.NestedField::fieldId).toArray();
      GenericFileWriterFactory factory =
          new GenericFileWriterFactory.Builder(target)
              .dataFileFormat(FileFormat.PARQUET)
              .deleteFileFormat(FileFormat.PARQUET)
              .equalityFieldIds(ids)
              .equalityDeleteRowSchema(deleteSchema)
              .build();
      OutputFileFactory names =
          OutputFileFactory.builderFor(target, 0, 0)
              .format(FileFormat.PARQUET)
              .operationId(operationId + "-eq-" + UUID.randomUUID())
              .build();
      EqualityDeleteWriter<Record> writer =
          HadoopConfigurations.withDefaultsInMemory(
              () ->
                  factory.newEqualityDeleteWriter(
                      names.newOutputFile(spec, partition), spec, partition));
      try (writer) {
        if (byGroup) {
          for (Record row : rows) {
            GenericRecord delete = GenericRecord.create(deleteSchema);
            for (String column : columns) {
              delete.setField(column, row.getField(column));
            }
            writer.write(delete);
          }
        } else {
          for (Object value : buckets) {
            GenericRecord delete = GenericRecord.create(deleteSchema);
            delete.setField(plan.bucketOutput(), value);
            writer.write(delete);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot write the equality deletes of a refresh", e);
      }
      return List.of(writer.toDeleteFile());
    }
  }
}
