package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
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

  @Test
  void shouldReadEveryRowOverItsRoundsEachAfterItsTurn() throws Exception {
    // Given a warm-up that counts the turns it waits for
    AtomicInteger turns = new AtomicInteger();

    // When it runs between refreshes over 20 003 rows
    long read = EngineWarmup.runBetween(20_003, turns::incrementAndGet);

    // Then every row was read, over one round a turn
    assertThat(read).isEqualTo(20_003);
    assertThat(turns).hasValue(EngineWarmup.ROUNDS);
  }
}
