package io.floe.topology.refresh;

import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
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
 * {@link TargetLayout} says, and marked with {@code floe.view}. A table that exists, holds rows and
 * was not created by Floe for this view is refused without being touched.
 */
final class TargetTables {

  private static final Logger LOG = LoggerFactory.getLogger(TargetTables.class);

  private TargetTables() {}

  /**
   * The target of {@code view}, created if missing and with its schema brought in line with the
   * plan's output schema if Floe owns it.
   *
   * @throws TargetNotOwnedException when the table exists, is not empty and is not this view's
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
    // Changes of an existing target happen behind the guard: a refresh of an older definition,
    // still queued somewhere, never changes the table back.
    Table guarded =
        new BaseTable(
            new GuardedTableOperations(
                ((HasTableOperations) table).operations(),
                CommitGuard.definitionOnly(compiled),
                Map.of(),
                Set.of()),
            table.name());
    String owner = table.properties().get(FloeProperties.VIEW);
    if (!view.name().equals(owner)) {
      if (!isEmpty(table)) {
        throw new TargetNotOwnedException(
            "Target "
                + view.target()
                + " exists, holds rows and was "
                + (owner == null ? "not created by Floe" : "created for view '" + owner + "'")
                + ": refusing to overwrite it; drop it or choose another target for view '"
                + view.name()
                + "'");
      }
      LOG.info("Adopting empty table {} as the target of view {}", view.target(), view.name());
      guarded.updateProperties().set(FloeProperties.VIEW, view.name()).commit();
    }
    if (evolveSchema(guarded, plan.outputSchema(), plan, view)) {
      table.refresh();
    }
    return table;
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

  private static boolean isEmpty(Table table) {
    return table.currentSnapshot() == null
        || "0".equals(table.currentSnapshot().summary().getOrDefault("total-records", "0"));
  }

  /**
   * Brings an existing target in line with a changed view (returns whether it changed anything):
   * adds the columns the view now outputs (widening types where Iceberg allows it), re-sorts and
   * re-partitions it by the new keys, then drops the columns it no longer outputs. A changed view
   * then fully refreshes the table. Each step is its own commit because later steps refer to what
   * earlier ones create.
   */
  private static boolean evolveSchema(
      Table table, Schema output, ViewPlan plan, ViewDefinition view) {
    if (sameColumns(table.schema(), output)
        && table.sortOrder().sameOrder(sortOrder(table.schema(), plan))
        && TargetLayout.evolvedSpec(table, view, plan, output) == null) {
      return false;
    }
    try {
      table.updateSchema().unionByNameWith(output).commit();
      org.apache.iceberg.ReplaceSortOrder order = table.replaceSortOrder();
      order.asc(plan.bucketOutput(), NullOrder.NULLS_FIRST);
      for (String key : plan.groupKeys()) {
        order.asc(key, NullOrder.NULLS_FIRST);
      }
      order.commit();
      if (TargetLayout.evolvedSpec(table, view, plan, output) != null) {
        org.apache.iceberg.UpdatePartitionSpec spec = table.updateSpec();
        for (org.apache.iceberg.PartitionField field : table.spec().fields()) {
          spec.removeField(field.name());
        }
        for (TargetPartitionField field : TargetLayout.partitioning(view, plan)) {
          spec.addField(field.toTerm());
        }
        spec.commit();
      }
      UpdateSchema drop = table.updateSchema();
      boolean dropping = false;
      for (Types.NestedField column : table.schema().columns()) {
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
        "Changed target {} to the output of view {}: {}",
        view.target(),
        view.name(),
        output.asStruct());
    return true;
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
