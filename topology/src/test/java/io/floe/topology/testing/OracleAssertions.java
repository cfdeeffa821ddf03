package io.floe.topology.testing;

import static org.assertj.core.api.Assertions.fail;

import io.floe.topology.oracle.Oracle;
import org.apache.iceberg.Table;

/** Test assertions over the {@link Oracle}. */
public final class OracleAssertions {

  private OracleAssertions() {}

  /** Asserts that the target equals the view evaluated from scratch on the source snapshot. */
  public static void assertMatches(Table target, Table source, long snapshotId, String viewQuery) {
    Oracle.difference(target, source, snapshotId, viewQuery)
        .ifPresent(difference -> fail(difference));
  }
}
