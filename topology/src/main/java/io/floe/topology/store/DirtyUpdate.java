package io.floe.topology.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;

/**
 * The value of the repartition topic from the detect to the maintain stage, keyed by view name:
 * what one source snapshot changed in the view, or a user's request to refresh it.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
  @JsonSubTypes.Type(value = DirtyUpdate.Change.class, name = "change"),
  @JsonSubTypes.Type(value = DirtyUpdate.Request.class, name = "request")
})
public sealed interface DirtyUpdate permits DirtyUpdate.Change, DirtyUpdate.Request {

  /**
   * The buckets one source snapshot changed. Changes reach a view in the commit order of its
   * source, so the latest change names the snapshot the next refresh reads. Written with the
   * snapshot's fields flat, as earlier releases wrote them, so that either release reads the
   * other's.
   *
   * @param table the source table, catalog.namespace.table
   * @param snapshot the source snapshot; its table's UUID tells changes of a table dropped and
   *     recreated under the same name apart, its sequence number those the view already reflects
   * @param dirty the buckets it changed
   */
  record Change(String table, @JsonUnwrapped SourceSnapshot snapshot, StoredDirty dirty)
      implements DirtyUpdate {}

  /**
   * A request to refresh: a user's (refresh now, catching up with the source, or recompute every
   * bucket), or a commit of a dimension table the view joins (DESIGN §3.10), which the detect stage
   * turns into a refresh without reading anything.
   *
   * @param kind what was asked
   * @param requestedAt when (epoch millis)
   * @param requestedBy who asked, for the logs; may be null
   * @param range for a {@code REFRESH}, a time range whose every bucket is to be recomputed besides
   *     what changed; null for none (and in requests of earlier releases)
   * @param dimensionSnapshot the snapshot of the dimension whose commit asks for the refresh, which
   *     the view's staleness counts like a commit of its source; null for a user's request. Left
   *     out of the stored form when null, as earlier releases wrote it (which read a dimension's
   *     request as a user's)
   */
  record Request(
      Kind kind,
      long requestedAt,
      String requestedBy,
      TimeRange range,
      @JsonInclude(JsonInclude.Include.NON_NULL) SourceSnapshot dimensionSnapshot)
      implements DirtyUpdate {

    /** A user's request without a time range. */
    public Request(Kind kind, long requestedAt, String requestedBy) {
      this(kind, requestedAt, requestedBy, null);
    }

    /** A user's request. */
    public Request(Kind kind, long requestedAt, String requestedBy, TimeRange range) {
      this(kind, requestedAt, requestedBy, range, null);
    }

    /**
     * The request of a commit of {@code dimension}, a table the view joins, in {@code snapshot}.
     */
    public static Request dimensionCommitted(String dimension, SourceSnapshot snapshot) {
      return new Request(
          Kind.REFRESH,
          snapshot.committedAt(),
          "snapshot " + snapshot.snapshotId() + " of dimension " + dimension,
          null,
          snapshot);
    }

    /** What a request asks for. */
    public enum Kind {
      /** Catch up with the source now, without waiting. */
      REFRESH,
      /** Recompute every bucket. */
      FULL_REFRESH
    }
  }
}
