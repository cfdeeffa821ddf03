package io.floe.topology.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import io.floe.schemas.TableCommitted;
import io.floe.topology.view.TableName;
import java.time.Instant;
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

  /**
   * @param attributes the event's context attributes and extensions (type, name, namespace, ...)
   * @param data the event's data, or null
   * @param catalog the Floe catalog Lakekeeper's tables are reached through, or null
   */
  static Decoded decode(
      Map<String, String> attributes, JsonNode data, String catalog, Instant now) {
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
    List<String> levels = Arrays.asList(namespace.split(NAMESPACE_SEPARATOR, -1));
    TableCommitted notice =
        CommitNotice.of(
            new TableName(catalog, levels, name), snapshotId(data), null, now, "lakekeeper");
    return new Decoded.Notices(FORMAT, List.of(notice));
  }

  /** The snapshot the commit added (the last {@code add-snapshot} update), if the data says. */
  private static Long snapshotId(JsonNode data) {
    Long id = null;
    if (data != null) {
      for (JsonNode update : data.path("updates")) {
        if ("add-snapshot".equals(update.path("action").asText())
            && update.path("snapshot").has("snapshot-id")) {
          id = update.path("snapshot").get("snapshot-id").asLong();
        }
      }
    }
    return id;
  }
}
