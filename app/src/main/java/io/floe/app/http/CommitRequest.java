package io.floe.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.floe.app.config.CatalogConfig;
import io.floe.app.http.HttpApi.ApiException;
import io.floe.topology.view.TableName;
import io.javalin.http.HttpStatus;
import java.util.List;
import java.util.Map;

/**
 * A commit posted to {@code /api/commits}: {@code {"table": "catalog.namespace.table",
 * "snapshotId": 123}}, the snapshot optional.
 *
 * @param snapshotId the snapshot the commit created, or null for the table's current one
 */
record CommitRequest(TableName table, Long snapshotId) {

  /** The fields of a commit. */
  private static final List<String> FIELDS = List.of("table", "snapshotId");

  /**
   * Reads a request's body, refusing with a 400 one that is not such an object, names a table badly
   * or names a catalog Floe does not have (every view would ignore its notice).
   */
  static CommitRequest parse(String body, CatalogConfig catalogs) {
    JsonNode request;
    try {
      request = ViewStates.MAPPER.readTree(body);
    } catch (Exception e) {
      request = null;
    }
    if (request == null || !request.isObject()) {
      throw new ApiException(HttpStatus.BAD_REQUEST, "the body must be a JSON object", Map.of());
    }
    request
        .fieldNames()
        .forEachRemaining(
            field -> {
              if (!FIELDS.contains(field)) {
                throw new ApiException(
                    HttpStatus.BAD_REQUEST,
                    "unknown field '" + field + "': a commit has " + String.join(", ", FIELDS));
              }
            });
    JsonNode table = request.get("table");
    if (table == null || !table.isTextual()) {
      throw new ApiException(
          HttpStatus.BAD_REQUEST,
          "the body needs 'table', the table that committed as catalog.namespace.table");
    }
    TableName name;
    try {
      name = TableName.parse(table.asText());
      catalogs.catalog(name.catalog());
    } catch (IllegalArgumentException e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage());
    }
    return new CommitRequest(name, snapshotId(request.get("snapshotId")));
  }

  /** A snapshot id as a JSON integer or, as the API itself writes them, a string of digits. */
  private static Long snapshotId(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isIntegralNumber() && node.canConvertToLong()) {
      return node.longValue();
    }
    if (node.isTextual()) {
      try {
        return Long.parseLong(node.asText());
      } catch (NumberFormatException e) {
        // Falls through to the refusal.
      }
    }
    throw new ApiException(
        HttpStatus.BAD_REQUEST,
        "'snapshotId' must be a snapshot id (a 64-bit integer), not " + node);
  }
}
