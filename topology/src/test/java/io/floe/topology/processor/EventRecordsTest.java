package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.floe.schemas.DimensionSnapshot;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.ViewCommand;
import io.floe.schemas.ViewCommandType;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Avro form of the events the processors publish and read. */
class EventRecordsTest {

  private static final TableName TRADES = TableName.parse("lake.market.trades");

  @Test
  void shouldReadAFullRefreshCommandAsAFullRefreshRequestWithWhoAskedForIt() {
    // Given
    ViewCommand command =
        ViewCommand.newBuilder()
            .setView("ohlcv_1m")
            .setCommand(ViewCommandType.FULL_REFRESH)
            .setRequestedAt(Instant.ofEpochMilli(1_234))
            .setRequestedBy("alice")
            .build();

    // When
    DirtyUpdate update = EventRecords.request(command);

    // Then
    assertThat(update)
        .isEqualTo(new DirtyUpdate.Request(DirtyUpdate.Request.Kind.FULL_REFRESH, 1_234, "alice"));
  }

  @Test
  void shouldCarryARequestedTimeRangeToTheMaintainStage() {
    // Given
    TimeRange hour =
        TimeRange.parse("2026-04-08T10:00:00Z", "2026-04-08T11:00:00Z", ZoneOffset.UTC);
    ViewCommand command =
        EventRecords.rangeCommand("ohlcv_1m", hour, Instant.ofEpochMilli(1_234), "api");

    // When
    DirtyUpdate update = EventRecords.request(command);

    // Then
    assertThat(command.getCommand()).isEqualTo(ViewCommandType.REFRESH);
    assertThat(update)
        .isEqualTo(new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, 1_234, "api", hour));
  }

  @Test
  void shouldLeaveOutARangeWithOneEndMissingAndRefreshAnyway() {
    // Given a command some other tool wrote
    ViewCommand command =
        ViewCommand.newBuilder()
            .setView("ohlcv_1m")
            .setCommand(ViewCommandType.REFRESH)
            .setRequestedAt(Instant.ofEpochMilli(1_234))
            .setRangeFrom(Instant.parse("2026-04-08T10:00:00Z"))
            .build();

    // When
    DirtyUpdate update = EventRecords.request(command);

    // Then
    assertThat(update)
        .isEqualTo(new DirtyUpdate.Request(DirtyUpdate.Request.Kind.REFRESH, 1_234, null));
  }

  @Test
  void shouldAskForARefreshInFloesNameWithTheReason() {
    ViewCommand command = EventRecords.refreshCommand("ohlcv_1m", "source table dropped", 5_000);

    assertThat(command.getCommand()).isEqualTo(ViewCommandType.REFRESH);
    assertThat(command.getRequestedBy()).isEqualTo("floe: source table dropped");
    assertThat(command.getRequestedAt()).isEqualTo(Instant.ofEpochMilli(5_000));
    assertThat(EventRecords.request(command))
        .isEqualTo(
            new DirtyUpdate.Request(
                DirtyUpdate.Request.Kind.REFRESH, 5_000, "floe: source table dropped"));
  }

  @Test
  void shouldQueueASnapshotAsItsEventDescribesIt() {
    // Given
    SnapshotEvent event =
        SnapshotEvent.newBuilder()
            .setTable(EventRecords.tableRef(TRADES, "uuid-1"))
            .setSnapshotId(42L)
            .setParentId(41L)
            .setSequenceNumber(7L)
            .setTimestamp(Instant.ofEpochMilli(9_000))
            .setOperation("append")
            .setSummary(Map.of())
            .setManifestList("file:/m.avro")
            .setSchemaId(0)
            .setMetadataLocation(null)
            .setHistoryBroken(true)
            .setHistoryBrokenReason("expired")
            .build();

    // When
    QueuedSnapshots.Queued queued = EventRecords.queued(event);

    // Then
    assertThat(EventRecords.tableOf(event.getTable())).isEqualTo(TRADES);
    assertThat(queued)
        .isEqualTo(
            new QueuedSnapshots.Queued(new SourceSnapshot("uuid-1", 42L, 7L, 9_000L), "expired"));
  }

  @Test
  void shouldReportAFailedLookupOfTheSourceUnderTheViewsNameAndVersionInForce() throws Exception {
    // Given a view whose source lookup failed before any refresh was in flight
    StoredView view =
        StoredView.of(
            CompiledView.compile(
                ViewDefinition.of(
                    "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m")),
                1));

    // When
    RefreshEvent event =
        EventRecords.refreshEvent(
            view, TRADES, null, null, RefreshMode.FAILED, null, null, "catalog down", 8_000);

    // Then
    assertThat(event.getRefreshId()).isEqualTo("ohlcv_1m");
    assertThat(event.getViewVersion()).isEqualTo(view.version());
    assertThat(event.getSourceSnapshotId()).isEqualTo(-1L);
    assertThat(event.getSource().getName()).isEqualTo("trades");
    assertThat(EventRecords.tableOf(event.getTarget()))
        .isEqualTo(TableName.parse("lake.analytics.ohlcv_1m"));
    assertThat(event.getError()).isEqualTo("catalog down");
    assertThat(event.getStartTime()).isEqualTo(event.getFinishTime());
    assertThat(event.getRequests()).isNull();
  }

  @Test
  void shouldNameTheSnapshotOfEachDimensionARefreshJoined() throws Exception {
    // Given a refresh that read source snapshot 42 and two dimensions, one without a snapshot
    StoredView view =
        StoredView.of(
            CompiledView.compile(
                ViewDefinition.of(
                    "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m")),
                1));
    SourceSnapshot source = new SourceSnapshot("uuid-1", 42L, 7L, 1_000);
    RefreshOutcome outcome =
        RefreshOutcome.committed(
            RefreshId.of("ohlcv_1m", view.version(), 42L),
            RefreshOutcome.Mode.FULL,
            "dimension changed",
            DirtyBuckets.all("dimension changed"),
            null,
            source,
            List.of(
                new RefreshOutcome.Dimension(TableName.parse("lake.ref.sectors"), null),
                new RefreshOutcome.Dimension(
                    TableName.parse("lake.ref.symbols"),
                    new SourceSnapshot("dim-uuid", 9L, 3L, 5_000))),
            new RefreshOutcome.Target("uuid-2", 99L, 6_000L, null),
            RefreshOutcome.Work.NONE);

    // When its event is built, and that of a refresh that found the target ahead
    RefreshEvent event =
        EventRecords.refreshEvent(
            view, TRADES, null, outcome, RefreshMode.FULL, 1_000L, 5_000L, null, 7_000);
    RefreshEvent skipped =
        EventRecords.refreshEvent(
            view, TRADES, null, outcome, RefreshMode.SKIPPED, null, null, null, 7_000);

    // Then the first names each dimension at its snapshot, the second none
    assertThat(event.getDimensions())
        .extracting(
            d -> EventRecords.tableOf(d.getTable()).toString(),
            DimensionSnapshot::getSnapshotId,
            DimensionSnapshot::getCommittedAt)
        .containsExactly(
            tuple("lake.ref.sectors", null, null),
            tuple("lake.ref.symbols", 9L, Instant.ofEpochMilli(5_000)));
    assertThat(event.getDimensions().get(1).getTable().getUuid()).isEqualTo("dim-uuid");
    assertThat(skipped.getDimensions()).isNull();
  }
}
