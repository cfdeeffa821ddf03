package io.floe.topology.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.floe.schemas.TableCommitted;
import io.floe.topology.view.TableName;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Lakekeeper's CloudEvents (its Kafka sink, binary mode: attributes in {@code ce_*} headers, the
 * commit request as JSON data; structured mode is read too). {@code updateTable}, {@code
 * createTable} and {@code registerTable} become commit notices for the table the event names; other
 * events (drops, renames, views) announce no data change and are ignored.
 */
final class LakekeeperEvents {

  static final String FORMAT = "lakekeeper";
  private static final Set<String> TABLE_CHANGES =
      Set.of("updateTable", "createTable", "registerTable");

  /** Lakekeeper joins namespace levels with the unit separator (iceberg-rust's url string). */
  private static final String NAMESPACE_SEPARATOR = "\u001f";

  private LakekeeperEvents() {}

  /** The data of an event, read only for the events that use it. */
  @FunctionalInterface
  interface Data {

    /** The data as JSON, or null when the event has none. */
    JsonNode read() throws IOException;
  }

  /**
   * @param attributes the event's context attributes and extensions (type, name, namespace, ...)
   * @param data the event's data
   * @param catalog the Floe catalog Lakekeeper's tables are reached through, or null
   */
  static Decoded decode(Map<String, String> attributes, Data data, String catalog, Instant now) {
    String type = attributes.get("type");
    if (!TABLE_CHANGES.contains(type)) {
      return new Decoded.Ignored(FORMAT, "event " + type + " announces no table data change");
    }
    if (!"table".equals(attributes.getOrDefault("tabular-type", "table"))) {
      return new Decoded.Ignored(FORMAT, "event " + type + " is not about a table");
    }
    String name = attributes.get("name");
    String namespace = attributes.get("namespace");
    if (name == null || namespace == null) {
      return new Decoded.Unrecognized(FORMAT, "event " + type + " without name or namespace");
    }
    if (catalog == null) {
      return new Decoded.Unrecognized(
          FORMAT,
          "a Lakekeeper event, but floe.events.lakekeeper.catalog does not name the catalog of"
              + " its tables");
    }
    TableName table;
    try {
      table = new TableName(catalog, Arrays.asList(namespace.split(NAMESPACE_SEPARATOR, -1)), name);
      table.identifier();
    } catch (IllegalArgumentException e) {
      return new Decoded.Unrecognized(
          FORMAT, "event " + type + " names no table: " + e.getMessage());
    }
    JsonNode body;
    try {
      body = data.read();
    } catch (IOException e) {
      String problem = e instanceof JsonProcessingException json ? json.getOriginalMessage() : "";
      return new Decoded.Unrecognized(
          FORMAT, "event " + type + " of " + table + " has data that is not JSON: " + problem);
    }
    JsonNode malformed = malformedSnapshotId(body);
    if (malformed != null) {
      return new Decoded.Unrecognized(
          FORMAT,
          "event "
              + type
              + " of "
              + table
              + " adds a snapshot whose snapshot-id is not a 64-bit integer: "
              + malformed);
    }
    TableCommitted notice = CommitNotice.of(table, snapshotId(body), null, now, "lakekeeper");
    return new Decoded.Notices(FORMAT, List.of(notice));
  }

  private static Iterable<JsonNode> addedSnapshots(JsonNode data) {
    List<JsonNode> snapshots = new ArrayList<>();
    if (data != null) {
      for (JsonNode update : data.path("updates")) {
        if ("add-snapshot".equals(update.path("action").asText())
            && update.path("snapshot").has("snapshot-id")) {
          snapshots.add(update.path("snapshot").get("snapshot-id"));
        }
      }
    }
    return snapshots;
  }

  /** The first snapshot id of an {@code add-snapshot} update that is no long, or null. */
  private static JsonNode malformedSnapshotId(JsonNode data) {
    for (JsonNode id : addedSnapshots(data)) {
      if (!id.isIntegralNumber() || !id.canConvertToLong()) {
        return id;
      }
    }
    return null;
  }

  /** The snapshot the commit added (the last {@code add-snapshot} update), if the data says. */
  private static Long snapshotId(JsonNode data) {
    Long id = null;
    for (JsonNode added : addedSnapshots(data)) {
      id = added.asLong();
    }
    return id;
  }
}
