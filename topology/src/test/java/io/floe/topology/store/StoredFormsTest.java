package io.floe.topology.store;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.RefreshId;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The values of Floe's stores and repartition topic as a previous release wrote them (the files
 * under {@code stored-forms/}, copied from what its serdes wrote) are read by this one, and written
 * back in the same form: an instance of either release reads the other's during a rolling upgrade.
 */
class StoredFormsTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static byte[] stored(String name) throws IOException {
    try (InputStream in = StoredFormsTest.class.getResourceAsStream("/stored-forms/" + name)) {
      return in.readAllBytes();
    }
  }

  private static <T> T read(Class<T> type, String name) throws IOException {
    return JsonSerde.of(type).deserialize("t", stored(name));
  }

  private static <T> void assertWrittenBackAsStored(Class<T> type, T value, String name)
      throws IOException {
    byte[] written = JsonSerde.of(type).serialize("t", value);
    assertThat(JSON.readTree(new String(written, StandardCharsets.UTF_8)))
        .isEqualTo(JSON.readTree(stored(name)));
  }

  @Test
  void shouldReadAViewStateWithAPendingChangeAsAPreviousReleaseStoredIt() throws IOException {
    // When
    ViewState state = read(ViewState.class, "view-state-pending.json");

    // Then
    assertThat(state.status()).isEqualTo(ViewState.Status.PENDING);
    assertThat(state.watermark()).isEqualTo(42L);
    assertThat(state.pendingSnapshot()).isEqualTo(43L);
    assertThat(state.inFlight()).isNull();
    assertThat(state.last().sourceSnapshotId()).isEqualTo(42L);
    assertThat(state.pendingPin()).isEqualTo(new SourceSnapshot("uuid-1", 43L, 8L, 1_000_100L));
    assertThat(state.watermarkPin()).isEqualTo(new SourceSnapshot("uuid-1", 42L, 7L, 0L));
    assertWrittenBackAsStored(ViewState.class, state, "view-state-pending.json");
  }

  @Test
  void shouldReadAViewStateWithARefreshInFlightAsAPreviousReleaseStoredIt() throws IOException {
    // When
    ViewState state = read(ViewState.class, "view-state-in-flight.json");

    // Then
    assertThat(state.status()).isEqualTo(ViewState.Status.REFRESHING);
    assertThat(state.hasPending()).isFalse();
    assertThat(state.inFlight().watermark()).isEqualTo(42L);
    assertThat(state.inFlight().pin()).isEqualTo(new SourceSnapshot("uuid-1", 43L, 8L, 1_000_100L));
    assertWrittenBackAsStored(ViewState.class, state, "view-state-in-flight.json");
  }

  @Test
  void shouldReadTheRefreshIdsOfAViewStateAsTypedIdsAndWriteThemBackByteForByte()
      throws IOException {
    // Given a state as the release that kept refresh ids as strings wrote it: a forced refresh in
    // flight, a range refresh that failed, a first refresh that read its snapshot's columns anew
    byte[] stored = stored("view-state-typed-ids.json");
    String version = "99f4809d816edcff";

    // When
    ViewState state = JsonSerde.of(ViewState.class).deserialize("t", stored);

    // Then each id reads as the refresh it names, and the state is written back as it was stored
    assertThat(state.inFlight().refreshId())
        .isEqualTo(RefreshId.forced("ohlcv_1m", version, 44L, 1));
    assertThat(state.last().refreshId())
        .isEqualTo(RefreshId.of("ohlcv_1m", version, 42L).readingOtherColumns("1a2b3c4d"));
    assertThat(state.recent())
        .extracting(ViewState.LastRefresh::refreshId)
        .containsExactly(
            RefreshId.of("ohlcv_1m", version, 42L).readingOtherColumns("1a2b3c4d"),
            RefreshId.ranged("ohlcv_1m", version, 43L, 1));
    assertThat(new String(JsonSerde.of(ViewState.class).serialize("t", state), UTF_8))
        .isEqualTo(new String(stored, UTF_8));
  }

  @Test
  void shouldReadQueuedSnapshotsAsAPreviousReleaseStoredThem() throws IOException {
    // When
    QueuedSnapshots queued = read(QueuedSnapshots.class, "queued-snapshots.json");

    // Then
    assertThat(queued.snapshots()).hasSize(2);
    assertThat(queued.snapshots().get(0).brokenReason()).isNull();
    assertThat(queued.snapshots().get(1).brokenReason()).isEqualTo("expired");
    assertThat(queued.snapshots().get(1).snapshot())
        .isEqualTo(new SourceSnapshot("uuid-1", 43L, 8L, 9_500L));
    assertWrittenBackAsStored(QueuedSnapshots.class, queued, "queued-snapshots.json");
  }

  @Test
  void shouldReadAChangeAsAPreviousReleaseWroteItToTheRepartitionTopic() throws IOException {
    // When
    DirtyUpdate update = read(DirtyUpdate.class, "dirty-update-change.json");

    // Then
    assertThat(update).isInstanceOf(DirtyUpdate.Change.class);
    DirtyUpdate.Change change = (DirtyUpdate.Change) update;
    assertThat(change.table()).isEqualTo("lake.market.trades");
    assertThat(change.dirty().full()).isTrue();
    assertThat(change.snapshot()).isEqualTo(new SourceSnapshot("uuid-1", 43L, 8L, 9_500L));
    assertWrittenBackAsStored(DirtyUpdate.class, update, "dirty-update-change.json");
  }

  @Test
  void shouldReadBackTheSourceSnapshotsOfAViewStateAsItWroteThem() throws IOException {
    // Given a state with a refresh in flight and a change pending since
    ViewState state = read(ViewState.class, "view-state-in-flight.json");
    SourceSnapshot change = new SourceSnapshot("uuid-1", 44L, 9L, 1_000_300L);
    state.addChange(
        "lake.market.trades",
        "lake.market.trades",
        DirtyBuckets.all("appended"),
        change,
        1_000_300L);
    state.complete(null, state.inFlight().pin(), 1_000_400L);
    JsonSerde<ViewState> serde = JsonSerde.of(ViewState.class);

    // When
    ViewState read = serde.deserialize("t", serde.serialize("t", state));

    // Then the watermark's commit time is not stored: nothing decides on it
    assertThat(read.pendingPin()).isEqualTo(change);
    assertThat(read.watermarkPin()).isEqualTo(new SourceSnapshot("uuid-1", 43L, 8L, 0L));
    assertThat(read.inFlight()).isNull();
  }

  @Test
  void shouldReadBackAQueuedSnapshotAndAChangeAsItWroteThem() {
    // Given
    SourceSnapshot snapshot = new SourceSnapshot("uuid-2", 7L, 3L, 12_000L);
    QueuedSnapshots queued =
        new QueuedSnapshots(List.of(new QueuedSnapshots.Queued(snapshot, "table recreated")));
    DirtyUpdate change =
        new DirtyUpdate.Change(
            "lake.market.quotes", snapshot, StoredDirty.of(DirtyBuckets.all("appended")));
    JsonSerde<QueuedSnapshots> queue = JsonSerde.of(QueuedSnapshots.class);
    JsonSerde<DirtyUpdate> updates = JsonSerde.of(DirtyUpdate.class);

    // When / Then
    assertThat(queue.deserialize("t", queue.serialize("t", queued))).isEqualTo(queued);
    assertThat(updates.deserialize("t", updates.serialize("t", change))).isEqualTo(change);
  }

  @Test
  void shouldKeepTheRootOriginOfASnapshotOfAChainedViewsSourceInTheQueueAndOnTheTopic() {
    // Given a snapshot of another view's target, bringing in a root commit older than its own
    SourceSnapshot snapshot = new SourceSnapshot("uuid-2", 7L, 3L, 12_000L, 9_000L);
    QueuedSnapshots queued =
        new QueuedSnapshots(List.of(new QueuedSnapshots.Queued(snapshot, null)));
    DirtyUpdate change =
        new DirtyUpdate.Change(
            "lake.analytics.bars", snapshot, StoredDirty.of(DirtyBuckets.all("appended")));
    JsonSerde<QueuedSnapshots> queue = JsonSerde.of(QueuedSnapshots.class);
    JsonSerde<DirtyUpdate> updates = JsonSerde.of(DirtyUpdate.class);

    // When they are stored and read back
    QueuedSnapshots queuedBack = queue.deserialize("t", queue.serialize("t", queued));
    DirtyUpdate changeBack = updates.deserialize("t", updates.serialize("t", change));

    // Then the origin is kept
    assertThat(queuedBack.snapshots().get(0).snapshot().originCommittedAt()).isEqualTo(9_000L);
    assertThat(((DirtyUpdate.Change) changeBack).snapshot().originCommittedAt()).isEqualTo(9_000L);
  }

  @Test
  void shouldReadATableCursorAsAPreviousReleaseStoredIt() throws IOException {
    // When
    TableCursor cursor = read(TableCursor.class, "table-cursor.json");

    // Then
    assertThat(cursor.tableUuid()).isEqualTo("uuid-1");
    assertThat(cursor.snapshotId()).isEqualTo(43L);
    assertWrittenBackAsStored(TableCursor.class, cursor, "table-cursor.json");
  }
}
