package io.floe.dev;

import io.floe.app.config.FloeConfig;
import io.floe.testing.EmbeddedKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;

/**
 * Everything Floe needs, in one directory and one process: an in-process Kafka broker (KRaft) and
 * an Iceberg JDBC catalog named {@code lake} on a SQLite file with a local warehouse. {@code floe
 * demo} and {@code floe bench} run on it; its {@code floe.properties} is the file {@code floe run}
 * would take for the same setup.
 */
public final class EmbeddedStack implements AutoCloseable {

  public static final String CATALOG = "lake";

  private final Path dir;
  private final EmbeddedKafka kafka;

  private EmbeddedStack(Path dir, EmbeddedKafka kafka) {
    this.dir = dir;
    this.kafka = kafka;
  }

  /** Starts the broker with its log under {@code dir/kafka}. */
  public static EmbeddedStack start(Path dir) throws IOException {
    Files.createDirectories(dir);
    return new EmbeddedStack(dir, EmbeddedKafka.start(dir.resolve("kafka")));
  }

  public Path dir() {
    return dir;
  }

  public String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  /** The Iceberg properties of the {@code lake} catalog: JDBC on SQLite, warehouse beside it. */
  public static Map<String, String> catalogProperties(Path dir) {
    return Map.of(
        "type",
        "jdbc",
        "uri",
        "jdbc:sqlite:" + dir.resolve("catalog.db"),
        "jdbc.schema-version",
        "V1",
        "warehouse",
        dir.resolve("warehouse").toUri().toString());
  }

  /** The Kafka Streams state directory of the Floe that {@link #writeConfig} configures. */
  public Path stateDir() {
    return dir.resolve("state");
  }

  /**
   * Writes {@code floe.properties} for this stack, {@code settings} added, and loads it.
   *
   * @param settings Floe and Kafka Streams settings beyond the broker and the catalog
   */
  public FloeConfig writeConfig(String applicationId, Map<String, String> settings)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", kafka.bootstrapServers());
    p.setProperty("application.id", applicationId);
    p.setProperty("state.dir", stateDir().toString());
    p.setProperty(FloeConfig.HTTP_ADVERTISED_HOST, "127.0.0.1");
    catalogProperties(dir)
        .forEach((key, value) -> p.setProperty("floe.catalog." + CATALOG + "." + key, value));
    settings.forEach(p::setProperty);
    Path file = configFile();
    try (var writer = Files.newBufferedWriter(file)) {
      p.store(writer, "The configuration floe run would take for this embedded setup");
    }
    return FloeConfig.load(file);
  }

  /** Where {@link #writeConfig} writes {@code floe.properties}. */
  public Path configFile() {
    return dir.resolve("floe.properties");
  }

  /** Creates the namespaces if the catalog lacks them. */
  public static void createNamespaces(Catalog catalog, Namespace... namespaces) {
    if (catalog instanceof SupportsNamespaces supports) {
      for (Namespace namespace : namespaces) {
        if (!supports.namespaceExists(namespace)) {
          supports.createNamespace(namespace);
        }
      }
    }
  }

  @Override
  public void close() {
    kafka.close();
  }
}
