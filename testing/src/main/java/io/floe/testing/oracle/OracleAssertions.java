package io.floe.testing.oracle;

import static org.assertj.core.api.Assertions.fail;

import org.apache.iceberg.Table;

/** Test assertions over the {@link Oracle}. */
public final class OracleAssertions {

  private OracleAssertions() {}

  /**
   * Asserts that the target equals the view evaluated from scratch on the source snapshot. The
   * query names the source as its catalog does ({@link Table#name()}, {@code lake.market.trades}).
   */
  public static void assertMatches(Table target, Table source, long snapshotId, String viewQuery) {
    Oracle.difference(target, source, source.name(), snapshotId, viewQuery)
        .ifPresent(difference -> fail(difference));
  }
}
