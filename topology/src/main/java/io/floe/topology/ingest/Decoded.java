package io.floe.topology.ingest;

import io.floe.schemas.TableCommitted;
import java.util.List;

/** What a record on an event topic turned out to be. */
public sealed interface Decoded {

  /**
   * The format the record was recognized as, for metrics: avro, lakekeeper, s3, json or unknown.
   */
  String format();

  /** Commit notices to publish. */
  record Notices(String format, List<TableCommitted> notices) implements Decoded {}

  /** A recognized event that announces no data change of a watched table. */
  record Ignored(String format, String reason) implements Decoded {}

  /** A record Floe cannot read: it goes to the dead-letter topic with the reason. */
  record Unrecognized(String format, String reason) implements Decoded {}
}
