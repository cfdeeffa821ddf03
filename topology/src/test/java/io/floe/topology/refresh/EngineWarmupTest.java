package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EngineWarmupTest {

  @Test
  void shouldRefreshTheSyntheticViewOverEveryRowItWrote() {
    // Given / When a warm-up over 20 000 rows
    RefreshOutcome outcome = EngineWarmup.run(20_000);

    // Then its refresh read every row through the engine and wrote the groups of 16 keys over the
    // minutes of a day
    assertThat(outcome.work().rowsRead()).isEqualTo(20_000);
    assertThat(outcome.work().rowsWritten()).isBetween(1_440L, 16L * 1_440);
  }
}
