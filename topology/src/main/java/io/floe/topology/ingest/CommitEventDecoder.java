package io.floe.topology.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.schemas.TableCommitted;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Recognizes the commit events of an event topic, whatever their producer: Floe's own Avro notices
 * (single-object or registry wire format), CloudEvents (Lakekeeper's, binary or structured mode),
 * and S3 event notifications. Each becomes zero or more {@link TableCommitted} notices; anything
 * else is unrecognized, for the dead-letter topic.
 */
public final class CommitEventDecoder {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CE_HEADER_PREFIX = "ce_";

  private final Deserializer<TableCommitted> avro;
  private final String lakekeeperCatalog;
  private final TableLocator locator;

  /**
   * @param avro reads Floe's own notices
   * @param lakekeeperCatalog the Floe catalog Lakekeeper events refer to, or null
   * @param locator finds the table of a metadata file, for S3 notifications
   */
  public CommitEventDecoder(
      Deserializer<TableCommitted> avro, String lakekeeperCatalog, TableLocator locator) {
    this.avro = avro;
    this.lakekeeperCatalog = lakekeeperCatalog;
    this.locator = locator;
  }

  /**
   * What a record is. Never throws: a record of a shape Floe cannot read, however broken, is {@link
   * Decoded.Unrecognized} with the reason, for the dead-letter topic.
   */
  public Decoded decode(String topic, Headers headers, byte[] value, Instant now) {
    try {
      return read(topic, headers, value, now);
    } catch (RuntimeException e) {
      // Every known shape is checked on the way; this is for the one nobody thought of, which must
      // cost a dead letter, not the stream thread.
      return new Decoded.Unrecognized("unknown", "cannot decode the record: " + e);
    }
  }

  private Decoded read(String topic, Headers headers, byte[] value, Instant now) {
    Map<String, String> cloudEvent = new HashMap<>();
    String badHeader = cloudEventHeaders(headers, cloudEvent);
    if (badHeader != null) {
      return new Decoded.Unrecognized(
          LakekeeperEvents.FORMAT, "CloudEvent header " + badHeader + " is not valid UTF-8");
    }
    if (cloudEvent.containsKey("type")) {
      return watchedOnly(
          LakekeeperEvents.decode(
              cloudEvent,
              () -> value == null || value.length == 0 ? null : JSON.readTree(value),
              lakekeeperCatalog,
              now));
    }
    if (value == null || value.length == 0) {
      return new Decoded.Unrecognized("unknown", "empty record");
    }
    if (isAvro(value)) {
      return avroNotice(topic, value);
    }
    JsonNode json = json(value);
    if (json == null || !json.isObject()) {
      return new Decoded.Unrecognized(
          "unknown", "neither Avro, a CloudEvent nor an S3 notification");
    }
    if (json.has("specversion")) {
      Map<String, String> attributes = new HashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = json.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        if (field.getValue().isValueNode()) {
          attributes.put(field.getKey(), field.getValue().asText());
        }
      }
      return watchedOnly(
          LakekeeperEvents.decode(attributes, () -> json.get("data"), lakekeeperCatalog, now));
    }
    if (json.has("Records") || json.has("EventName")) {
      return S3Notifications.decode(json, locator, now);
    }
    return new Decoded.Unrecognized("json", "JSON that is neither a CloudEvent nor an S3 event");
  }

  /** One of Floe's own notices; it must name a table, since it becomes a key of floe.commits. */
  private Decoded avroNotice(String topic, byte[] value) {
    TableCommitted notice;
    try {
      notice = avro.deserialize(topic, value);
    } catch (RuntimeException e) {
      // SerializationException, and whatever Avro throws on bytes that only look like a header.
      return new Decoded.Unrecognized(
          "avro", e.getMessage() == null ? e.toString() : e.getMessage());
    }
    try {
      CommitNotice.tableOf(notice);
    } catch (IllegalArgumentException e) {
      return new Decoded.Unrecognized("avro", "a notice that names no table: " + e.getMessage());
    }
    return new Decoded.Notices("avro", List.of(notice));
  }

  /**
   * A catalog announces every table it holds; a notice about a table no view reads would only cost
   * Floe a catalog round trip, so it is ignored. (A view defined later refreshes fully when it is
   * created, so nothing is lost.)
   */
  private Decoded watchedOnly(Decoded decoded) {
    if (!(decoded instanceof Decoded.Notices notices)) {
      return decoded;
    }
    List<TableCommitted> watched =
        notices.notices().stream().filter(n -> locator.watches(CommitNotice.tableOf(n))).toList();
    if (watched.isEmpty()) {
      return new Decoded.Ignored(notices.format(), "no view reads " + notices.notices());
    }
    return new Decoded.Notices(notices.format(), watched);
  }

  /** Avro single-object encoding (C3 01) or the registry wire format (a zero byte). */
  private static boolean isAvro(byte[] value) {
    return (value.length >= 2 && (value[0] & 0xFF) == 0xC3 && value[1] == 0x01)
        || (value.length >= 5 && value[0] == 0);
  }

  /**
   * Collects the CloudEvent attributes of a binary-mode record (the {@code ce_*} headers,
   * unprefixed) into {@code attributes}; returns the name of a header that is not UTF-8, or null.
   */
  private static String cloudEventHeaders(Headers headers, Map<String, String> attributes) {
    if (headers == null) {
      return null;
    }
    for (Header header : headers) {
      if (header.key().startsWith(CE_HEADER_PREFIX) && header.value() != null) {
        try {
          attributes.put(
              header.key().substring(CE_HEADER_PREFIX.length()),
              StandardCharsets.UTF_8
                  .newDecoder()
                  .onMalformedInput(CodingErrorAction.REPORT)
                  .onUnmappableCharacter(CodingErrorAction.REPORT)
                  .decode(ByteBuffer.wrap(header.value()))
                  .toString());
        } catch (CharacterCodingException e) {
          // Decoded leniently, a name would become another table's, or no table at all.
          return header.key();
        }
      }
    }
    return null;
  }

  private static JsonNode json(byte[] value) {
    if (value == null || value.length == 0) {
      return null;
    }
    try {
      return JSON.readTree(value);
    } catch (IOException e) {
      return null;
    }
  }
}
