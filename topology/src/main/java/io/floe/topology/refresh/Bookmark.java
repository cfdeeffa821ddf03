package io.floe.topology.refresh;

import io.floe.topology.view.SourceColumns;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a target's table properties say it reflects (DESIGN §3.6): the source snapshot the whole
 * target reflects, the view version and definition revision that computed it, the source table's
 * UUID, the last complete refresh, and the progress of a chunked refresh half applied. Read once
 * per commit attempt; every commit is conditional on it ({@link CommitGuard}).
 *
 * @param sourceSnapshotId the source snapshot the whole target reflects, or null before the first
 *     refresh
 * @param viewVersion the view version that computed it, or null
 * @param viewRevision the definition revision that last committed, or null (targets of earlier
 *     releases)
 * @param sourceTableUuid the UUID of the source table it was computed from, or null
 * @param refreshId the {@code floe.refresh-id} of the last complete refresh, or null: none
 *     recorded, or what is recorded is not a refresh id (then it names no refresh, and a commit
 *     that moves the bookmark writes its own)
 * @param progress the progress of a chunked refresh half applied, as recorded, or null
 * @param sourceColumns the identity of the source columns the view read ({@link SourceColumns}), as
 *     recorded, or null (targets of earlier releases)
 * @param dimensionStates the state of each dimension the view joined ({@link DimensionStates}), as
 *     recorded, or null (a view of one table)
 * @param stateSnapshotId the snapshot of the view's state table ({@link StateTable}) the target was
 *     computed with, or null (a view without one)
 */
