package io.floe.dev.bench;

import io.floe.app.config.CatalogConfig;
import io.floe.dev.EmbeddedStack;
import io.floe.testing.workload.Trades;
import io.floe.topology.refresh.eval.ViewScan;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The embedded stack's catalog without a broker, for scenarios that drive the refresher directly.
 */
final class BenchLake implements AutoCloseable {

  private final CatalogConfig catalogs;

  /** The refreshers' scan workers, as the service has them; shut down with the lake. */
  private final ExecutorService scans = ViewScan.newExecutor();

  BenchLake(Path dir) {
    Properties properties = new Properties();
    EmbeddedStack.catalogProperties(dir)
        .forEach(
            (key, value) ->
                properties.setProperty(
                    CatalogConfig.PREFIX + EmbeddedStack.CATALOG + "." + key, value));
    this.catalogs = CatalogConfig.from(properties);
    EmbeddedStack.createNamespaces(
        catalog(), Namespace.of("market"), Namespace.of("analytics"), Namespace.of("poller"));
  }

  Catalog catalog() {
    return catalogs.catalog(EmbeddedStack.CATALOG);
  }

  /** For the refresher: every catalog name resolves to the one catalog. */
  Catalog catalog(String name) {
    return catalogs.catalog(name);
  }

  Table createTrades(String name, PartitionSpec spec) {
    return catalog()
        .buildTable(TableIdentifier.of("market", name), Trades.SCHEMA)
        .withPartitionSpec(spec)
        .withProperty("format-version", "2")
        .create();
  }

  /** A view the scenarios refresh directly, compiled as the service would (revision 0). */
  static io.floe.topology.view.CompiledView compiled(io.floe.topology.view.ViewDefinition view) {
    try {
      return io.floe.topology.view.CompiledView.compile(view, 0);
    } catch (io.floe.topology.view.InvalidViewException e) {
      throw new IllegalArgumentException("Invalid bench view " + view.name(), e);
    }
  }

  /** A views-file entry, for the scenarios that run the whole service. */
  static String yamlEntry(String name, String query, String target, String refresh) {
    return "  - name: "
        + name
        + "\n    query: \""
        + query.replace("\"", "\\\"")
        + "\"\n    target: "
        + target
        + "\n    refresh: "
        + refresh
        + "\n";
  }

  /** Where the refreshers of this lake run their scan workers beside the refreshing thread. */
  Executor scanThreads() {
    return scans;
  }

  @Override
  public void close() throws Exception {
    scans.shutdownNow();
    catalogs.close();
  }
}
