package io.floe.topology.view.sql;

import org.apache.calcite.sql.validate.SqlAbstractConformance;

/**
 * Calcite's SQL conformance set to Trino's behaviour where it matters for views: GROUP BY may name
 * output positions ({@code GROUP BY 1, 2}) and output aliases, {@code %} and {@code !=} are
 * allowed, and every non-aggregated output column must be grouped (Babel's lenient, MySQL-style
 * grouping would let a view pick an arbitrary row).
 */
final class TrinoConformance extends SqlAbstractConformance {

  static final TrinoConformance INSTANCE = new TrinoConformance();

  private TrinoConformance() {}

  @Override
  public boolean isGroupByOrdinal() {
    return true;
  }

  @Override
  public boolean isGroupByAlias() {
    return true;
  }

  @Override
  public boolean isNonStrictGroupBy() {
    return false;
  }

  @Override
  public boolean isPercentRemainderAllowed() {
    return true;
  }

  @Override
  public boolean isBangEqualAllowed() {
    return true;
  }
}
