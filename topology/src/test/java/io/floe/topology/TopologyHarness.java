package io.floe.topology;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewCommand;
import io.floe.schemas.ViewCommandType;
import io.floe.schemas.ViewRecord;
import io.floe.testing.IcebergFixture;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.processor.FloeMetrics;
import io.floe.topology.processor.TopologyServices;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Executor;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The real topology in a {@link TopologyTestDriver} over a real JDBC/SQLite Iceberg catalog, with
 * the clock in the test's hands. Refreshes and catalog reads run on the given executors: the test's
 * thread by default, or a {@link io.floe.topology.testing.ManualExecutor} to hold them.
 */
final class TopologyHarness implements AutoCloseable {

  static final FloeSerdes SERDES = FloeSerdes.singleObject();
  static final Duration TICK = Duration.ofMillis(50);

  final IcebergFixture lake;
  final ViewIndex index = new ViewIndex();
  final TopologyTestDriver driver;
  final TestInputTopic<String, TableCommitted> commits;
  final TestInputTopic<String, ViewRecord> views;
  final TestInputTopic<String, ViewCommand> requests;
  final TestOutputTopic<String, RefreshEvent> refreshes;
  final TestOutputTopic<String, byte[]> dlq;

  /** Catalog events read from {@link #EVENTS}, when the harness is built with them. */
  final TestInputTopic<String, byte[]> events;

  /** The topic of catalog events, as a Lakekeeper (CloudEvents) source publishes them. */
  static final String EVENTS = "lakekeeper-events";

  TopologyHarness(Path dir, Executor io, Executor refreshThreads, RefreshHooks hooks)
      throws Exception {
    this(IcebergFixture.create(dir), dir, io, refreshThreads, hooks, TopologySettings.Events.NONE);
  }

  TopologyHarness(
      IcebergFixture lake, Path dir, Executor io, Executor refreshThreads, RefreshHooks hooks)
      throws Exception {
    this(lake, dir, io, refreshThreads, hooks, TopologySettings.Events.NONE);
  }

  /**
   * @param catalogEvents {@link TopologySettings.Events#NONE}, or catalog events on {@link #EVENTS}
   */
  TopologyHarness(
      IcebergFixture lake,
      Path dir,
      Executor io,
      Executor refreshThreads,
      RefreshHooks hooks,
      TopologySettings.Events catalogEvents)
      throws Exception {
    this.lake = lake;
    RefreshExecutor executor =
        new RefreshExecutor(
            new ViewRefresher(
                this::catalog,
                hooks,
                view ->
                    index
                        .view(view.name())
                        .filter(v -> v.version().equals(view.version()))
                        .isPresent()),
            refreshThreads);
    Properties config = new Properties();
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, "floe-test");
    config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    config.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createDirectories(dir.resolve("state")).toString());
    TopologySettings settings =
        new TopologySettings(
            TopologySettings.Topics.DEFAULTS,
            1,
            TICK,
            Duration.ofMinutes(5),
            SERDES,
            catalogEvents);
    driver =
        new TopologyTestDriver(
            FloeTopology.build(
                settings,
                new TopologyServices(this::catalog, index, io, executor, FloeMetrics.NONE)),
            config,
            Instant.parse("2026-04-08T12:00:00Z"));
    TopologySettings.Topics topics = TopologySettings.Topics.DEFAULTS;
    commits =
        driver.createInputTopic(
            topics.commits(), Serdes.String().serializer(), SERDES.tableCommitted().serializer());
    views =
        driver.createInputTopic(
            topics.views(), Serdes.String().serializer(), SERDES.viewRecord().serializer());
    requests =
        driver.createInputTopic(
            topics.requests(), Serdes.String().serializer(), SERDES.viewCommand().serializer());
    refreshes =
        driver.createOutputTopic(
            topics.refreshes(),
            Serdes.String().deserializer(),
            SERDES.refreshEvent().deserializer());
    dlq =
        driver.createOutputTopic(
            topics.dlq(), Serdes.String().deserializer(), Serdes.ByteArray().deserializer());
    events =
        driver.createInputTopic(
            EVENTS, Serdes.String().serializer(), Serdes.ByteArray().serializer());
  }

  Catalog catalog(String name) {
    if (!name.equals("lake")) {
      throw new IllegalArgumentException("unknown catalog '" + name + "' (configured: lake)");
    }
    return lake.catalog();
  }

  void define(ViewDefinition view) {
    views.pipeInput(view.name(), StoredView.toRecord(view, "api", Instant.EPOCH));
  }

  /** A view over {@code query} whose target is lake.analytics.{@code name}. */
  ViewDefinition define(String name, String query) {
    ViewDefinition view = ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
    define(view);
    return view;
  }

  void announce(String table) {
    TableName name = TableName.parse(table);
    commits.pipeInput(
        table,
        TableCommitted.newBuilder()
            .setCatalog(name.catalog())
            .setNamespace(name.namespace())
            .setTable(name.table())
            .setEventTime(Instant.EPOCH)
            .setProducer("test")
            .build());
  }

  void request(String view, ViewCommandType command) {
    requests.pipeInput(
        view,
        ViewCommand.newBuilder()
            .setView(view)
            .setCommand(command)
            .setRequestedAt(Instant.EPOCH)
            .build());
  }

  /** Lets wall-clock time pass, one tick at a time. */
  void idle(Duration duration) {
    for (long t = 0; t < duration.toMillis(); t += TICK.toMillis()) {
      driver.advanceWallClockTime(TICK);
    }
  }

  List<RefreshEvent> events() {
    return new ArrayList<>(refreshes.readValuesToList());
  }

  ViewState state(String view) {
    KeyValueStore<String, ViewState> states = driver.getKeyValueStore(StoreNames.VIEW_STATE);
    return states.get(view);
  }

  Table target(String name) {
    return lake.load("analytics", name);
  }

  private boolean closed;

  /** Closes the topology, as a rebalance or a shutdown closes its tasks. */
  void closeTopology() {
    if (!closed) {
      closed = true;
      driver.close();
    }
  }

  @Override
  public void close() throws Exception {
    closeTopology();
    lake.close();
  }
}
