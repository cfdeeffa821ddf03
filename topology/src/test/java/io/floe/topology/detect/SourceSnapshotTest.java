package io.floe.topology.detect;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableRef;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * When a snapshot's changes count as already in a table state (the rule of DESIGN §3.3), and where
 * the staleness of the changes it brings counts from.
 */
class SourceSnapshotTest {

  private static SnapshotEvent event(long committedAt, Map<String, String> summary) {
    return SnapshotEvent.newBuilder()
        .setTable(
            TableRef.newBuilder()
                .setCatalog("lake")
                .setNamespace(List.of("analytics"))
                .setName("ohlcv_1m")
                .setUuid("uuid-1")
                .build())
        .setSnapshotId(7L)
        .setSequenceNumber(3L)
        .setTimestamp(Instant.ofEpochMilli(committedAt))
        .setSummary(summary)
        .build();
  }

  @Test
  void shouldCountFromTheRootCommitAFloeTargetsSnapshotRecords() {
    // Given a snapshot of a view's target committed at 12 s, bringing in a root commit of 9 s
    SnapshotEvent event =
        event(12_000L, Map.of("operation", "overwrite", "floe.source-committed-at", "9000"));

    // When
    SourceSnapshot snapshot = SourceSnapshot.of(event);

    // Then its staleness counts from the root commit; it still is the snapshot committed at 12 s
    assertThat(snapshot.originCommittedAt()).isEqualTo(9_000L);
    assertThat(snapshot.committedAt()).isEqualTo(12_000L);
  }

  @Test
  void shouldBeItsOwnOriginWhenItRecordsNoneOrOneThatCannotBe() {
    // A snapshot of a table no view writes (or a target another writer committed to)
    assertThat(SourceSnapshot.of(event(12_000L, Map.of("operation", "append"))).originCommittedAt())
        .isEqualTo(12_000L);
    // A value that is no number, or later than the snapshot (the clocks of two writers apart)
    assertThat(
            SourceSnapshot.of(event(12_000L, Map.of("floe.source-committed-at", "soon")))
                .originCommittedAt())
        .isEqualTo(12_000L);
    assertThat(
            SourceSnapshot.of(event(12_000L, Map.of("floe.source-committed-at", "13000")))
                .originCommittedAt())
        .isEqualTo(12_000L);
    // A snapshot an earlier release recorded, without an origin
    assertThat(new SourceSnapshot("uuid-1", 7L, 3L, 12_000L).originCommittedAt())
        .isEqualTo(12_000L);
  }

  @Test
  void shouldBeReflectedByALaterStateOfTheSameTable() {
    SourceSnapshot change = new SourceSnapshot("uuid-1", 5, 3, 0);

    assertThat(change.isReflectedBy(new SourceSnapshot("uuid-1", 6, 3, 0))).isTrue();
    assertThat(change.isReflectedBy(new SourceSnapshot("uuid-1", 7, 4, 0))).isTrue();
    assertThat(change.isReflectedBy(new SourceSnapshot("uuid-1", 4, 2, 0))).isFalse();
    assertThat(change.isReflectedBy(new SourceSnapshot("uuid-2", 7, 4, 0))).isFalse();
    assertThat(change.isReflectedBy(null)).isFalse();
  }

  @Test
  void shouldNotCountAsReflectedWhenEitherSequenceNumberIsUnknown() {
    // Given snapshots an earlier release recorded without a sequence number (or a table UUID)
    SourceSnapshot unknownChange = SourceSnapshot.recorded(null, 5L, null, null);
    SourceSnapshot unknownState = SourceSnapshot.recorded(null, 6L, null, null);

    // Then nothing tells that one holds the other's changes: the change stays to be refreshed
    assertThat(unknownChange.isReflectedBy(new SourceSnapshot(null, 6, 7, 0))).isFalse();
    assertThat(new SourceSnapshot(null, 5, 3, 0).isReflectedBy(unknownState)).isFalse();
  }
}
