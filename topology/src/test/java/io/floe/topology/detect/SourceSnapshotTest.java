package io.floe.topology.detect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** When a snapshot's changes count as already in a table state: the rule of DESIGN §3.3. */
class SourceSnapshotTest {

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
