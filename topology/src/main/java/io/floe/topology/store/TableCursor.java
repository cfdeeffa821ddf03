package io.floe.topology.store;

/**
 * How far the resolve stage has walked a table's snapshot chain, and the walk it still owes.
 *
 * @param tableUuid the UUID of the table the cursor belongs to; a different UUID means the table
 *     was dropped and recreated; null before the first walk
 * @param snapshotId the last snapshot published, or null when the table had none
 * @param requested whether a notice asked for a walk that has not completed: the walk is run again
 *     after a crash or a rebalance
 * @param retryAt when the table is read again (epoch millis) after a failure or while awaiting a
 *     commit, or null
 * @param lastError why the last walk failed, or null
 * @param awaited a commit a notice named that the catalog did not show yet (an object store
 *     announces a new metadata file before the catalog points at it), or null
 * @param missing whether the table was found dropped; the views on it were told once
 * @param schemaId the table's current schema id when last walked, or null (cursors of earlier
 *     releases): a schema change creates no snapshot, so a walk that finds none compares it
 * @param nameMapping a hash of the table's name mapping ({@code schema.name-mapping.default}) when
 *     last walked, empty for none, or null (cursors of earlier releases): setting or changing it
 *     creates no snapshot either, and changes what files without field ids read
 */
public record TableCursor(
    String tableUuid,
    Long snapshotId,
    boolean requested,
    Long retryAt,
    String lastError,
    Awaited awaited,
    boolean missing,
    Integer schemaId,
    String nameMapping) {

  /**
   * A commit a notice named, awaited until {@code until} (epoch millis).
   *
   * @param snapshotId the snapshot the notice named, or null
   * @param metadataLocation the metadata file the notice named, or null
   */
  public record Awaited(Long snapshotId, String metadataLocation, long until) {}

  /** A table never walked. */
  public static TableCursor unwalked() {
    return new TableCursor(null, null, false, null, null, null, false, null, null);
  }

  /**
   * A cursor at {@code snapshotId}, schema {@code schemaId} and name mapping {@code nameMapping}
   * with nothing owed.
   */
  public static TableCursor at(
      String tableUuid, Long snapshotId, Integer schemaId, String nameMapping) {
    return new TableCursor(
        tableUuid, snapshotId, false, null, null, null, false, schemaId, nameMapping);
  }

  /** A walk is owed; {@code named} (or null) is the commit the notice named. */
  public TableCursor requested(Awaited named) {
    return new TableCursor(
        tableUuid,
        snapshotId,
        true,
        retryAt,
        lastError,
        named == null ? awaited : named,
        missing,
        schemaId,
        nameMapping);
  }

  /** The walk failed; it is retried at {@code at}. */
  public TableCursor failed(long at, String error) {
    return new TableCursor(
        tableUuid, snapshotId, true, at, error, awaited, missing, schemaId, nameMapping);
  }

  /** Still waiting for the awaited commit: read the table again at {@code at}. */
  public TableCursor awaitingAgainAt(long at) {
    return new TableCursor(
        tableUuid, snapshotId, true, at, null, awaited, missing, schemaId, nameMapping);
  }

  /** The table was found dropped. */
  public TableCursor gone() {
    return new TableCursor(
        tableUuid, snapshotId, false, null, null, null, true, schemaId, nameMapping);
  }
}
