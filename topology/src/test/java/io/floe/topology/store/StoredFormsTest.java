package io.floe.topology.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.topology.maintain.ViewState;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
    assertWrittenBackAsStored(ViewState.class, state, "view-state-in-flight.json");
  }

  @Test
  void shouldReadQueuedSnapshotsAsAPreviousReleaseStoredThem() throws IOException {
    // When
    QueuedSnapshots queued = read(QueuedSnapshots.class, "queued-snapshots.json");

    // Then
    assertThat(queued.snapshots()).hasSize(2);
    assertThat(queued.snapshots().get(0).brokenReason()).isNull();
    assertThat(queued.snapshots().get(1).brokenReason()).isEqualTo("expired");
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
    assertWrittenBackAsStored(DirtyUpdate.class, update, "dirty-update-change.json");
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
