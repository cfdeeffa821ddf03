package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewRecord;
import io.floe.testing.IcebergFixture;
import io.floe.topology.processor.DeadLetterDeserializationHandler;
import io.floe.topology.processor.DeadLetterSink;
import io.floe.topology.processor.DeadLetters;
import io.floe.topology.processor.FloeMetrics;
import io.floe.topology.processor.TopologyServices;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import org.apache.iceberg.Table;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Poison records, through the real topology over a real Iceberg catalog: every record Floe cannot
 * read or act on goes to the dead-letter topic (or, from the global views topic, to the dead-letter
 * sink) with the reason and origin, is counted, and the stream goes on.
 *
 * <p>The driver is configured as {@code floe run} configures Kafka Streams: Floe's deserialization
 * handler, the dead-letter topic, Floe's metrics. The driver ignores the configured handler for its
 * global store (it always logs and skips there), which is why the global source reads bytes and
 * {@code ViewsStoreUpdater} decodes them; DeadLettersIT covers the real global thread.
 */
class DeadLettersTopologyTest {

  private static final FloeSerdes SERDES = FloeSerdes.singleObject();
  private static final String EVENTS = "lakekeeper-events";
  private static final byte[] GARBAGE = "not a Floe record".getBytes(StandardCharsets.UTF_8);
  private static final String OHLCV =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts, max(price) AS high,
             sum(quantity) AS volume, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY symbol, date_trunc('minute', ts)
      """;

  /** What the topology reported as dead letters and ingested events. */
  private static final class RecordedMetrics implements FloeMetrics {
    final List<String> deadLettered = Collections.synchronizedList(new ArrayList<>());
    final List<String> ingested = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void deadLettered(String processor, String reason) {
      deadLettered.add(processor);
    }

    @Override
    public void commitEventIngested(String format, String outcome) {
      ingested.add(format + "/" + outcome);
    }
  }

  /** A dead letter the global views processor sent. */
  private record Sent(byte[] key, byte[] value, Headers headers) {}

  @TempDir Path dir;
  private final RecordedMetrics metrics = new RecordedMetrics();
  private final List<Sent> globalDeadLetters = new ArrayList<>();
  private final ViewIndex index = new ViewIndex();
  private IcebergFixture lake;
  private Table trades;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ViewRecord> views;
  private TestInputTopic<String, TableCommitted> commits;
  private TestOutputTopic<String, RefreshEvent> refreshes;
  private TestOutputTopic<String, byte[]> dlq;

  @BeforeEach
  void setUp() throws Exception {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    Properties config = new Properties();
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, "floe-test");
    config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    config.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createDirectories(dir.resolve("state")).toString());
    config.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        DeadLetterDeserializationHandler.class.getName());
    config.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, "floe.dlq");
    config.put(DeadLetterDeserializationHandler.METRICS_CONFIG, metrics);
    DeadLetterSink sink =
        (key, value, timestamp, headers) -> globalDeadLetters.add(new Sent(key, value, headers));
    driver =
        new TopologyTestDriver(
            FloeTopology.build(
                new TopologySettings(
                    TopologySettings.Topics.DEFAULTS,
                    1,
                    Duration.ofMillis(200),
                    Duration.ofMinutes(5),
                    SERDES,
                    new TopologySettings.Events(List.of(EVENTS), "lake")),
                new TopologyServices(
                    name -> lake.catalog(),
                    index,
                    Runnable::run,
                    new RefreshExecutor(new ViewRefresher(name -> lake.catalog()), Runnable::run),
                    metrics,
                    sink,
                    null)),
            config,
            Instant.parse("2026-04-08T12:00:00Z"));
    views =
        driver.createInputTopic(
            "floe.views", Serdes.String().serializer(), SERDES.viewRecord().serializer());
    commits =
        driver.createInputTopic(
            "floe.commits", Serdes.String().serializer(), SERDES.tableCommitted().serializer());
    refreshes =
        driver.createOutputTopic(
            "floe.refreshes", Serdes.String().deserializer(), SERDES.refreshEvent().deserializer());
    dlq =
        driver.createOutputTopic(
            "floe.dlq", Serdes.String().deserializer(), Serdes.ByteArray().deserializer());
  }

  @AfterEach
  void tearDown() throws Exception {
    driver.close();
    lake.close();
  }

  private TestInputTopic<String, byte[]> raw(String topic) {
    return driver.createInputTopic(
        topic, Serdes.String().serializer(), Serdes.ByteArray().serializer());
  }

  private static ViewRecord record(String name) {
    ViewDefinition view = ViewDefinition.of(name, OHLCV, TableName.parse("lake.analytics." + name));
    return StoredView.toRecord(view, "api", Instant.EPOCH);
  }

  private void idle(Duration duration) {
    for (long t = 0; t < duration.toMillis(); t += 200) {
      driver.advanceWallClockTime(Duration.ofMillis(200));
    }
  }

  /** Defines the view and waits for its first, full refresh. */
  private void defineAndRefresh(String view) {
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    views.pipeInput(view, record(view));
    idle(Duration.ofSeconds(1));
    assertThat(refreshes.readValuesToList())
        .extracting(RefreshEvent::getMode)
        .containsExactly(RefreshMode.FULL);
  }

  /** A new commit of the source is followed by an incremental refresh of the view. */
  private void assertFollowsTheNextCommit(String view) {
    long snapshot =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 2L, "S")));
    commits.pipeInput(
        "lake.market.trades",
        TableCommitted.newBuilder()
            .setCatalog("lake")
            .setNamespace(List.of("market"))
            .setTable("trades")
            .setEventTime(Instant.EPOCH)
            .setProducer("test")
            .build());
    idle(Duration.ofSeconds(2));
    List<RefreshEvent> refreshed = refreshes.readValuesToList();
    assertThat(refreshed).extracting(RefreshEvent::getView).containsExactly(view);
    assertThat(refreshed.get(0).getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(refreshed.get(0).getSourceSnapshotId()).isEqualTo(snapshot);
  }

  private static String header(Headers headers, String name) {
    return headers.lastHeader(name) == null
        ? null
        : new String(headers.lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  private static String header(TestRecord<String, byte[]> record, String name) {
    return header(record.headers(), name);
  }

  @Test
  void shouldDeadLetterUndecodableRecordsOfTheStreamTopicsWithTheReasonAndKeepRefreshing() {
    defineAndRefresh("ohlcv_1m");

    raw("floe.commits").pipeInput("lake.market.trades", GARBAGE);
    raw("floe.requests").pipeInput("ohlcv_1m", GARBAGE);
    raw("floe.snapshots").pipeInput("lake.market.trades", GARBAGE);
    raw("floe-test-dirty-buckets-repartition").pipeInput("ohlcv_1m", GARBAGE);

    List<TestRecord<String, byte[]>> letters = dlq.readRecordsToList();
    assertThat(letters)
        .extracting(r -> header(r, DeadLetters.ORIGIN))
        .containsExactly(
            "floe.commits-0@1",
            "floe.requests-0@0",
            "floe.snapshots-0@1",
            "floe-test-dirty-buckets-repartition-0@0");
    assertThat(letters)
        .extracting(r -> header(r, DeadLetters.PROCESSOR))
        .containsExactly(
            "commits-source",
            "requests-source",
            "snapshots-source",
            "dirty-buckets-repartition-source");
    assertThat(header(letters.get(0), DeadLetters.REASON))
        .startsWith("cannot deserialize: Cannot decode TableCommitted from topic floe.commits");
    assertThat(header(letters.get(1), DeadLetters.REASON))
        .startsWith("cannot deserialize: Cannot decode ViewCommand from topic floe.requests");
    assertThat(header(letters.get(2), DeadLetters.REASON))
        .startsWith("cannot deserialize: Cannot decode SnapshotEvent from topic floe.snapshots");
    assertThat(header(letters.get(3), DeadLetters.REASON))
        .startsWith("cannot deserialize: Cannot decode DirtyUpdate");
    assertThat(letters).allSatisfy(r -> assertThat(r.value()).isEqualTo(GARBAGE));
    assertThat(letters.get(0).key()).isEqualTo("lake.market.trades");
    assertThat(metrics.deadLettered)
        .containsExactly(
            "commits-source",
            "requests-source",
            "snapshots-source",
            "dirty-buckets-repartition-source");

    assertFollowsTheNextCommit("ohlcv_1m");
  }

  @Test
  void shouldDeadLetterAnUndecodableViewDefinitionAndKeepTheEarlierOne() {
    defineAndRefresh("ohlcv_1m");
    ViewRecord valid = record("ohlcv_1m");

    raw("floe.views").pipeInput("ohlcv_1m", GARBAGE);
    raw("floe.views").pipeInput("daily", new byte[] {(byte) 0xC3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8});
    idle(Duration.ofSeconds(1));

    assertThat(globalDeadLetters)
        .extracting(l -> header(l.headers(), DeadLetters.ORIGIN))
        .containsExactly("floe.views-0@1", "floe.views-0@2");
    assertThat(globalDeadLetters)
        .extracting(l -> header(l.headers(), DeadLetters.PROCESSOR))
        .containsOnly("views-source");
    assertThat(header(globalDeadLetters.get(0).headers(), DeadLetters.REASON))
        .startsWith("cannot deserialize: Cannot decode ViewRecord from topic floe.views")
        .endsWith("(the earlier definition of view ohlcv_1m, if any, stays in force)");
    assertThat(globalDeadLetters.get(0).value()).isEqualTo(GARBAGE);
    assertThat(new String(globalDeadLetters.get(0).key(), StandardCharsets.UTF_8))
        .isEqualTo("ohlcv_1m");
    assertThat(metrics.deadLettered).containsExactly("views-source", "views-source");
    KeyValueStore<String, ViewRecord> stored = driver.getKeyValueStore(StoreNames.VIEWS);
    // Stored as published, with the revision filled in (a record without one takes its offset).
    valid.setRevision(0L);
    assertThat(stored.get("ohlcv_1m")).isEqualTo(valid);
    assertThat(stored.get("daily")).isNull();
    assertThat(index.view("ohlcv_1m")).isPresent();
    assertThat(index.rejected()).isEmpty();
    assertThat(refreshes.readValuesToList()).isEmpty();

    assertFollowsTheNextCommit("ohlcv_1m");
  }

  /** A Lakekeeper updateTable event about market.trades, in binary mode. */
  private static RecordHeaders lakekeeperHeaders(byte[] namespace) {
    RecordHeaders headers = new RecordHeaders();
    headers.add("ce_specversion", "1.0".getBytes(StandardCharsets.UTF_8));
    headers.add("ce_type", "updateTable".getBytes(StandardCharsets.UTF_8));
    headers.add("ce_tabular-type", "table".getBytes(StandardCharsets.UTF_8));
    headers.add("ce_namespace", namespace);
    headers.add("ce_name", "trades".getBytes(StandardCharsets.UTF_8));
    return headers;
  }

  @Test
  void shouldDeadLetterCommitEventsThatNameNoTableAndKeepIngesting() {
    defineAndRefresh("ohlcv_1m");
    byte[] noNamespace =
        SERDES
            .tableCommitted()
            .serializer()
            .serialize(
                EVENTS,
                TableCommitted.newBuilder()
                    .setCatalog("lake")
                    .setNamespace(List.of())
                    .setTable("trades")
                    .setEventTime(Instant.EPOCH)
                    .setProducer("metrics-reporter")
                    .build());
    byte[] badKey =
        ("{\"Records\":[{\"eventName\":\"s3:ObjectCreated:Put\",\"s3\":{\"bucket\":"
                + "{\"name\":\"warehouse\"},\"object\":{\"key\":\"market/trades/metadata/%zz"
                + ".metadata.json\"}}}]}")
            .getBytes(StandardCharsets.UTF_8);
    TestInputTopic<String, byte[]> events = raw(EVENTS);

    events.pipeInput("k", noNamespace);
    events.pipeInput(new TestRecord<>("k", "{}".getBytes(), lakekeeperHeaders(new byte[0])));
    events.pipeInput(
        new TestRecord<>("k", "{}".getBytes(), lakekeeperHeaders(new byte[] {'m', (byte) 0xC0})));
    events.pipeInput(
        new TestRecord<>("k", "{not json".getBytes(), lakekeeperHeaders("market".getBytes())));
    events.pipeInput("k", badKey);
    idle(Duration.ofSeconds(1));

    List<TestRecord<String, byte[]>> letters = dlq.readRecordsToList();
    assertThat(letters)
        .extracting(r -> header(r, DeadLetters.REASON))
        .containsExactly(
            "a notice that names no table: A table name needs a namespace: lake.trades",
            "event updateTable names no table: Table name 'lake..trades' has an empty part",
            "CloudEvent header ce_namespace is not valid UTF-8",
            "event updateTable of lake.market.trades has data that is not JSON: Unexpected"
                + " character ('n' (code 110)): was expecting double-quote to start field name",
            "object key 'market/trades/metadata/%zz.metadata.json' of bucket warehouse is not"
                + " URL-encoded: URLDecoder: Illegal hex characters in escape (%) pattern - Error"
                + " at index 0 in: \"zz\"");
    assertThat(letters)
        .extracting(r -> header(r, DeadLetters.ORIGIN))
        .containsExactly(
            EVENTS + "-0@0", EVENTS + "-0@1", EVENTS + "-0@2", EVENTS + "-0@3", EVENTS + "-0@4");
    assertThat(metrics.ingested)
        .containsExactly(
            "avro/dead-lettered",
            "lakekeeper/dead-lettered",
            "lakekeeper/dead-lettered",
            "lakekeeper/dead-lettered",
            "s3/dead-lettered");
    assertThat(refreshes.readValuesToList()).isEmpty();

    // A well-formed event after them is followed.
    long snapshot =
        lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 2L, "S")));
    events.pipeInput(
        new TestRecord<>(
            "k", "{\"updates\":[]}".getBytes(), lakekeeperHeaders("market".getBytes())));
    idle(Duration.ofSeconds(2));
    assertThat(refreshes.readValuesToList())
        .extracting(RefreshEvent::getSourceSnapshotId)
        .containsExactly(snapshot);
  }

  private static TableCommitted notice(String catalog, List<String> namespace, String table) {
    return TableCommitted.newBuilder()
        .setCatalog(catalog)
        .setNamespace(namespace)
        .setTable(table)
        .setEventTime(Instant.EPOCH)
        .setProducer("test")
        .build();
  }

  @Test
  void shouldDeadLetterNoticesThatNameNoTableInsteadOfRetryingThem() {
    defineAndRefresh("ohlcv_1m");

    commits.pipeInput("lake.market.", notice("lake", List.of("market"), ""));
    commits.pipeInput("lake..trades", notice("lake", List.of(""), "trades"));
    commits.pipeInput("lake.trades", notice("lake", List.of(), "trades"));
    // The retry tick looks at every cursor: none may have been written for these notices.
    idle(Duration.ofSeconds(12));

    assertThat(dlq.readRecordsToList())
        .extracting(r -> header(r, DeadLetters.REASON))
        .containsExactly(
            "invalid table name: Table name 'lake.market.' has an empty part",
            "invalid table name: Table name 'lake..trades' has an empty part",
            "invalid table name: A table name needs a namespace: lake.trades");
    KeyValueStore<String, TableCursor> cursors = driver.getKeyValueStore(StoreNames.TABLE_CURSORS);
    assertThat(cursors.get("lake.market.")).isNull();
    assertFollowsTheNextCommit("ohlcv_1m");
  }
}
