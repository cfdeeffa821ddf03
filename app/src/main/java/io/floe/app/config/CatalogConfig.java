package io.floe.app.config;

import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.iceberg.HadoopConfigurations;
import io.floe.topology.refresh.Bookmark;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewValidator;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * The Iceberg catalogs of a Floe configuration: every {@code floe.catalog.<name>.<property>} key
 * becomes Iceberg catalog property {@code <property>} of catalog {@code <name>}, built through
 * Iceberg's {@link CatalogUtil} ({@code type} selects jdbc, rest, hadoop, glue, nessie, hive; or
 * {@code catalog-impl} any class), with {@link CountingFileIO} around the FileIO each would use, so
 * that Floe's object-store requests are counted. Catalogs are built when first used. Messages about
 * a catalog that fails go through {@link Secrets#text}, since Iceberg's and the drivers' messages
 * may quote a URI with its credentials.
 */
public final class CatalogConfig implements AutoCloseable {

  public static final String PREFIX = "floe.catalog.";

  private final Map<String, Map<String, String>> properties;
  private final long cacheBytes;
  private final long dimensionBytes;
  private final Map<String, Catalog> built = new ConcurrentHashMap<>();

  private CatalogConfig(
      Map<String, Map<String, String>> properties, long cacheBytes, long dimensionBytes) {
    this.properties = properties;
    this.cacheBytes = cacheBytes;
    this.dimensionBytes = dimensionBytes;
  }

  /**
   * The catalogs declared in {@code config}, whose immutable files are cached within {@code
   * floe.cache.bytes} ({@link FileCaches}), and whose dimension tables are checked at validation
   * against {@code floe.join.dimension.bytes} ({@link DimensionTables#tooLarge}).
   */
  public static CatalogConfig from(Properties config) {
    Map<String, Map<String, String>> catalogs = new TreeMap<>();
    for (String key : config.stringPropertyNames()) {
      if (!key.startsWith(PREFIX)) {
        continue;
      }
      String rest = key.substring(PREFIX.length());
      int dot = rest.indexOf('.');
      if (dot <= 0 || dot == rest.length() - 1) {
        throw new IllegalArgumentException(
            "Invalid catalog key '" + key + "': expected " + PREFIX + "<name>.<property>");
      }
      catalogs
          .computeIfAbsent(rest.substring(0, dot), name -> new TreeMap<>())
          .put(rest.substring(dot + 1), config.getProperty(key));
    }
    return new CatalogConfig(
        catalogs,
        longOf(config, FileCaches.BYTES_CONFIG, FileCaches.DEFAULT_BYTES),
        longOf(config, DimensionTables.BYTES_CONFIG, DimensionTables.BYTES_DEFAULT));
  }

  private static long longOf(Properties config, String key, long defaultValue) {
    String value = config.getProperty(key);
    try {
      return value == null ? defaultValue : Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Invalid value '" + value + "' of " + key + ": not a number");
    }
  }

  /** Reads a properties file. */
  public static Properties readProperties(Path file) throws IOException {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    }
    return properties;
  }

  /** Names of the configured catalogs. */
  public Iterable<String> names() {
    return properties.keySet();
  }

  public boolean isEmpty() {
    return properties.isEmpty();
  }

  /**
   * The catalog called {@code name}.
   *
   * @throws IllegalArgumentException when no such catalog is configured or it cannot be built
   */
  public Catalog catalog(String name) {
    Map<String, String> catalogProperties = properties.get(name);
    if (catalogProperties == null) {
      throw new IllegalArgumentException(
          "unknown catalog '"
              + name
              + "' (configured: "
              + (properties.isEmpty() ? "none" : String.join(", ", properties.keySet()))
              + ")");
    }
    return built.computeIfAbsent(name, this::build);
  }

  /**
   * The Iceberg properties catalog {@code name} is built with: its requests counted and its
   * immutable files cached by {@link CountingFileIO}, or, where Floe cannot wrap its FileIO, with
   * Iceberg's manifest cache ({@link FileCaches#catalogProperties}).
   */
  Map<String, String> icebergProperties(String name) {
    Map<String, String> catalogProperties = CountingFileIO.install(properties.get(name));
    return cacheBytes > 0
        ? FileCaches.catalogProperties(catalogProperties, cacheBytes, properties.size())
        : catalogProperties;
  }

  private Catalog build(String name) {
    try {
      return CatalogUtil.buildIcebergCatalog(
          name, icebergProperties(name), HadoopConfigurations.forCatalogs());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "cannot build catalog '" + name + "': " + Secrets.text(e.getMessage()), e);
    }
  }

  /**
   * Source schemas read from these catalogs, for view validation, and whether a dimension's hash
   * table can fit {@code floe.join.dimension.bytes}.
   */
  public ViewValidator.SchemaLookup schemaLookup() {
    return new ViewValidator.SchemaLookup() {
      @Override
      public Optional<Schema> schemaOf(TableName table) {
        return CatalogConfig.this.schemaOf(table);
      }

      @Override
      public Optional<String> tooLargeToJoin(ViewPlan.Dimension dimension) {
        return load(dimension.table(), "dimension")
            .flatMap(
                t ->
                    DimensionTables.tooLarge(
                        t, dimension.requiredColumns(), CatalogConfig.this.dimensionBytes));
      }
    };
  }

  /** What these catalogs hold at views' targets, for the rules of view writes. */
  public ViewConflicts.Targets targets() {
    return table ->
        load(table, "target")
            .map(
                t -> {
                  Long revision = Bookmark.of(t).viewRevision();
                  return new ViewConflicts.ExistingTable(
                      t.properties().get(FloeProperties.VIEW),
                      revision == null ? OptionalLong.empty() : OptionalLong.of(revision));
                });
  }

  private Optional<Schema> schemaOf(TableName table) {
    return load(table, "source").map(Table::schema);
  }

  private Optional<Table> load(TableName table, String role) {
    Catalog catalog = catalog(table.catalog());
    try {
      return Optional.of(catalog.loadTable(table.identifier()));
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      return Optional.empty();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "cannot load " + role + " table " + table + ": " + Secrets.text(e.getMessage()), e);
    }
  }

  @Override
  public void close() throws Exception {
    for (Catalog catalog : built.values()) {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }
}
