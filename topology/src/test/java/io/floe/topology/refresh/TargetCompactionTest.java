package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import java.nio.file.Path;
import java.util.Random;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When a compaction needs no plan, told from a snapshot's totals before any manifest is read. */
class TargetCompactionTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table table;
  private final Random random = new Random(7);

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    table = lake.createTrades("analytics", "files");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldNeedNoPlanWhileTheTableHoldsFewerDataFilesThanACompactionMerges() {
    // Given three data files and no delete file
    for (int i = 0; i < 3; i++) {
      lake.append(table, lake.randomTrades(random, 10, "2026-04-06", 8, 18));
    }
    table.refresh();

    // Then a compaction of 8 files needs no plan, one of 3 may
    assertThat(TargetCompaction.mayNeedCompaction(table.currentSnapshot(), 8)).isFalse();
    assertThat(TargetCompaction.mayNeedCompaction(table.currentSnapshot(), 3)).isTrue();
  }

  @Test
  void shouldPlanWhenTheTableHoldsADeleteFileHoweverFewItsDataFiles() {
    // Given one data file and a position delete file
    lake.append(table, lake.randomTrades(random, 10, "2026-04-06", 8, 18));
    lake.deleteByPosition(table, trade -> "AAPL".equals(trade.getField("symbol")));
    table.refresh();

    // Then
    assertThat(table.currentSnapshot().summary()).containsEntry("total-delete-files", "1");
    assertThat(TargetCompaction.mayNeedCompaction(table.currentSnapshot(), 8)).isTrue();
  }
}
