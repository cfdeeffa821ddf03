package io.floe.topology.iceberg;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A catalog that counts, per table, the loads ({@code loadTable}) and the refreshes ({@code
 * Table.refresh()}, and Iceberg's own before each commit) of the tables it hands out: the catalog
 * round trips a caller makes.
 */
public final class CountingCatalog implements Catalog {

  private final Catalog catalog;
  private final Map<TableIdentifier, AtomicInteger> loads =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<TableIdentifier, AtomicInteger> refreshes =
      new java.util.concurrent.ConcurrentHashMap<>();

  public CountingCatalog(Catalog catalog) {
    this.catalog = catalog;
  }

  /** Loads of the table so far. */
  public int loads(TableIdentifier id) {
    AtomicInteger count = loads.get(id);
    return count == null ? 0 : count.get();
  }

  /** Refreshes of the table so far, through the tables this catalog loaded. */
  public int refreshes(TableIdentifier id) {
    AtomicInteger count = refreshes.get(id);
    return count == null ? 0 : count.get();
  }

  /**
   * Forgets the counts, to zero: a table loaded earlier and refreshed later (a source whose loads
   * share metadata) still counts its refreshes.
   */
  public void reset() {
    loads.values().forEach(count -> count.set(0));
    refreshes.values().forEach(count -> count.set(0));
  }

  @Override
  public Table loadTable(TableIdentifier identifier) {
    loads.computeIfAbsent(identifier, id -> new AtomicInteger()).incrementAndGet();
    Table table = catalog.loadTable(identifier);
    return new BaseTable(
        new CountingOperations(
            ((HasTableOperations) table).operations(),
            refreshes.computeIfAbsent(identifier, id -> new AtomicInteger())),
        table.name());
  }

  @Override
  public List<TableIdentifier> listTables(Namespace namespace) {
    return catalog.listTables(namespace);
  }

  @Override
  public boolean dropTable(TableIdentifier identifier, boolean purge) {
    return catalog.dropTable(identifier, purge);
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    catalog.renameTable(from, to);
  }

  @Override
  public TableBuilder buildTable(TableIdentifier identifier, Schema schema) {
    return catalog.buildTable(identifier, schema);
  }

  @Override
  public String name() {
    return catalog.name();
  }

  private static final class CountingOperations extends ForwardingTableOperations {
    private final AtomicInteger refreshes;

    CountingOperations(TableOperations ops, AtomicInteger refreshes) {
      super(ops);
      this.refreshes = refreshes;
    }

    @Override
    public TableMetadata refresh() {
      refreshes.incrementAndGet();
      return delegate.refresh();
    }
  }
}
