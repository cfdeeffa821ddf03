package io.floe.topology.store;

/**
 * How far the resolve stage has walked a table's snapshot chain.
 *
 * @param tableUuid the UUID of the table the cursor belongs to; a different UUID means the table
 *     was dropped and recreated
 * @param snapshotId the last snapshot published, or null when the table had none
 * @param retryAt when a failed resolution is retried (epoch millis), or null when none is pending
 * @param lastError why the last resolution failed, or null
 */
public record TableCursor(String tableUuid, Long snapshotId, Long retryAt, String lastError) {

  public TableCursor withRetry(long at, String error) {
    return new TableCursor(tableUuid, snapshotId, at, error);
  }
}
