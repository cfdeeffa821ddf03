package io.floe.topology.store;

/**
 * How far the resolve stage has walked a table's snapshot chain.
 *
 * @param tableUuid the UUID of the table the cursor belongs to; a different UUID means the table
 *     was dropped and recreated
 * @param snapshotId the last snapshot published, or null when the table had none
 * @param retryAt when the table is read again (epoch millis), or null when nothing is pending
 * @param lastError why the last resolution failed, or null
 * @param awaitUntil when a notice named a commit that the catalog did not show yet (an object store
 *     announces a new metadata file before the catalog points at it), the table is read again at
 *     every retry until it moves or this time (epoch millis) passes; null otherwise
 */
public record TableCursor(
    String tableUuid, Long snapshotId, Long retryAt, String lastError, Long awaitUntil) {

  /** A cursor at {@code snapshotId} with nothing pending. */
  public static TableCursor at(String tableUuid, Long snapshotId) {
    return new TableCursor(tableUuid, snapshotId, null, null, null);
  }

  public TableCursor withRetry(long at, String error) {
    return new TableCursor(tableUuid, snapshotId, at, error, awaitUntil);
  }

  /** This cursor, reading the table again at {@code retryAt} until it moves or {@code until}. */
  public TableCursor awaiting(long retryAt, long until) {
    return new TableCursor(tableUuid, snapshotId, retryAt, null, until);
  }
}
