package io.floe.topology.ingest;

import io.floe.schemas.TableCommitted;
import io.floe.topology.view.TableName;
import java.time.Instant;

/** The commit notice every source of commit events is normalised to. */
public final class CommitNotice {

  private CommitNotice() {}

  /**
   * A notice that {@code table} committed.
   *
   * @param snapshotId the snapshot the commit created, or null when the source does not say
   * @param metadataLocation the metadata file the commit wrote, or null when the source does not
   *     say
   * @param producer who announced it (a pipeline, {@code lakekeeper}, {@code s3-notification}, ...)
   */
  public static TableCommitted of(
      TableName table,
      Long snapshotId,
      String metadataLocation,
      Instant eventTime,
      String producer) {
    return TableCommitted.newBuilder()
        .setCatalog(table.catalog())
        .setNamespace(table.namespace())
        .setTable(table.table())
        .setSnapshotId(snapshotId)
        .setMetadataLocation(metadataLocation)
        .setEventTime(eventTime)
        .setProducer(producer)
        .build();
  }

  /**
   * The table a notice names.
   *
   * @throws IllegalArgumentException when the notice names no table: a part missing or empty, or
   *     one Iceberg rejects (a NUL byte)
   */
  public static TableName tableOf(TableCommitted notice) {
    TableName table = new TableName(notice.getCatalog(), notice.getNamespace(), notice.getTable());
    // Iceberg's own checks, here rather than as a catalog failure retried forever.
    table.identifier();
    return table;
  }
}
