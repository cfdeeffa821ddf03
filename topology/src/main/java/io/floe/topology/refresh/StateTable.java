package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.CompiledQuery.PartialStates;
import io.floe.topology.refresh.eval.SubBucketQuery;
import io.floe.topology.refresh.eval.agg.PartialState;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The companion table of a view whose aggregates keep partial states ({@link PartialStates}):
 * {@code <target>__floe_state} beside the target, one row per group of every sub-bucket ({@link
 * Bucketing#subBuckets}; of every bucket when it has none): the bucket and the group keys, as the
 * target names and types them, the sub-bucket ({@link #SUB_BUCKET}), a column per part of each
 * aggregate's state ({@code mean__sum}, {@code mean__compensation}, {@code mean__count} for {@code
 * avg(price) AS mean}; an aggregate whose value is its state keeps its own name). Never read as the
 * view: the target holds the view's rows, exactly the view's columns.
 *
 * <p>Exactness (DESIGN §3.6): each refresh chunk commits the state before the target, and the
 * target's commit records the state's snapshot ({@link FloeProperties#STATE_SNAPSHOT_ID}). A state
 * table whose current snapshot is another (a crash or a lost race between the two commits) is set
 * back to the one the target records before anything reads it ({@link #trust}); when that snapshot
 * is gone, the state is not trusted and the refresh rebuilds it with a full refresh.
 */
final class StateTable {

  private static final Logger LOG = LoggerFactory.getLogger(StateTable.class);

  /** What a state table's name adds to its target's. */
  static final String SUFFIX = "__floe_state";

  /**
   * The column of the sub-bucket a state row summarizes ({@link Bucketing#subBuckets}), after the
   * group keys, as the target types the bucket; absent when the view's bucket has no sub-buckets.
   */
  static final String SUB_BUCKET = "floe__sub_bucket";

  private final Table table;
  private final Schema schema;
  private final Layout layout;

  /** Why the table was created again with other columns, or null. */
  private final String rebuilt;

  /** The target type of each group-row position's key, or null for an aggregate's position. */
  private final Type[] keyTypes;

  /**
   * How a view's states are cut: the view's plan and partial states, the query whose groups' states
   * are stored (the view's own, or the one over sub-buckets), the position of the bucket among the
   * group keys, and the bucketing of the sub-buckets in source and in target values (both empty
   * when the states are per bucket).
   */
  record Layout(
      ViewPlan plan,
      PartialStates states,
      CompiledQuery aggregating,
      int bucketKey,
      Optional<Bucketing> subBuckets,
      Optional<Bucketing> targetBuckets) {

    static Layout of(CompiledQuery query, ViewPlan plan) {
      Optional<CompiledQuery> finer;
      try {
        finer = SubBucketQuery.of(plan);
      } catch (InvalidViewException e) {
        // The same plan compiled as the view's query: no other outcome is expected.
        throw new IllegalStateException(e.getMessage(), e);
      }
      PartialStates states = query.partialStates().orElseThrow();
      int bucketKey = -1;
      for (int k = 0; k < states.keys(); k++) {
        if (states.columns().get(k).equals(plan.bucketOutput())) {
          bucketKey = k;
        }
      }
      Bucketing bucketing = plan.bucketing();
      return new Layout(
          plan,
          states,
          finer.orElse(query),
          bucketKey,
          finer.map(sub -> bucketing.subBuckets().orElseThrow()),
          finer.map(
              sub ->
                  Bucketing.of(
                      bucketing.granularity(),
                      bucketing.columnType().targetType(),
                      bucketing.zone())));
    }

    boolean isSubBucketed() {
      return subBuckets.isPresent();
    }

    /** The view's bucket (a target value) of a sub-bucket (a target value), null for null. */
    Object bucketOf(Object subBucket) {
      if (targetBuckets.isEmpty()) {
        return subBucket;
      }
      if (subBucket instanceof Integer day) {
        return (int) targetBuckets.get().floor(day);
      }
      return subBucket == null ? null : targetBuckets.get().floor((Long) subBucket);
    }
  }

  private StateTable(Table table, Schema schema, Layout layout, String rebuilt) {
    this.table = table;
    this.schema = schema;
    this.layout = layout;
    this.rebuilt = rebuilt;
    this.keyTypes = new Type[layout.states().keys()];
    for (int k = 0; k < keyTypes.length; k++) {
      keyTypes[k] = schema.columns().get(k).type();
    }
  }

  /** The identifier of the state table of a target. */
  static TableIdentifier identifier(TableIdentifier target) {
    return TableIdentifier.of(target.namespace(), target.name() + SUFFIX);
  }

  /**
   * The state table of {@code view}, created beside {@code target} if missing, or created again
   * when its columns are not those the view's states need (a changed view refreshes fully, which
   * rebuilds it); null for a view that keeps no partial states.
   *
   * @throws TargetTables.TargetNotOwnedException when a table of that name exists that Floe did not
   *     create for this view
   */
  static StateTable prepare(
      Catalog catalog, CompiledView view, ViewPlan plan, CompiledQuery query, Table target) {
    if (query.partialStates().isEmpty()) {
      return null;
    }
    Layout layout = Layout.of(query, plan);
    Schema wanted = schema(layout, target.schema());
    TableIdentifier id = identifier(view.target().identifier());
    Table table;
    try {
      table = catalog.loadTable(id);
    } catch (NoSuchTableException e) {
      return new StateTable(create(catalog, view, plan, wanted, id, target), wanted, layout, null);
    }
    if (!view.name().equals(table.properties().get(FloeProperties.VIEW))
        || table.properties().get(FloeProperties.STATE_OF) == null) {
      throw new TargetTables.TargetNotOwnedException(
          "State table "
              + id
              + " of view '"
              + view.name()
              + "' exists and was not created by Floe for it: refusing to use it; drop it");
    }
    if (!table.schema().sameSchema(wanted)) {
      // Another definition's states, or the layout of an earlier release (states per bucket,
      // without the sub-bucket column): never read as this one's.
      String reason =
          "the state table of view "
              + view.name()
              + " had other columns than its partial states need ("
              + (table.schema().findField(SUB_BUCKET) == null && layout.isSubBucketed()
                  ? "no sub-buckets"
                  : "another layout")
              + ")";
      LOG.info("State table {}: {}: creating it again", id, reason);
      catalog.dropTable(id, true);
      return new StateTable(
          create(catalog, view, plan, wanted, id, target), wanted, layout, reason);
    }
    return new StateTable(table, table.schema(), layout, null);
  }

  /**
   * Drops, with its files, the state table beside {@code target}, the target of the deleted view
   * {@code view}, when Floe created it for that view (its {@code floe.view} and {@code
   * floe.state-of}); a table of that name that Floe did not create for it stays, with a warning.
   *
   * @return whether a state table was dropped
   */
  static boolean drop(Catalog catalog, TableName target, String view) {
    TableIdentifier id = identifier(target.identifier());
    Table table;
    try {
      table = catalog.loadTable(id);
    } catch (NoSuchTableException e) {
      return false;
    }
    if (!view.equals(table.properties().get(FloeProperties.VIEW))
        || !target.toString().equals(table.properties().get(FloeProperties.STATE_OF))) {
      LOG.warn(
          "Not dropping {} beside target {} of deleted view {}: Floe did not create it as that"
              + " view's state table",
          id,
          target,
          view);
      return false;
    }
    boolean dropped = catalog.dropTable(id, true);
    LOG.info("Dropped state table {} of deleted view {}", id, view);
    return dropped;
  }

  private static Table create(
      Catalog catalog,
      CompiledView view,
      ViewPlan plan,
      Schema schema,
      TableIdentifier id,
      Table target) {
    // A snapshot a refresh, as the target's: the same retention, and old metadata files deleted.
    Map<String, String> properties = new HashMap<>(TargetMaintenance.initialProperties());
    // The target's: a state of nanosecond timestamps needs what such a target needs (v3).
    properties.put(
        TableProperties.FORMAT_VERSION,
        Integer.toString(((HasTableOperations) target).operations().current().formatVersion()));
    properties.put(TableProperties.PARQUET_COMPRESSION, "zstd");
    properties.put(FloeProperties.VIEW, view.name());
    properties.put(FloeProperties.STATE_OF, view.target().toString());
    PartitionSpec spec;
    try {
      spec = TargetLayout.newSpec(view.definition(), plan, schema);
    } catch (RuntimeException e) {
      // A target partitioned on an aggregate's column: the states are not.
      spec = PartitionSpec.unpartitioned();
    }
    try {
      Table table =
          catalog
              .buildTable(id, schema)
              .withPartitionSpec(spec)
              .withProperties(properties)
              .create();
      LOG.info("Created state table {} of view {}", id, view.name());
      return table;
    } catch (org.apache.iceberg.exceptions.AlreadyExistsException e) {
      return catalog.loadTable(id);
    }
  }

  /**
   * The columns of the state: the group keys as the target holds them, in group-row order, then the
   * parts of each aggregate's state.
   */
  static Schema schema(Layout layout, Schema target) {
    ViewPlan plan = layout.plan();
    PartialStates states = layout.states();
    List<Types.NestedField> columns = new ArrayList<>();
    int id = 1;
    for (int k = 0; k < states.keys(); k++) {
      String name = states.columns().get(k);
      columns.add(Types.NestedField.optional(id++, name, target.findField(name).type()));
    }
    if (layout.isSubBucketed()) {
      columns.add(
          Types.NestedField.optional(
              id++, SUB_BUCKET, target.findField(plan.bucketOutput()).type()));
    }
    for (int a = 0; a < states.states().size(); a++) {
      String name = states.columns().get(states.keys() + a);
      for (PartialState.Part part : states.states().get(a).parts()) {
        Type type =
            switch (part.kind()) {
              case VALUE -> states.valueTypes().get(a);
              case DOUBLE -> Types.DoubleType.get();
              case LONG -> Types.LongType.get();
            };
        String column = part.suffix().isEmpty() ? name : name + "__" + part.suffix();
        columns.add(Types.NestedField.optional(id++, column, type));
      }
    }
    return new Schema(columns);
  }

  Table table() {
    return table;
  }

  Schema schema() {
    return schema;
  }

  Layout layout() {
    return layout;
  }

  /**
   * The {@code plan}, or a full refresh when it would fold into a state of the view's ({@code
   * states}, or null for none) that the target's {@code bookmark} does not record and that cannot
   * be set back to the one it records ({@link #trust}): only a full refresh makes them agree again.
   */
  static RefreshPlanner.Plan trusted(
      StateTable states, RefreshPlanner.Plan plan, Bookmark bookmark, String view) {
    if (states != null
        && plan instanceof RefreshPlanner.Recompute recompute
        && recompute.mode() != RefreshOutcome.Mode.FULL
        && !states.trust(bookmark)) {
      return RefreshPlanner.Recompute.full(
          states.rebuilt != null
              ? states.rebuilt
              : "the partial states of view " + view + " are not those its target records");
    }
    return plan;
  }

  /**
   * Whether the state may be folded into: its current snapshot is the one the target's bookmark
   * records, or is made so (the snapshot the target records is set current again, undoing a state
   * commit whose target commit never came). False when the target records none or the state no
   * longer holds it: then only a full refresh makes state and target agree.
   */
  boolean trust(Bookmark bookmark) {
    Long recorded = bookmark.stateSnapshotId();
    if (recorded == null) {
      return false;
    }
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current != null && current.snapshotId() == recorded) {
      return true;
    }
    if (table.snapshot(recorded) == null) {
      return false;
    }
    LOG.info(
        "State table {} is at snapshot {}, its target records {}: setting it back",
        table.name(),
        current == null ? null : current.snapshotId(),
        recorded);
    table.manageSnapshots().setCurrentSnapshot(recorded).commit();
    table.refresh();
    return true;
  }

  /**
   * The stored state rows of the buckets {@code ranges} (as the target stores them), and of the
   * null bucket when asked, as group rows of the view's partial states, keyed by their group keys.
   */
  Map<List<Object>, Object[]> read(BucketRangeSet ranges, boolean nullBucket) {
    Map<List<Object>, Object[]> rows = new LinkedHashMap<>();
    if (table.currentSnapshot() == null) {
      return rows;
    }
    String bucket = layout.plan().bucketOutput();
    org.apache.iceberg.expressions.Expression filter =
        BucketFilters.of(
            bucket, layout.plan().bucketing().columnType().targetType(), ranges, nullBucket);
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table)
            .useSnapshot(table.currentSnapshot().snapshotId())
            .where(filter)
            .build()) {
      // Rows of other buckets in the files read are no part of these buckets' states.
      org.apache.iceberg.expressions.Evaluator inRanges =
          new org.apache.iceberg.expressions.Evaluator(schema.asStruct(), filter);
      InternalRecordWrapper internal = new InternalRecordWrapper(schema.asStruct());
      for (Record record : records) {
        if (!inRanges.eval(internal.wrap(record))) {
          continue;
        }
        Object[] row = groupRow(record);
        rows.put(key(row), row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  /**
   * A state row as a group row: the keys (the sub-bucket in the bucket's place), then each
   * aggregate's parts.
   */
  private Object[] groupRow(Record record) {
    int keys = layout.states().keys();
    Object[] row = new Object[keys + layout.states().states().size()];
    int column = 0;
    for (int k = 0; k < keys; k++, column++) {
      row[k] = IcebergValues.toNative(keyTypes[k], record.get(column));
    }
    if (layout.isSubBucketed()) {
      row[layout.bucketKey()] =
          IcebergValues.toNative(keyTypes[layout.bucketKey()], record.get(column++));
    }
    for (int a = 0; a < layout.states().states().size(); a++) {
      List<PartialState.Part> parts = layout.states().states().get(a).parts();
      Object[] values = new Object[parts.size()];
      for (int p = 0; p < values.length; p++, column++) {
        values[p] = IcebergValues.toNative(schema.columns().get(column).type(), record.get(column));
      }
      row[keys + a] = values;
    }
    return row;
  }

  /**
   * A group row's keys as values of the state table's own types, so that the same group read from
   * the table and aggregated from the source has equal keys; the row's keys are set to them.
   */
  List<Object> key(Object[] row) {
    Object[] key = new Object[layout.states().keys()];
    for (int k = 0; k < key.length; k++) {
      row[k] = IcebergValues.toNative(keyTypes[k], IcebergValues.toIceberg(keyTypes[k], row[k]));
      key[k] = row[k];
    }
    return Arrays.asList(key);
  }

  /**
   * A group row (the sub-bucket in the bucket's place) as a row of the state table's columns, for
   * {@link TargetWriter}.
   */
  Object[] stateRow(Object[] row) {
    Object[] out = new Object[schema.columns().size()];
    int keys = layout.states().keys();
    System.arraycopy(row, 0, out, 0, keys);
    int column = keys;
    if (layout.isSubBucketed()) {
      out[layout.bucketKey()] = layout.bucketOf(row[layout.bucketKey()]);
      out[column++] = row[layout.bucketKey()];
    }
    for (int a = 0; a < layout.states().states().size(); a++) {
      for (Object part : (Object[]) row[keys + a]) {
        out[column++] = part;
      }
    }
    return out;
  }

  /**
   * Stored and appended group rows merged: a group in both gets each aggregate's states merged.
   *
   * @param stored the stored rows, keyed as {@link #read} keys them; the map is the result
   */
  Map<List<Object>, Object[]> merge(Map<List<Object>, Object[]> stored, List<Object[]> delta) {
    int keys = layout.states().keys();
    for (Object[] row : delta) {
      Object[] existing = stored.get(key(row));
      if (existing == null) {
        stored.put(key(row), row);
        continue;
      }
      for (int a = 0; a < layout.states().states().size(); a++) {
        existing[keys + a] =
            layout
                .states()
                .states()
                .get(a)
                .merge((Object[]) existing[keys + a], (Object[]) row[keys + a]);
      }
    }
    return stored;
  }

  /**
   * The view's groups of the given sub-bucket group rows: the states of the sub-buckets of each
   * bucket merged into one group row of that bucket.
   */
  List<Object[]> viewGroups(Iterable<Object[]> subBucketRows) {
    if (!layout.isSubBucketed()) {
      List<Object[]> rows = new ArrayList<>();
      subBucketRows.forEach(rows::add);
      return rows;
    }
    List<Object[]> inBuckets = new ArrayList<>();
    for (Object[] row : subBucketRows) {
      Object[] copy = row.clone();
      copy[layout.bucketKey()] = layout.bucketOf(row[layout.bucketKey()]);
      inBuckets.add(copy);
    }
    return new ArrayList<>(merge(new LinkedHashMap<>(), inBuckets).values());
  }

  /**
   * Commits a chunk's state rows: {@code added} replace {@code removed}, conditional on the state
   * table being where the chunk read it ({@code starting}); returns the new snapshot's id. The
   * summary records the chunk, by which a commit of unknown state is found.
   */
  long commit(
      Snapshot starting,
      List<DataFile> added,
      List<DataFile> removed,
      ChunkId chunk,
      String view,
      ManifestWork manifests) {
    String chunkId = chunk.toString();
    try {
      OverwriteFiles overwrite =
          manifests.commit(table.newOverwrite(), table, table.currentSnapshot());
      removed.forEach(overwrite::deleteFile);
      added.forEach(overwrite::addFile);
      if (starting != null) {
        overwrite
            .validateFromSnapshot(starting.snapshotId())
            .validateNoConflictingData()
            .validateNoConflictingDeletes();
      }
      overwrite.set(FloeProperties.VIEW, view);
      overwrite.set(FloeProperties.REFRESH_ID, chunkId);
      overwrite.commit();
    } catch (CommitStateUnknownException e) {
      table.refresh();
      Snapshot current = table.currentSnapshot();
      if (current == null || !chunkId.equals(current.summary().get(FloeProperties.REFRESH_ID))) {
        throw e;
      }
    }
    return table.currentSnapshot().snapshotId();
  }

  /**
   * Compacts the state's small files, as a target's, while they agree with what {@code target}
   * records, and moves what it records with them ({@link TargetCompaction#afterStateCommit}).
   *
   * @param hot the buckets whose files stay out, as the target stores them, or null
   */
  void compact(
      Table target,
      CompiledView view,
      BucketRangeSet hot,
      RefreshId refreshId,
      ManifestWork manifests) {
    TargetCompaction.afterStateCommit(table, target, view, hot, refreshId, manifests);
  }

  /**
   * Expires the state's snapshots past its retention, as a target's, while they agree with what
   * {@code target}, the view's, records ({@link TargetMaintenance#afterStateCommit}).
   */
  void expire(Table target, CompiledView view, long nowMillis, ManifestWork manifests) {
    TargetMaintenance.afterStateCommit(table, target, view, nowMillis, manifests);
  }

  /** Every live data file of the state: what a full refresh's first chunk replaces. */
  List<DataFile> liveFiles() {
    List<DataFile> files = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return files;
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        files.add(task.file());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }
}
