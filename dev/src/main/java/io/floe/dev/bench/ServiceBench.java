package io.floe.dev.bench;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.CommitNotices;
import io.floe.app.service.FloeService;
import io.floe.app.views.ViewsFile;
import io.floe.dev.EmbeddedStack;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.Freshness;
import io.floe.topology.store.StoreNames;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Floe as it runs in production, on the embedded stack: the service with its views file, plus a
 * writer's side (commit notices) and a way to tell when every view has caught up.
 */
final class ServiceBench implements AutoCloseable {

  /** Floe's application id in the bench, which names its Kafka Streams threads. */
  static final String APPLICATION_ID = "floe-bench";

  private final EmbeddedStack stack;
  private final FloeConfig config;
  private final CatalogConfig catalogs;
  private final CommitNotices notices;
  private final List<ViewDefinition> views;

  /** The source of each view, by view name: parsed once, not at every poll. */
  private final Map<String, TableName> sources = new java.util.concurrent.ConcurrentHashMap<>();

  private FloeService floe;

  private ServiceBench(
      EmbeddedStack stack,
      FloeConfig config,
      CatalogConfig catalogs,
      CommitNotices notices,
      List<ViewDefinition> views) {
    this.stack = stack;
    this.config = config;
    this.catalogs = catalogs;
    this.notices = notices;
    this.views = views;
  }

  /** Starts the broker and writes the configuration and views file; Floe starts later. */
  static ServiceBench prepare(Path dir, String viewsYaml, Map<String, String> settings)
      throws Exception {
    EmbeddedStack stack = EmbeddedStack.start(dir);
    Path viewsFile = dir.resolve("views.yaml");
    Files.writeString(viewsFile, viewsYaml);
    Map<String, String> all = new HashMap<>(settings);
    all.put(FloeConfig.VIEWS_FILE, viewsFile.toString());
    all.put(FloeConfig.HTTP_ENABLED, "false");
    FloeConfig config = stack.writeConfig(APPLICATION_ID, all);
    CatalogConfig catalogs = config.catalogs();
    EmbeddedStack.createNamespaces(
        catalogs.catalog(EmbeddedStack.CATALOG),
        org.apache.iceberg.catalog.Namespace.of("market"),
        org.apache.iceberg.catalog.Namespace.of("analytics"),
        org.apache.iceberg.catalog.Namespace.of("poller"));
    return new ServiceBench(
        stack,
        config,
        catalogs,
        new CommitNotices(config, "floe-bench"),
        ViewsFile.load(viewsFile));
  }

  Catalog catalog(String name) {
    return catalogs.catalog(name);
  }

  Catalog catalog() {
    return catalogs.catalog(EmbeddedStack.CATALOG);
  }

  List<ViewDefinition> views() {
    return views;
  }

  /**
   * An instance of Floe in a process of its own ({@code floe run}), not started: the bench's
   * configuration with its own state directory and an HTTP server on a free loopback port (for its
   * readiness probe), {@code settings} on top, its JVM started as {@code launch} says. Its files
   * are named after it in the bench's directory.
   */
  FloeProcess process(String name, Map<String, String> settings, FloeProcess.Launch launch)
      throws IOException {
    Properties p = new Properties();
    try (Reader reader = Files.newBufferedReader(stack.configFile())) {
      p.load(reader);
    }
    Path stateDir = stack.dir().resolve("state-" + name);
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    p.setProperty("state.dir", stateDir.toString());
    p.setProperty(FloeConfig.HTTP_ENABLED, "true");
    p.setProperty(FloeConfig.HTTP_HOST, "127.0.0.1");
    p.setProperty(FloeConfig.HTTP_PORT, Integer.toString(port));
    settings.forEach(p::setProperty);
    Path file = stack.dir().resolve("floe-" + name + ".properties");
    try (Writer writer = Files.newBufferedWriter(file)) {
      p.store(writer, "floe run of bench instance " + name);
    }
    return new FloeProcess(name, file, stateDir, stack.dir().resolve(name + ".log"), port, launch);
  }

  void startFloe() throws Exception {
    floe = new FloeService(config);
    floe.start();
  }

  /**
   * Waits until Floe's streams run and every view of the views file has a state with nothing
   * pending or running: over an empty source, the view's first refresh has found it empty. What
   * follows is then timed from Floe ready and idle, not from its start-up. False on timeout.
   */
  boolean awaitIdle(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (floe.streams().state() == KafkaStreams.State.RUNNING
          && views.stream().allMatch(this::isIdle)) {
        return true;
      }
      Thread.sleep(100);
    }
    return false;
  }

  private boolean isIdle(ViewDefinition view) {
    try {
      ReadOnlyKeyValueStore<String, ViewState> states =
          floe.streams()
              .store(
                  StoreQueryParameters.fromNameAndType(
                      StoreNames.VIEW_STATE,
                      QueryableStoreTypes.<String, ViewState>keyValueStore()));
      ViewState state = states.get(view.name());
      return state != null && state.status() == ViewState.Status.IDLE;
    } catch (InvalidStateStoreException e) {
      return false;
    }
  }

  /**
   * The bytes on disk of the in-process Floe's state stores (its Kafka Streams state directory:
   * RocksDB files, checkpoints), 0 before it wrote any.
   */
  long stateBytes() throws IOException {
    Path state = stack.stateDir();
    if (!Files.isDirectory(state)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(state)) {
      return files.filter(Files::isRegularFile).mapToLong(ServiceBench::sizeOf).sum();
    }
  }

  /** A file's size, 0 when it went away meanwhile (RocksDB replaces files as it compacts). */
  private static long sizeOf(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return 0;
    }
  }

  /** Announces the table's current snapshot, as a writer's post-commit hook would. */
  void announce(TableName name, Table table) throws InterruptedException {
    Snapshot current = table.currentSnapshot();
    notices.publish(
        name,
        current == null ? null : current.snapshotId(),
        table instanceof HasTableOperations ops
            ? ops.operations().current().metadataFileLocation()
            : null);
  }

  static TableName source(ViewDefinition view) {
    try {
      return ViewQueryParser.parse(view.query()).source();
    } catch (InvalidViewException e) {
      throw new IllegalStateException(e);
    }
  }

  Table load(TableName name) {
    return catalog(name.catalog()).loadTable(name.identifier());
  }

  /** Waits until every view reflects its source's latest data change; false on timeout. */
  boolean awaitCurrent(List<ViewDefinition> which, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (which.stream().allMatch(this::isCurrent)) {
        return true;
      }
      Thread.sleep(200);
    }
    return false;
  }

  private boolean isCurrent(ViewDefinition view) {
    try {
      TableName source = sources.computeIfAbsent(view.name(), name -> source(view));
      return Freshness.isCurrent(load(view.target()), load(source), view.version());
    } catch (NoSuchTableException e) {
      return false;
    }
  }

  @Override
  public void close() throws Exception {
    if (floe != null) {
      floe.close();
    }
    notices.close();
    catalogs.close();
    stack.close();
  }
}
