package io.floe.topology.refresh;

import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.ReplaceSortOrder;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a view's target table on first use and makes sure an existing one belongs to the view:
 * format version 2 (3 when the output has a type only v3 holds, such as the {@code timestamp_ns} of
 * {@code min(ts)} over a nanosecond column), sorted by bucket then group keys, partitioned as
 * {@link TargetLayout} says, and marked with {@code floe.view}. A table that exists and was not
 * created by Floe for this view, empty or not, is refused without being touched. A deleted view's
 * target is dropped with its state table ({@link #drop}).
 */
public final class TargetTables {

  private static final Logger LOG = LoggerFactory.getLogger(TargetTables.class);

  private TargetTables() {}

  /**
   * The target of {@code view}, created if missing and with its schema brought in line with the
   * plan's output schema if Floe owns it.
   *
   * @throws TargetNotOwnedException when the table exists and Floe did not create it for this view
   */
  static Table prepare(Catalog catalog, CompiledView compiled, ViewPlan plan) {
    ViewDefinition view = compiled.definition();
    TableIdentifier id = view.target().identifier();
    Table table;
    try {
      table = catalog.loadTable(id);
    } catch (NoSuchTableException e) {
      return create(catalog, compiled, plan, id);
    }
    // Only a table Floe created for this view is ever changed: floe.view is set at creation and
    // nowhere else, so it is also what dropping a target and the rules of view writes go by.
    String owner = table.properties().get(FloeProperties.VIEW);
    if (!view.name().equals(owner)) {
      throw new TargetNotOwnedException(
          "Target "
              + view.target()
              + " exists"
              + (isEmpty(table) ? "" : ", holds rows")
              + " and was "
              + (owner == null ? "not created by Floe" : "created for view '" + owner + "'")
              + ": refusing to use it; drop it or choose another target for view '"
              + view.name()
              + "'");
    }
    if (evolveSchema(table, compiled, plan)) {
      table.refresh();
    }
    return table;
  }

  /**
   * Drops the target of the deleted view {@code view} and the view's state table beside it ({@link
   * StateTable}), each with its files. The caller has made sure that Floe created the target for
   * this view ({@code floe.view}); the state table is dropped only if Floe created it for this
   * view.
   *
   * @return whether the target was dropped (false when there was none)
   */
  public static boolean drop(Catalog catalog, TableName target, String view) {
    boolean dropped = catalog.dropTable(target.identifier(), true);
    StateTable.drop(catalog, target, view);
    return dropped;
  }

  private static Table create(
      Catalog catalog, CompiledView compiled, ViewPlan plan, TableIdentifier id) {
    ViewDefinition view = compiled.definition();
    Schema schema = plan.outputSchema();
    if (catalog instanceof SupportsNamespaces namespaces
        && !namespaces.namespaceExists(id.namespace())) {
      createNamespace(namespaces, id.namespace());
    }
    Map<String, String> properties = new HashMap<>(TargetMaintenance.initialProperties());
    properties.put(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion(schema)));
    properties.put(TableProperties.PARQUET_COMPRESSION, "zstd");
    properties.put(FloeProperties.VIEW, view.name());
    properties.put(FloeProperties.SOURCE_TABLE, plan.source().toString());
    PartitionSpec spec = TargetLayout.newSpec(view, plan, schema);
    try {
      Table table =
          catalog
              .buildTable(id, schema)
              .withPartitionSpec(spec)
              .withSortOrder(sortOrder(schema, plan))
              .withProperties(properties)
              .create();
      LOG.info("Created target {} of view {}", view.target(), view.name());
      return table;
    } catch (AlreadyExistsException e) {
      // Another instance won the race; check it as any existing table.
      return prepare(catalog, compiled, plan);
    }
  }

  /** Format 2, readable by every engine, unless the output schema needs a v3 type. */
  private static int formatVersion(Schema schema) {
    try {
      Schema.checkCompatibility(schema, 2);
      return 2;
    } catch (IllegalStateException e) {
      return 3;
    }
  }

  private static void createNamespace(SupportsNamespaces namespaces, Namespace namespace) {
    String[] levels = namespace.levels();
    for (int i = 1; i <= levels.length; i++) {
      Namespace prefix = Namespace.of(java.util.Arrays.copyOf(levels, i));
      try {
        if (!namespaces.namespaceExists(prefix)) {
          namespaces.createNamespace(prefix);
        }
      } catch (RuntimeException e) {
        // Another refresh may have created it at the same moment; not every catalog reports that
        // as AlreadyExistsException (the JDBC catalog on SQLite raises a constraint violation).
        if (!namespaces.namespaceExists(prefix)) {
          throw e;
        }
      }
    }
  }

  /** Sorted by bucket, then by the group keys, nulls first: the order refreshes write in. */
  private static SortOrder sortOrder(Schema schema, ViewPlan plan) {
    SortOrder.Builder order = SortOrder.builderFor(schema);
    order.asc(plan.bucketOutput(), NullOrder.NULLS_FIRST);
    for (String key : plan.groupKeys()) {
      order.asc(key, NullOrder.NULLS_FIRST);
    }
    return order.build();
  }

  /**
   * Whether the table holds no rows, told from its files: no current snapshot, or one whose
   * manifests list no live data or delete file. Snapshot summaries cannot tell, since writers need
   * not record totals in them.
   */
  static boolean isEmpty(Table table) {
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return true;
    }
    for (ManifestFile manifest : current.allManifests(table.io())) {
      // Both are true when a manifest does not count its files.
      if (manifest.hasAddedFiles() || manifest.hasExistingFiles()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Brings an existing target in line with a changed view (returns whether it changed anything):
   * adds the columns the view now outputs (widening types where Iceberg allows it), re-sorts and
   * re-partitions it by the new keys, then drops the columns it no longer outputs, in one guarded
   * commit (a transaction, since later steps refer to what earlier ones create). The commit records
   * the definition it shapes the table for ({@code floe.view-revision}, {@code floe.view-version})
   * and removes the bookmark of the rows, which no longer are any definition's complete output: an
   * older definition can then neither change the schema back nor commit rows, and the changed view
   * fully refreshes the table.
   */
  private static boolean evolveSchema(Table table, CompiledView compiled, ViewPlan plan) {
    ViewDefinition view = compiled.definition();
    Schema output = plan.outputSchema();
    if (!needsChange(table, view, plan)) {
      return false;
    }
    try {
      GuardedCommit.transaction(
          table,
          "the change of target " + view.target() + " to the output of view " + view.name(),
          CommitGuard.definitionOnly(compiled),
          bookmark -> bookmark.redefined(compiled.revision(), compiled.version()),
          change -> evolve(change, view, plan),
          changed -> !needsChange(changed, view, plan));
    } catch (CommitGuard.SupersededException e) {
      throw e;
    } catch (IllegalArgumentException | org.apache.iceberg.exceptions.ValidationException e) {
      throw new TargetNotOwnedException(
          "Cannot change target "
              + view.target()
              + " to the output of view '"
              + view.name()
              + "': "
              + e.getMessage()
              + "; drop the target table to let Floe recreate it");
    }
    LOG.info(
        "Changed target {} to the output of view {} (revision {}): {}",
        view.target(),
        view.name(),
        compiled.revision(),
        output.asStruct());
    return true;
  }

  /** Whether the target's columns, sort order or partitioning differ from the view's output. */
  private static boolean needsChange(Table table, ViewDefinition view, ViewPlan plan) {
    Schema output = plan.outputSchema();
    return !sameColumns(table.schema(), output)
        || !table.sortOrder().sameOrder(sortOrder(table.schema(), plan))
        || TargetLayout.evolvedSpec(table, view, plan, output) != null;
  }

  /**
   * Makes the changes in one transaction: adds the columns, re-sorts and re-partitions, then drops
   * and orders the columns.
   */
  private static void evolve(Transaction change, ViewDefinition view, ViewPlan plan) {
    Schema output = plan.outputSchema();
    change.updateSchema().unionByNameWith(output).commit();
    ReplaceSortOrder order = change.replaceSortOrder();
    order.asc(plan.bucketOutput(), NullOrder.NULLS_FIRST);
    for (String key : plan.groupKeys()) {
      order.asc(key, NullOrder.NULLS_FIRST);
    }
    order.commit();
    Table changing = change.table();
    if (TargetLayout.evolvedSpec(changing, view, plan, output) != null) {
      UpdatePartitionSpec spec = change.updateSpec();
      for (PartitionField field : changing.spec().fields()) {
        spec.removeField(field.name());
      }
      for (TargetPartitionField field : TargetLayout.partitioning(view, plan)) {
        spec.addField(field.toTerm());
      }
      spec.commit();
    }
    UpdateSchema drop = change.updateSchema();
    boolean dropping = false;
    for (Types.NestedField column : changing.schema().columns()) {
      if (output.findField(column.name()) == null) {
        drop.deleteColumn(column.name());
        dropping = true;
      }
    }
    List<String> columnOrder = output.columns().stream().map(Types.NestedField::name).toList();
    for (int i = 1; i < columnOrder.size(); i++) {
      drop.moveAfter(columnOrder.get(i), columnOrder.get(i - 1));
      dropping = true;
    }
    if (dropping) {
      drop.commit();
    }
  }

  private static boolean sameColumns(Schema a, Schema b) {
    List<Types.NestedField> x = a.columns();
    List<Types.NestedField> y = b.columns();
    if (x.size() != y.size()) {
      return false;
    }
    for (int i = 0; i < x.size(); i++) {
      if (!x.get(i).name().equals(y.get(i).name())
          || !Objects.equals(x.get(i).type(), y.get(i).type())) {
        return false;
      }
    }
    return true;
  }

  /** The target cannot be used for this view; nothing was changed. */
  static final class TargetNotOwnedException extends RuntimeException {
    TargetNotOwnedException(String message) {
      super(message);
    }
  }
}
