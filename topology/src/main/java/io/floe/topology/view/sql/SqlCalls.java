package io.floe.topology.view.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.util.SqlBasicVisitor;

/** Finds calls in a parsed query: the one walk the parser's and the binder's checks share. */
final class SqlCalls {

  private SqlCalls() {}

  /** Every call in {@code node} that {@code match} accepts, in visiting order. */
  static List<SqlCall> find(SqlNode node, Predicate<SqlCall> match) {
    return collect(node, match, call -> true);
  }

  /**
   * The calls in {@code node} that {@code match} accepts, in visiting order, without looking inside
   * them or inside the calls {@code opaque} accepts.
   */
  static List<SqlCall> findOutermost(
      SqlNode node, Predicate<SqlCall> match, Predicate<SqlCall> opaque) {
    return collect(node, match, call -> !match.test(call) && !opaque.test(call));
  }

  private static List<SqlCall> collect(
      SqlNode node, Predicate<SqlCall> match, Predicate<SqlCall> descend) {
    List<SqlCall> found = new ArrayList<>();
    node.accept(
        new SqlBasicVisitor<Void>() {
          @Override
          public Void visit(SqlCall call) {
            if (match.test(call)) {
              found.add(call);
            }
            return descend.test(call) ? super.visit(call) : null;
          }
        });
    return found;
  }
}
