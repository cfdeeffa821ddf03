package io.floe.topology.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.schemas.TableCommitted;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
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

  public Decoded decode(String topic, Headers headers, byte[] value, Instant now) {
    Map<String, String> cloudEvent = cloudEventHeaders(headers);
    if (cloudEvent.containsKey("type")) {
      return watchedOnly(LakekeeperEvents.decode(cloudEvent, json(value), lakekeeperCatalog, now));
    }
    if (value == null || value.length == 0) {
      return new Decoded.Unrecognized("unknown", "empty record");
    }
    if (isAvro(value)) {
      try {
        return new Decoded.Notices("avro", List.of(avro.deserialize(topic, value)));
      } catch (SerializationException e) {
        return new Decoded.Unrecognized("avro", e.getMessage());
      }
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
          LakekeeperEvents.decode(attributes, json.get("data"), lakekeeperCatalog, now));
    }
    if (json.has("Records") || json.has("EventName")) {
      return S3Notifications.decode(json, locator, now);
    }
    return new Decoded.Unrecognized("json", "JSON that is neither a CloudEvent nor an S3 event");
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

  /** CloudEvent attributes of a binary-mode record: the {@code ce_*} headers, unprefixed. */
  private static Map<String, String> cloudEventHeaders(Headers headers) {
    Map<String, String> attributes = new HashMap<>();
    if (headers != null) {
      for (Header header : headers) {
        if (header.key().startsWith(CE_HEADER_PREFIX) && header.value() != null) {
          attributes.put(
              header.key().substring(CE_HEADER_PREFIX.length()),
              new String(header.value(), StandardCharsets.UTF_8));
        }
      }
    }
    return attributes;
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
