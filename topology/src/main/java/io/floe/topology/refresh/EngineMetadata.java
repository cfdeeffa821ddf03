package io.floe.topology.refresh;

import io.floe.topology.view.SourceColumns;
import io.floe.topology.view.TableName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.util.JsonUtil;

/**
 * What other engines read of a target's freshness in its snapshot summaries (DESIGN §5), besides
 * Floe's own {@code floe.*} keys:
 *
 * <ul>
 *   <li>{@value #REFRESH_STATE}: the refresh state of the Iceberg materialized-view proposal
 *       (apache/iceberg#11041, not final): a JSON object with {@code view-version-id}, {@code
 *       refresh-start-timestamp-ms} and {@code source-states}, one {@code table} entry ({@code
 *       type}, {@code namespace}, {@code name}, {@code catalog} when it is not the target's, {@code
 *       uuid}, {@code snapshot-id}) for the source and one for each dimension the view joins (a
 *       dimension without a snapshot has none). Floe has no Iceberg view version: the view version
 *       id is the definition's revision ({@code floe.view-revision}), which only grows.
 *   <li>{@value #DEPENDS_ON_TABLES} and {@value #TRINO_QUERY_START_TIME}: the keys Trino's Iceberg
 *       connector reads from a materialized view's storage table, {@code schema.table=<snapshot
 *       id>} for each source table, comma-separated (the fact table, then each dimension), and the
 *       refresh start as an ISO-8601 instant. Trino names a table by one schema in its own catalog,
 *       so a source in another catalog, or under a nested namespace, or a dimension without a
 *       snapshot, makes the whole value {@value #UNKNOWN}, which Trino reads as "freshness
 *       unknown".
 * </ul>
 *
 * A chunk that leaves a chunked refresh half applied reflects no single source snapshot: it records
 * no refresh state, no start time and {@value #UNKNOWN} dependencies. Compactions carry the keys of
 * the snapshot they rewrite forward, as Trino's own {@code OPTIMIZE} does.
 */
public final class EngineMetadata {

  /** The proposal's snapshot-summary key. */
  public static final String REFRESH_STATE = "refresh-state";

  /** Trino's key: the source tables and the snapshot ids the storage table reflects. */
  public static final String DEPENDS_ON_TABLES = "dependsOnTables";

  /** Trino's key: when the refresh started, as {@link Instant#toString()}. */
  public static final String TRINO_QUERY_START_TIME = "trino-query-start-time";

  /** Trino's token for a dependency whose snapshot it cannot check. */
  public static final String UNKNOWN = "UNKNOWN";

  /** The keys a compaction carries forward. */
  static final List<String> KEYS =
      List.of(REFRESH_STATE, DEPENDS_ON_TABLES, TRINO_QUERY_START_TIME);

  private EngineMetadata() {}

  /**
   * The summary keys of a commit that makes the whole target reflect {@code sourceSnapshotId} and
   * the dimension states {@code dimensions}.
   *
   * @param viewRevision the revision of the view definition, as the proposal's view version id
   * @param refreshStartMillis when the refresh started
   */
  static Map<String, String> complete(
      TableName target,
      TableName source,
      String sourceUuid,
      long sourceSnapshotId,
      DimensionStates dimensions,
      long viewRevision,
      long refreshStartMillis) {
    List<DimensionStates.State> tables = new ArrayList<>();
    tables.add(
        new DimensionStates.State(
            source, sourceUuid, sourceSnapshotId, new SourceColumns(List.of())));
    tables.addAll(dimensions.states());
    Map<String, String> summary = new HashMap<>();
    summary.put(
        REFRESH_STATE,
        JsonUtil.generate(
            gen -> {
              gen.writeStartObject();
              gen.writeNumberField("view-version-id", viewRevision);
              gen.writeNumberField("refresh-start-timestamp-ms", refreshStartMillis);
              gen.writeArrayFieldStart("source-states");
              for (DimensionStates.State table : tables) {
                TableName name = table.table();
                gen.writeStartObject();
                gen.writeStringField("type", "table");
                gen.writeArrayFieldStart("namespace");
                for (String level : name.namespace()) {
                  gen.writeString(level);
                }
                gen.writeEndArray();
                gen.writeStringField("name", name.table());
                if (!name.catalog().equals(target.catalog())) {
                  gen.writeStringField("catalog", name.catalog());
                }
                gen.writeStringField("uuid", table.uuid());
                if (table.snapshotId() != null) {
                  gen.writeNumberField("snapshot-id", table.snapshotId());
                }
                gen.writeEndObject();
              }
              gen.writeEndArray();
              gen.writeEndObject();
            },
            false));
    List<String> dependencies = new ArrayList<>();
    for (DimensionStates.State table : tables) {
      TableName name = table.table();
      boolean trinoCanName =
          name.catalog().equals(target.catalog())
              && name.namespace().size() == 1
              && table.snapshotId() != null;
      if (!trinoCanName) {
        dependencies = List.of(UNKNOWN);
        break;
      }
      dependencies.add(name.namespace().get(0) + "." + name.table() + "=" + table.snapshotId());
    }
    summary.put(DEPENDS_ON_TABLES, String.join(",", dependencies));
    summary.put(TRINO_QUERY_START_TIME, Instant.ofEpochMilli(refreshStartMillis).toString());
    return summary;
  }

  /**
   * The summary keys of a chunk that leaves a chunked refresh half applied: no start time either,
   * since Trino takes a recent start time within a grace period as fresh without looking further.
   */
  static Map<String, String> halfApplied() {
    return Map.of(DEPENDS_ON_TABLES, UNKNOWN);
  }

  /** The keys of {@code snapshot} to carry forward onto a commit that changes no row. */
  static Map<String, String> carriedFrom(Snapshot snapshot) {
    Map<String, String> carried = new HashMap<>();
    if (snapshot != null) {
      for (String key : KEYS) {
        String value = snapshot.summary().get(key);
        if (value != null) {
          carried.put(key, value);
        }
      }
    }
    return carried;
  }
}
