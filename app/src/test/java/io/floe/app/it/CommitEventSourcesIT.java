package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.schemas.TableCommitted;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commit events from outside Floe: a writer running the Floe commit reporter jar, and Lakekeeper's
 * CloudEvents on a topic of their own, each refreshing a view without any announcement from the
 * test. (S3 notifications are proven in {@link RestCatalogOnS3IT}, on object storage.)
 */
class CommitEventSourcesIT {

  private static final String VOLUME =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";

  /** The shaded reporter jar the reporter module builds, as a writer would add it. */
  static final Path REPORTER_JAR = Path.of("..", "reporter", "target", "floe-iceberg-reporter.jar");

  @TempDir Path dir;
  private FloeHarness floe;
  private final ViewDefinition view = FloeHarness.view("volume", VOLUME);
  private Table trades;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  /** A trades table with one row, and Floe maintaining a view of it, caught up. */
  private FloeService startWithView(Map<String, String> settings) throws Exception {
    IcebergFixture lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    FloeService service = floe.start("a", settings);
    floe.define(view);
    floe.awaitOracle(view, trades);
    return service;
  }

  @Test
  void shouldRefreshWhenAWriterRunningTheCommitReporterCommits() throws Exception {
    startWithView(Map.of());
    IcebergFixture lake = floe.lake();

    Map<String, String> writerCatalog = new HashMap<>(lake.catalogProperties());
    writerCatalog.put("metrics-reporter-impl", ShadedJarReporter.class.getName());
    writerCatalog.put("floe.bootstrap.servers", FloeHarness.kafka().bootstrapServers());
    writerCatalog.put("floe.topic", floe.topic("commits"));
    writerCatalog.put("floe.catalog", "lake");
    try (IcebergFixture writer = IcebergFixture.create(writerCatalog)) {
      Table written = writer.load("market", "trades");
      long first =
          writer.append(
              written, List.of(writer.trade("MSFT", "2026-04-08T10:05:00Z", 99.0, 7L, "S")));
      floe.awaitOracle(view, lake.load("market", "trades"));
      long second =
          writer.append(
              written, List.of(writer.trade("AAPL", "2026-04-08T10:00:30Z", 11.0, 3L, "S")));
      floe.awaitOracle(view, lake.load("market", "trades"));

      List<TableCommitted> notices = floe.commitNotices();
      assertThat(notices)
          .filteredOn(n -> "metrics-reporter".equals(n.getProducer()))
          .extracting(TableCommitted::getSnapshotId)
          .containsExactly(first, second);
      assertThat(notices)
          .filteredOn(n -> "metrics-reporter".equals(n.getProducer()))
          .allSatisfy(
              n -> {
                assertThat(n.getCatalog()).isEqualTo("lake");
                assertThat(n.getNamespace()).containsExactly("market");
                assertThat(n.getTable()).isEqualTo("trades");
              });
    }
  }

  @Test
  void shouldRefreshOnLakekeeperUpdateTableEventsAndDeadLetterUnknownRecords() throws Exception {
    FloeService service = startWithView(Map.of(FloeConfig.EVENTS_TOPICS, floe.topic("lakekeeper")));
    IcebergFixture lake = floe.lake();

    long snapshot =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:05:00Z", 99.0, 7L, "S")));
    RecordedEvent event = RecordedEvent.load("/events/lakekeeper-update-table.json");
    ((ObjectNode) event.value().at("/updates/0/snapshot")).put("snapshot-id", snapshot);
    floe.sendRaw("lakekeeper", event.key(), event.valueBytes(), event.headers());
    floe.awaitOracle(view, trades);

    RecordedEvent dropped = RecordedEvent.load("/events/lakekeeper-drop-table.json");
    floe.sendRaw("lakekeeper", dropped.key(), dropped.valueBytes(), dropped.headers());
    floe.sendRaw("lakekeeper", "k", "not an event".getBytes(StandardCharsets.UTF_8));

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> ingested(service, "unknown", "dead-lettered") == 1.0);
    assertThat(ingested(service, "lakekeeper", "notice")).isEqualTo(1.0);
    assertThat(ingested(service, "lakekeeper", "ignored")).isEqualTo(1.0);
    List<ConsumerRecord<String, byte[]>> dead = floe.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(new String(dead.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("not an event");
    assertThat(floe.commitNotices())
        .filteredOn(n -> n.getTable().equals("trades"))
        .singleElement()
        .satisfies(
            n -> {
              assertThat(n.getProducer()).isEqualTo("lakekeeper");
              assertThat(n.getSnapshotId()).isEqualTo(snapshot);
            });
  }

  private static double ingested(FloeService service, String format, String outcome) {
    Counter counter =
        service
            .metrics()
            .registry()
            .find("floe.events.ingested")
            .tags("format", format, "outcome", outcome)
            .counter();
    return counter == null ? 0.0 : counter.count();
  }

  /** An event recorded as {@code key}, {@code headers} and JSON {@code value}. */
  record RecordedEvent(String key, Map<String, String> headers, JsonNode value) {

    private static final ObjectMapper JSON = new ObjectMapper();

    static RecordedEvent load(String resource) {
      try (InputStream in = CommitEventSourcesIT.class.getResourceAsStream(resource)) {
        ObjectNode recorded = (ObjectNode) JSON.readTree(in);
        Map<String, String> headers = new HashMap<>();
        recorded
            .path("headers")
            .fields()
            .forEachRemaining(h -> headers.put(h.getKey(), h.getValue().asText()));
        return new RecordedEvent(recorded.path("key").asText(null), headers, recorded.get("value"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The value as its sink writes it; none for an event without data. */
    byte[] valueBytes() throws IOException {
      return value == null || value.isNull() ? null : JSON.writeValueAsBytes(value);
    }
  }

  /**
   * The reporter as a writer's catalog loads it from the shaded jar: in a class loader that sees
   * Iceberg and SLF4J from the writer but neither Floe nor Kafka, Avro or Jackson, so a reference
   * the shading missed fails here.
   */
  public static final class ShadedJarReporter implements MetricsReporter {

    private MetricsReporter delegate;

    @Override
    public void initialize(Map<String, String> properties) {
      if (!Files.isRegularFile(REPORTER_JAR)) {
        throw new IllegalStateException(
            REPORTER_JAR.toAbsolutePath() + " is missing: build the reporter module first");
      }
      try {
        ClassLoader writer = new HidingClassLoader(ShadedJarReporter.class.getClassLoader());
        URLClassLoader jar = new URLClassLoader(new URL[] {REPORTER_JAR.toUri().toURL()}, writer);
        delegate =
            (MetricsReporter)
                jar.loadClass("io.floe.reporter.FloeCommitReporter")
                    .getDeclaredConstructor()
                    .newInstance();
      } catch (MalformedURLException | ReflectiveOperationException e) {
        throw new IllegalStateException("Cannot load the reporter from " + REPORTER_JAR, e);
      }
      delegate.initialize(properties);
    }

    @Override
    public void report(MetricsReport report) {
      delegate.report(report);
    }

    @Override
    public void close() {
      try {
        delegate.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** A writer's class path without the libraries the reporter jar must bring relocated. */
  private static final class HidingClassLoader extends ClassLoader {

    private static final List<String> HIDDEN =
        List.of("io.floe.", "org.apache.kafka.", "org.apache.avro.", "com.fasterxml.jackson.");

    HidingClassLoader(ClassLoader parent) {
      super(parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (HIDDEN.stream().anyMatch(name::startsWith)) {
        throw new ClassNotFoundException(name);
      }
      return super.loadClass(name, resolve);
    }
  }
}
