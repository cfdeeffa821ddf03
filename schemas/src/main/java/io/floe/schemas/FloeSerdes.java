package io.floe.schemas;

/** The serdes of Floe's topic values, one per record type. */
public final class FloeSerdes {

  private FloeSerdes() {}

  /** Values of {@code floe.commits}. */
  public static AvroSerde<TableCommitted> tableCommitted() {
    return AvroSerde.of(TableCommitted.class);
  }

  /** Values of {@code floe.snapshots}. */
  public static AvroSerde<SnapshotEvent> snapshotEvent() {
    return AvroSerde.of(SnapshotEvent.class);
  }

  /** Values of {@code floe.views}. */
  public static AvroSerde<ViewRecord> viewRecord() {
    return AvroSerde.of(ViewRecord.class);
  }

  /** Values of {@code floe.requests}. */
  public static AvroSerde<ViewCommand> viewCommand() {
    return AvroSerde.of(ViewCommand.class);
  }

  /** Values of {@code floe.refreshes}. */
  public static AvroSerde<RefreshEvent> refreshEvent() {
    return AvroSerde.of(RefreshEvent.class);
  }
}
