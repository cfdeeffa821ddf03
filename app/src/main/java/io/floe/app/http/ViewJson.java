package io.floe.app.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.app.metrics.ViewStaleness;
import io.floe.schemas.ViewRecord;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.ViewIndex;

/**
 * The JSON shapes of the views API. Times are epoch milliseconds. Snapshot ids are strings: they
 * use all 64 bits, and a browser's numbers hold 53, so as numbers they would arrive rounded.
 */
final class ViewJson {

  /** The status of a view over its staleness objective, unless its refreshes fail. */
  static final String STALE = "STALE";

  private ViewJson() {}

  /**
   * A view as listed: where it reads and writes, and how it stands.
   *
   * @param query the structure of the definition in force, or null when none compiled
   * @param rejected the view's latest definition when it was skipped because it cannot be used
   * @param staleness how stale the view is against its objective, null when its state is unknown
   */
  static ObjectNode summary(
      ViewRecord definition,
      ParsedViewQuery query,
      ViewIndex.Rejected rejected,
      ViewStaleness staleness,
      ViewState state) {
    ObjectNode node = ViewStates.MAPPER.createObjectNode();
    node.put("name", definition.getName());
    node.put("target", definition.getTarget());
    node.put("origin", definition.getOrigin());
    node.put("source", query == null ? null : query.source().toString());
    node.put("granularity", query == null ? null : query.granularity().unit());
    node.put("definitionError", rejected == null ? null : rejected.reason());
    if (state == null) {
      node.put("status", "UNKNOWN");
      return node;
    }
    // STALE says that the promise is broken; an error says more about why, so it wins.
    node.put(
        "status",
        staleness.isStale() && state.status() != ViewState.Status.ERROR
            ? STALE
            : state.status().name());
    node.put("staleness", staleness.stalenessMs());
    node.put("objective", staleness.objectiveMs());
    node.put("watermark", id(state.watermark()));
    node.put("pendingSnapshot", id(state.pendingSnapshot()));
    node.put("pendingRanges", state.pending().rangeCount());
    node.put("pendingNullBucket", state.pending().nullBucket());
    node.put("lastError", state.lastError());
    node.put("failures", state.failures());
    node.put("retryAt", state.retryAt());
    node.put("progress", state.progress());
    ViewState.LastRefresh last = state.last();
    node.put("lagMs", last == null ? null : last.lagMs());
    node.set("lastRefresh", last == null ? null : refresh(last));
    return node;
  }

  static ObjectNode refresh(ViewState.LastRefresh refresh) {
    ObjectNode node = ViewStates.MAPPER.createObjectNode();
    node.put("refreshId", refresh.refreshId() == null ? null : refresh.refreshId().toString());
    node.put("mode", refresh.mode());
    node.put("reason", refresh.reason());
    node.put("finishedAt", refresh.finishedAt());
    node.put("durationMs", refresh.durationMs());
    node.put("lagMs", refresh.lagMs());
    node.put("sourceSnapshotId", id(refresh.sourceSnapshotId()));
    if (refresh.dimensionSnapshotIds() != null) {
      ObjectNode dimensions = node.putObject("dimensionSnapshotIds");
      refresh.dimensionSnapshotIds().forEach((table, id) -> dimensions.put(table, id(id)));
    }
    node.put("targetSnapshotId", id(refresh.targetSnapshotId()));
    node.put("rowsWritten", refresh.rowsWritten());
    node.put("error", refresh.error());
    return node;
  }

  /** A 64-bit id as JSON carries it whole: a string. */
  private static String id(Long id) {
    return id == null ? null : id.toString();
  }

  static ArrayNode recent(ViewState state) {
    ArrayNode list = ViewStates.MAPPER.createArrayNode();
    if (state != null) {
      state.recent().forEach(r -> list.add(refresh(r)));
    }
    return list;
  }

  static ObjectNode definition(ViewRecord record) {
    ObjectNode node = ViewStates.MAPPER.createObjectNode();
    node.put("name", record.getName());
    node.put("query", record.getQuery());
    node.put("target", record.getTarget());
    ArrayNode partitioning = node.putArray("target_partitioning");
    record.getTargetPartitioning().forEach(partitioning::add);
    node.put("timezone", record.getTimezone());
    ObjectNode refresh = node.putObject("refresh");
    refresh.put("linger", record.getLingerMs() + "ms");
    refresh.put("min_interval", record.getMinIntervalMs() + "ms");
    if (record.getChunkBuckets() != null) {
      refresh.put("chunk_buckets", record.getChunkBuckets());
    }
    if (record.getChunkRows() != null) {
      refresh.put("chunk_rows", record.getChunkRows());
    }
    node.put("origin", record.getOrigin());
    node.put("updatedAt", record.getUpdatedAt().toEpochMilli());
    return node;
  }
}