public record Bookmark(
    Long sourceSnapshotId,
    String viewVersion,
    Long viewRevision,
    String sourceTableUuid,
    RefreshId refreshId,
    String progress,
    String sourceColumns,
    String dimensionStates,
    Long stateSnapshotId) {

  private static final Logger LOG = LoggerFactory.getLogger(Bookmark.class);

  /**
   * The garbled refresh ids said so already, by target: every refresh, freshness check, compaction
   * and maintenance reads the bookmark, and one WARN a value is enough. Only a hand or another tool
   * writes such a value, so the set stays small.
   */
  private static final Set<Garbled> WARNED = ConcurrentHashMap.newKeySet();

  private record Garbled(String table, String recorded) {}

  /**
   * The bookmark of a target as it is now (the table is not refreshed). A {@code floe.refresh-id}
   * that is not a refresh id is read as none, and logged at WARN, naming the table and the value,
   * the first time this process reads it of that table.
   */
  public static Bookmark of(Table target) {
    return read(target.properties(), target.name());
  }

  /**
   * The bookmark in a target's table properties, as the commit checks read it again inside the
   * atomic swap: a {@code floe.refresh-id} that is not a refresh id reads as none, without a log
   * line, since {@link #of(Table)} said so when the refresh read the target.
   */
  public static Bookmark of(Map<String, String> properties) {
    return read(properties, null);
  }

  private static Bookmark read(Map<String, String> properties, String table) {
    return new Bookmark(
        number(properties.get(FloeProperties.SOURCE_SNAPSHOT_ID)),
        properties.get(FloeProperties.VIEW_VERSION),
        number(properties.get(FloeProperties.VIEW_REVISION)),
        properties.get(FloeProperties.SOURCE_TABLE_UUID),
        refreshId(properties.get(FloeProperties.REFRESH_ID), table),
        properties.get(FloeProperties.PROGRESS),
        properties.get(FloeProperties.SOURCE_COLUMNS),
        properties.get(FloeProperties.DIMENSION_STATES),
        number(properties.get(FloeProperties.STATE_SNAPSHOT_ID)));
  }

  /**
   * The bookmark a refresh's last commit leaves: the whole target reflects {@code sourceSnapshotId}
   * of the source table {@code sourceTableUuid}, computed by the definition at {@code revision} of
   * {@code version} reading the source columns {@code sourceColumns} ({@link SourceColumns#format})
   * and the dimensions {@code dimensionStates} ({@link DimensionStates#format}, null for none), and
   * no chunked refresh is under way.
   */
  static Bookmark completed(
      RefreshId refresh,
      long sourceSnapshotId,
      String version,
      long revision,
      String sourceTableUuid,
      String sourceColumns,
      String dimensionStates) {
    return new Bookmark(
        sourceSnapshotId,
        version,
        revision,
        sourceTableUuid,
        refresh,
        null,
        sourceColumns,
        dimensionStates,
        null);
  }

  /**
   * A recorded refresh id, or null when there is none or it is garbled (written by hand or by
   * another tool): it then names no refresh of this view, which only makes a refresh that could
   * have found itself applied compute again. The forms of earlier releases keep their meaning
   * ({@link RefreshId#parse}).
   */
  private static RefreshId refreshId(String recorded, String table) {
    if (recorded == null) {
      return null;
    }
    try {
      return RefreshId.parse(recorded);
    } catch (IllegalArgumentException e) {
      if (table != null && WARNED.add(new Garbled(table, recorded))) {
        LOG.warn(
            "Target {} records {} '{}', which is not a refresh id: read as no refresh id",
            table,
            FloeProperties.REFRESH_ID,
            recorded);
      }
      return null;
    }
  }

  private static Long number(String value) {
    return parsed(value, text -> Long.valueOf(text.trim()));
  }

  /** A recorded value parsed, or null when none is recorded or it is garbled. */
  private static <T> T parsed(String recorded, Function<String, T> parse) {
    if (recorded == null) {
      return null;
    }
    try {
      return parse.apply(recorded);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** True before the target's first complete refresh. */
  public boolean isEmpty() {
    return sourceSnapshotId == null;
  }

  /**
   * The progress of a chunked refresh half applied, or null when there is none or it is garbled.
   */
  public RefreshProgress parsedProgress() {
    return parsed(progress, RefreshProgress::parse);
  }

  /**
   * The identity of the source columns the whole target was computed from, or null when none is
   * recorded (a target of an earlier release) or the record is garbled.
   */
  public SourceColumns parsedSourceColumns() {
    return parsed(sourceColumns, SourceColumns::parse);
  }

  /**
   * The state of each dimension the whole target was computed from; none for a view of one table.
   *
   * @throws IllegalArgumentException when the record is garbled
   */
  DimensionStates parsedDimensionStates() {
    return DimensionStates.parse(dimensionStates);
  }

  /**
   * The table properties this bookmark is recorded as, each of its fields under its key: a field
   * that is null maps to null (the property is absent).
   */
  Map<String, String> properties() {
    Map<String, String> properties = new HashMap<>();
    properties.put(FloeProperties.SOURCE_SNAPSHOT_ID, text(sourceSnapshotId));
    properties.put(FloeProperties.VIEW_VERSION, viewVersion);
    properties.put(FloeProperties.VIEW_REVISION, text(viewRevision));
    properties.put(FloeProperties.SOURCE_TABLE_UUID, sourceTableUuid);
    properties.put(FloeProperties.REFRESH_ID, refreshId == null ? null : refreshId.toString());
    properties.put(FloeProperties.PROGRESS, progress);
    properties.put(FloeProperties.SOURCE_COLUMNS, sourceColumns);
    properties.put(FloeProperties.DIMENSION_STATES, dimensionStates);
    properties.put(FloeProperties.STATE_SNAPSHOT_ID, text(stateSnapshotId));
    return properties;
  }

  private static String text(Long number) {
    return number == null ? null : number.toString();
  }

  /**
   * This bookmark with a chunked refresh half applied: its chunks so far recorded as {@code
   * progress}, by the definition at {@code revision}; the snapshot the whole target reflects stays.
   */
  Bookmark inProgress(long revision, RefreshProgress progress) {
    return new Bookmark(
        sourceSnapshotId,
        viewVersion,
        revision,
        sourceTableUuid,
        refreshId,
        progress.toString(),
        sourceColumns,
        dimensionStates,
        stateSnapshotId);
  }

  /** This bookmark with the target computed with snapshot {@code id} of the view's state table. */
  Bookmark withStateSnapshot(long id) {
    return new Bookmark(
        sourceSnapshotId,
        viewVersion,
        viewRevision,
        sourceTableUuid,
        refreshId,
        progress,
        sourceColumns,
        dimensionStates,
        id);
  }

  /**
   * The bookmark of a target changed to the output of the definition at {@code revision} of {@code
   * version}: its rows are no longer any definition's complete output, so it reflects no source
   * snapshot, and no refresh is complete or under way.
   */
  Bookmark redefined(long revision, String version) {
    // The partial states of another definition are not this one's.
    return new Bookmark(
        null, version, revision, sourceTableUuid, null, null, sourceColumns, dimensionStates, null);
  }

  /**
   * The properties a commit that starts from this bookmark requires unchanged, as recorded (a null
   * value: absent): if another commit moved them, the commit is refused.
   */
  public Map<String, String> expected() {
    Map<String, String> expected = new HashMap<>();
    expected.put(
        FloeProperties.SOURCE_SNAPSHOT_ID,
        sourceSnapshotId == null ? null : sourceSnapshotId.toString());
    expected.put(FloeProperties.PROGRESS, progress);
    // Two refreshes at one fact snapshot may have read two versions of a dimension: the one that
    // started from the other's bookmark must not undo it.
    expected.put(FloeProperties.DIMENSION_STATES, dimensionStates);
    return expected;
  }
}
