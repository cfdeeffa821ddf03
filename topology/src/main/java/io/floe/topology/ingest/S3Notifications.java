package io.floe.topology.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import io.floe.schemas.TableCommitted;
import io.floe.topology.view.TableName;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * S3 event notifications (AWS's {@code Records} structure, as MinIO publishes it to Kafka): a new
 * {@code *.metadata.json} object under a watched table's location is that table's commit. Other
 * objects (data and manifest files) and tables Floe does not watch are ignored.
 */
final class S3Notifications {

  static final String FORMAT = "s3";

  private S3Notifications() {}

  static Decoded decode(JsonNode event, TableLocator locator, Instant now) {
    Set<String> locations = new LinkedHashSet<>();
    for (JsonNode record : event.path("Records")) {
      String name = record.path("eventName").asText("");
      String bucket = record.path("s3").path("bucket").path("name").asText(null);
      String key = record.path("s3").path("object").path("key").asText(null);
      if (isCreated(name) && bucket != null && key != null) {
        try {
          locations.add("s3://" + bucket + "/" + URLDecoder.decode(key, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          return new Decoded.Unrecognized(
              FORMAT,
              "object key '"
                  + key
                  + "' of bucket "
                  + bucket
                  + " is not URL-encoded: "
                  + e.getMessage());
        }
      }
    }
    // MinIO also names the object at the top level, as bucket/key.
    if (locations.isEmpty()
        && isCreated(event.path("EventName").asText(""))
        && event.hasNonNull("Key")) {
      locations.add("s3://" + event.get("Key").asText());
    }
    List<TableCommitted> notices = new ArrayList<>();
    for (String location : locations) {
      if (!location.endsWith(".metadata.json")) {
        continue;
      }
      Optional<TableName> table = locator.tableFor(location);
      table.ifPresent(t -> notices.add(CommitNotice.of(t, null, location, now, "s3-notification")));
    }
    return notices.isEmpty()
        ? new Decoded.Ignored(FORMAT, "no new metadata of a watched table in " + locations)
        : new Decoded.Notices(FORMAT, notices);
  }

  private static boolean isCreated(String eventName) {
    return eventName.startsWith("s3:ObjectCreated:") || eventName.startsWith("ObjectCreated:");
  }
}
