package io.floe.topology.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.schemas.FloeSerdes;
import io.floe.schemas.TableCommitted;
import io.floe.topology.view.TableName;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Commit events of every supported shape, from recorded payloads in src/test/resources/events. */
class CommitEventDecoderTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant NOW = Instant.parse("2026-04-08T10:01:01Z");
  private static final TableName TRADES = TableName.parse("lake.market.trades");

  /** The watched trades table lives at s3://warehouse/market/trades. */
  private static final TableLocator LOCATOR =
      location ->
          location.startsWith("s3://warehouse/market/trades/metadata/")
              ? Optional.of(TRADES)
              : Optional.empty();

  private final CommitEventDecoder decoder =
      new CommitEventDecoder(
          FloeSerdes.singleObject().tableCommitted().deserializer(), "lake", LOCATOR);

  private static JsonNode fixture(String name) throws Exception {
    try (InputStream in = CommitEventDecoderTest.class.getResourceAsStream("/events/" + name)) {
      return JSON.readTree(in);
    }
  }

  /** A recorded Kafka record: {"headers": {...}, "value": ...}. */
  private Decoded decodeRecord(String name) throws Exception {
    return decodeRecord(decoder, name);
  }

  private static Decoded decodeRecord(CommitEventDecoder decoder, String name) throws Exception {
    JsonNode record = fixture(name);
    RecordHeaders headers = new RecordHeaders();
    for (Iterator<Map.Entry<String, JsonNode>> it = record.get("headers").fields();
        it.hasNext(); ) {
      Map.Entry<String, JsonNode> h = it.next();
      headers.add(h.getKey(), h.getValue().asText().getBytes(StandardCharsets.UTF_8));
    }
    byte[] value =
        record.get("value").isNull() ? null : JSON.writeValueAsBytes(record.get("value"));
    return decoder.decode("lakekeeper-events", headers, value, NOW);
  }

  private Decoded decodeValue(String name) throws Exception {
    byte[] value;
    try (InputStream in = getClass().getResourceAsStream("/events/" + name)) {
      value = in.readAllBytes();
    }
    return decoder.decode("s3-events", new RecordHeaders(), value, NOW);
  }

  private static TableCommitted single(Decoded decoded) {
    assertThat(decoded).isInstanceOf(Decoded.Notices.class);
    List<TableCommitted> notices = ((Decoded.Notices) decoded).notices();
    assertThat(notices).hasSize(1);
    return notices.get(0);
  }

  @Test
  void shouldTurnALakekeeperUpdateTableEventIntoANoticeWithItsSnapshot() throws Exception {
    TableCommitted notice = single(decodeRecord("lakekeeper-update-table.json"));

    assertThat(notice.getCatalog()).isEqualTo("lake");
    assertThat(notice.getNamespace()).containsExactly("market");
    assertThat(notice.getTable()).isEqualTo("trades");
    assertThat(notice.getSnapshotId()).isEqualTo(7373453211453296125L);
    assertThat(notice.getProducer()).isEqualTo("lakekeeper");
  }

  @Test
  void shouldReadNestedNamespacesAndStructuredCloudEvents() throws Exception {
    String structured =
        "{\"specversion\":\"1.0\",\"id\":\"1\",\"source\":\"uri:x\",\"type\":\"createTable\","
            + "\"tabular-type\":\"table\",\"name\":\"trades\",\"namespace\":\"emea\\u001fmarket\","
            + "\"datacontenttype\":\"application/json\",\"data\":null}";
    TableCommitted notice =
        single(
            decoder.decode(
                "t", new RecordHeaders(), structured.getBytes(StandardCharsets.UTF_8), NOW));
    assertThat(notice.getNamespace()).containsExactly("emea", "market");
    assertThat(notice.getSnapshotId()).isNull();
  }

  @Test
  void shouldIgnoreLakekeeperEventsThatChangeNoData() throws Exception {
    Decoded decoded = decodeRecord("lakekeeper-drop-table.json");
    assertThat(decoded).isInstanceOf(Decoded.Ignored.class);
    assertThat(((Decoded.Ignored) decoded).reason()).contains("dropTable");
  }

  @Test
  void shouldRejectLakekeeperEventsWhenNoCatalogIsNamed() throws Exception {
    CommitEventDecoder unconfigured =
        new CommitEventDecoder(
            FloeSerdes.singleObject().tableCommitted().deserializer(), null, LOCATOR);
    JsonNode record = fixture("lakekeeper-update-table.json");
    RecordHeaders headers = new RecordHeaders();
    record
        .get("headers")
        .fields()
        .forEachRemaining(
            h -> headers.add(h.getKey(), h.getValue().asText().getBytes(StandardCharsets.UTF_8)));
    Decoded decoded = unconfigured.decode("t", headers, new byte[0], NOW);
    assertThat(decoded).isInstanceOf(Decoded.Unrecognized.class);
    assertThat(((Decoded.Unrecognized) decoded).reason())
        .contains("floe.events.lakekeeper.catalog");
  }

  @Test
  void shouldFindTheTableOfANewMetadataFileFromMinioAndAws() throws Exception {
    TableCommitted minio = single(decodeValue("minio-put-metadata.json"));
    assertThat(new TableName(minio.getCatalog(), minio.getNamespace(), minio.getTable()))
        .isEqualTo(TRADES);
    assertThat(minio.getMetadataLocation())
        .isEqualTo(
            "s3://warehouse/market/trades/metadata/"
                + "00007-8a6e2f1c-44b1-4c55-a1f8-2b9d3e4f5a60.metadata.json");
    assertThat(minio.getProducer()).isEqualTo("s3-notification");

    TableCommitted aws = single(decodeValue("aws-s3-put-metadata.json"));
    assertThat(aws.getMetadataLocation())
        .endsWith("00008-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5.metadata.json");
  }

  @Test
  void shouldIgnoreDataFilesAndUnwatchedTables() throws Exception {
    assertThat(decodeValue("minio-put-data-file.json")).isInstanceOf(Decoded.Ignored.class);
    CommitEventDecoder watchingNothing =
        new CommitEventDecoder(
            FloeSerdes.singleObject().tableCommitted().deserializer(),
            "lake",
            location -> Optional.empty());
    byte[] value;
    try (InputStream in = getClass().getResourceAsStream("/events/minio-put-metadata.json")) {
      value = in.readAllBytes();
    }
    assertThat(watchingNothing.decode("t", new RecordHeaders(), value, NOW))
        .isInstanceOf(Decoded.Ignored.class);
  }

  @Test
  void shouldPassFloesOwnNoticesThroughAndRejectAnythingElse() {
    TableCommitted notice =
        TableCommitted.newBuilder()
            .setCatalog("lake")
            .setNamespace(List.of("market"))
            .setTable("trades")
            .setEventTime(NOW)
            .setProducer("metrics-reporter")
            .build();
    byte[] avro = FloeSerdes.singleObject().tableCommitted().serializer().serialize("t", notice);
    assertThat(single(decoder.decode("t", new RecordHeaders(), avro, NOW))).isEqualTo(notice);

    for (String garbage : List.of("not json at all", "{\"hello\":\"world\"}", "[1,2,3]")) {
      Decoded decoded =
          decoder.decode("t", new RecordHeaders(), garbage.getBytes(StandardCharsets.UTF_8), NOW);
      assertThat(decoded).as(garbage).isInstanceOf(Decoded.Unrecognized.class);
    }
    assertThat(decoder.decode("t", new RecordHeaders(), new byte[] {(byte) 0xC3, 1, 9}, NOW))
        .isInstanceOf(Decoded.Unrecognized.class);
    assertThat(decoder.decode("t", new RecordHeaders(), null, NOW))
        .isInstanceOf(Decoded.Unrecognized.class);
  }

  @Test
  void shouldIgnoreLakekeeperEventsAboutTablesNoViewReads() throws Exception {
    TableLocator watchingNothing =
        new TableLocator() {
          @Override
          public Optional<TableName> tableFor(String metadataLocation) {
            return Optional.empty();
          }

          @Override
          public boolean watches(TableName table) {
            return false;
          }
        };
    CommitEventDecoder unwatched =
        new CommitEventDecoder(
            FloeSerdes.singleObject().tableCommitted().deserializer(), "lake", watchingNothing);

    Decoded decoded = decodeRecord(unwatched, "lakekeeper-update-table.json");

    assertThat(decoded).isInstanceOf(Decoded.Ignored.class);
    assertThat(((Decoded.Ignored) decoded).reason()).contains("no view reads");
  }

  private static byte[] avroNotice(String catalog, List<String> namespace, String table) {
    return FloeSerdes.singleObject()
        .tableCommitted()
        .serializer()
        .serialize(
            "t",
            TableCommitted.newBuilder()
                .setCatalog(catalog)
                .setNamespace(namespace)
                .setTable(table)
                .setEventTime(NOW)
                .setProducer("metrics-reporter")
                .build());
  }

  /** A Lakekeeper updateTable event in binary mode, with the given name headers and data. */
  private static Arguments lakekeeper(
      String label, byte[] namespace, byte[] name, String data, String reason) {
    RecordHeaders headers = new RecordHeaders();
    headers.add("ce_specversion", "1.0".getBytes(StandardCharsets.UTF_8));
    headers.add("ce_type", "updateTable".getBytes(StandardCharsets.UTF_8));
    headers.add("ce_namespace", namespace);
    headers.add("ce_name", name);
    return Arguments.of(
        label, headers, data == null ? null : data.getBytes(StandardCharsets.UTF_8), reason);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static Stream<Arguments> shapesThatNameNoTable() {
    byte[] notice = avroNotice("lake", List.of("market"), "trades");
    return Stream.of(
        Arguments.of(
            "a notice with an empty namespace",
            new RecordHeaders(),
            avroNotice("lake", List.of(), "trades"),
            "a notice that names no table: A table name needs a namespace: lake.trades"),
        Arguments.of(
            "a notice with an empty table",
            new RecordHeaders(),
            avroNotice("lake", List.of("market"), ""),
            "a notice that names no table: Table name 'lake.market.' has an empty part"),
        Arguments.of(
            "a notice with an empty namespace level",
            new RecordHeaders(),
            avroNotice("lake", List.of("", "market"), "trades"),
            "Table name 'lake..market.trades' has an empty part"),
        Arguments.of(
            "a notice with an empty catalog",
            new RecordHeaders(),
            avroNotice(" ", List.of("market"), "trades"),
            "Table name ' .market.trades' has an empty part"),
        Arguments.of(
            "a notice whose namespace holds a NUL byte",
            new RecordHeaders(),
            avroNotice("lake", List.of("mar\u0000ket"), "trades"),
            "null-byte"),
        Arguments.of(
            "a notice cut short",
            new RecordHeaders(),
            java.util.Arrays.copyOf(notice, notice.length - 4),
            "Cannot decode TableCommitted"),
        lakekeeper(
            "an event with an empty namespace",
            utf8(""),
            utf8("trades"),
            "{}",
            "event updateTable names no table: Table name 'lake..trades' has an empty part"),
        lakekeeper(
            "an event with an empty name",
            utf8("market"),
            utf8(""),
            "{}",
            "event updateTable names no table: Table name 'lake.market.' has an empty part"),
        lakekeeper(
            "an event whose namespace ends in a separator",
            utf8("market\u001f"),
            utf8("trades"),
            "{}",
            "Table name 'lake.market..trades' has an empty part"),
        lakekeeper(
            "an event whose name header is not UTF-8",
            utf8("market"),
            new byte[] {'t', (byte) 0xFF, 'r'},
            "{}",
            "CloudEvent header ce_name is not valid UTF-8"),
        lakekeeper(
            "an event whose data is not JSON",
            utf8("market"),
            utf8("trades"),
            "{\"updates\": [",
            "event updateTable of lake.market.trades has data that is not JSON"),
        lakekeeper(
            "an event whose snapshot id is text",
            utf8("market"),
            utf8("trades"),
            "{\"updates\": [{\"action\": \"add-snapshot\", \"snapshot\": {\"snapshot-id\": \"x\"}}]}",
            "adds a snapshot whose snapshot-id is not a 64-bit integer: \"x\""),
        lakekeeper(
            "an event whose snapshot id overflows",
            utf8("market"),
            utf8("trades"),
            "{\"updates\": [{\"action\": \"add-snapshot\","
                + " \"snapshot\": {\"snapshot-id\": 99999999999999999999}}]}",
            "snapshot-id is not a 64-bit integer: 99999999999999999999"),
        Arguments.of(
            "a structured event with an empty namespace",
            new RecordHeaders(),
            utf8(
                "{\"specversion\":\"1.0\",\"type\":\"createTable\",\"name\":\"trades\","
                    + "\"namespace\":\"\",\"data\":null}"),
            "event createTable names no table"),
        Arguments.of(
            "an S3 notification whose object key is not URL-encoded",
            new RecordHeaders(),
            utf8(
                "{\"Records\":[{\"eventName\":\"s3:ObjectCreated:Put\",\"s3\":{\"bucket\":"
                    + "{\"name\":\"warehouse\"},\"object\":{\"key\":"
                    + "\"market/trades/metadata/%zz.metadata.json\"}}}]}"),
            "object key 'market/trades/metadata/%zz.metadata.json' of bucket warehouse is not"
                + " URL-encoded"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("shapesThatNameNoTable")
  void shouldRejectEveryShapeThatNamesNoTableWithTheReason(
      String label, RecordHeaders headers, byte[] value, String reason) {
    Decoded decoded = decoder.decode("events", headers, value, NOW);

    assertThat(decoded).as(label).isInstanceOf(Decoded.Unrecognized.class);
    assertThat(((Decoded.Unrecognized) decoded).reason()).as(label).contains(reason);
  }

  @Test
  void shouldRejectARecordWhoseDecodingFailsInAWayNobodyForesaw() {
    TableLocator failing =
        location -> {
          throw new IllegalStateException("a locator bug");
        };
    CommitEventDecoder decoder =
        new CommitEventDecoder(
            FloeSerdes.singleObject().tableCommitted().deserializer(), "lake", failing);

    Decoded decoded =
        decoder.decode(
            "s3-events",
            new RecordHeaders(),
            utf8(
                "{\"EventName\":\"s3:ObjectCreated:Put\","
                    + "\"Key\":\"warehouse/market/trades/metadata/1.metadata.json\"}"),
            NOW);

    assertThat(decoded).isInstanceOf(Decoded.Unrecognized.class);
    assertThat(((Decoded.Unrecognized) decoded).reason())
        .isEqualTo("cannot decode the record: java.lang.IllegalStateException: a locator bug");
  }
}
