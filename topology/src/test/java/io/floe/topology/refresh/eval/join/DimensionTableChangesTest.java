package io.floe.topology.refresh.eval.join;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** {@link DimensionTable#changedKeysSince}: the join keys whose rows differ between snapshots. */
class DimensionTableChangesTest {

  /** A table of (symbol, sector, listed) rows keyed by symbol, holding symbol and sector only. */
  private static DimensionTable table(Object[]... rows) {
    DimensionTable.Builder builder =
        new DimensionTable.Builder(
            "symbols",
            3,
            new int[] {0},
            new int[] {0, 1},
            new Type[] {Types.StringType.get(), Types.StringType.get()},
            1L << 20,
            "bound");
    for (Object[] row : rows) {
      builder.add(row);
    }
    return builder.build();
  }

  private static Object[] row(String symbol, String sector, long listed) {
    return new Object[] {symbol, sector, listed};
  }

  @Test
  void shouldFindNoChangeInRowsRewrittenInAnotherOrderOrInAColumnNotHeld() {
    DimensionTable before = table(row("AAPL", "tech", 1), row("IBM", "services", 2));
    DimensionTable after = table(row("IBM", "services", 3), row("AAPL", "tech", 4));

    assertThat(after.changedKeysSince(before, 10)).hasValue(java.util.Set.of());
  }

  @Test
  void shouldFindTheKeysWhoseRowsWereUpdatedAddedOrRemoved() {
    DimensionTable before =
        table(row("AAPL", "tech", 1), row("IBM", "services", 2), row("MSFT", "tech", 3));
    DimensionTable after =
        table(row("AAPL", "tech", 1), row("IBM", "hardware", 2), row("ORCL", "software", 5));

    assertThat(after.changedKeysSince(before, 10))
        .hasValue(java.util.Set.of(List.of("IBM"), List.of("MSFT"), List.of("ORCL")));
  }

  @Test
  void shouldFindAKeyWhoseDuplicateRowWasAddedOrNullKeysNever() {
    DimensionTable before = table(row("AAPL", "tech", 1), row(null, "none", 2));
    DimensionTable after =
        table(row("AAPL", "tech", 1), row("AAPL", "tech", 2), row(null, "other", 2));

    assertThat(after.changedKeysSince(before, 10)).hasValue(java.util.Set.of(List.of("AAPL")));
  }

  @Test
  void shouldGiveUpBeyondTheLimitOfChangedKeys() {
    DimensionTable before = table();
    DimensionTable after = table(row("AAPL", "tech", 1), row("IBM", "services", 2));

    assertThat(after.changedKeysSince(before, 1)).isEmpty();
    assertThat(after.changedKeysSince(before, 2)).hasValueSatisfying(k -> assertThat(k).hasSize(2));
  }
}
