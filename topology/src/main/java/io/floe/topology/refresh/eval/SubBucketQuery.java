package io.floe.topology.refresh.eval;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TrinoFunctions;
import io.floe.topology.view.ViewPlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;

/**
 * A view's query with its bucket cut finer ({@link Bucketing#subBuckets}): the same aggregates over
 * the same rows, grouped by the sub-bucket where the view groups by the bucket. A view that keeps
 * partial states keeps them per sub-bucket (DESIGN §5): the states of this query's groups, which
 * merge into the view's groups of the bucket that holds their sub-bucket.
 */
public final class SubBucketQuery {

  /** Per bound plan, as {@link CompiledQuery#of} caches its compiled form. */
  private static final Cache<ViewPlan, Optional<CompiledQuery>> COMPILED =
      Caffeine.newBuilder().weakKeys().build();

  private SubBucketQuery() {}

  /**
   * The query over sub-buckets of a view that keeps partial states; empty when it keeps none, when
   * its bucket has no sub-buckets, or when the bucket is used otherwise than as a group key (a
   * filter or an aggregate's argument must see the bucket itself, not the sub-bucket).
   *
   * @throws InvalidViewException when the plan uses something Floe cannot evaluate
   */
  public static Optional<CompiledQuery> of(ViewPlan plan) throws InvalidViewException {
    Optional<CompiledQuery> known = COMPILED.getIfPresent(plan);
    if (known != null) {
      return known;
    }
    Optional<CompiledQuery> compiled = compile(plan);
    Optional<CompiledQuery> raced = COMPILED.asMap().putIfAbsent(plan, compiled);
    return raced == null ? compiled : raced;
  }

  private static Optional<CompiledQuery> compile(ViewPlan plan) throws InvalidViewException {
    Optional<Bucketing> finer = plan.bucketing().subBuckets();
    if (CompiledQuery.of(plan).partialStates().isEmpty()
        || finer.isEmpty()
        || !bucketIsOnlyGrouped(plan.relation())) {
      return Optional.empty();
    }
    // Every date_trunc of the bucket column evaluates through the plan's bucketing, and the
    // bucket is only grouped by: the same plan bound to the finer bucketing groups by sub-bucket.
    return Optional.of(
        CompiledQuery.compile(
            new ViewPlan(
                plan.query(),
                plan.bucketColumn(),
                finer.get(),
                plan.sourceSchema(),
                plan.outputSchema(),
                plan.requiredColumns(),
                plan.relation(),
                plan.dimensions())));
  }

  /**
   * Whether {@code date_trunc} appears below the aggregate only as group keys of the projection the
   * aggregate reads, and no aggregate takes such a key as its argument.
   */
  private static boolean bucketIsOnlyGrouped(RelNode relation) {
    Aggregate aggregate = CompiledQuery.aggregateOf(relation, new ArrayList<>());
    Set<Integer> groupKeys = aggregate.getGroupSet().asSet();
    RelNode input = aggregate.getInput();
    for (RelNode node = input;
        !(node instanceof TableScan) && !(node instanceof Join);
        node = node.getInput(0)) {
      List<RexNode> expressions =
          node instanceof Project project
              ? project.getProjects()
              : List.of(((Filter) node).getCondition());
      for (int i = 0; i < expressions.size(); i++) {
        RexNode expression = expressions.get(i);
        if (RexUtil.findOperatorCall(TrinoFunctions.DATE_TRUNC, expression) == null) {
          continue;
        }
        boolean grouped =
            node == input
                && node instanceof Project
                && groupKeys.contains(i)
                && CompiledExpressions.isDateTruncOfColumn(expression);
        if (!grouped || isAggregated(aggregate, i)) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean isAggregated(Aggregate aggregate, int input) {
    for (AggregateCall call : aggregate.getAggCallList()) {
      if (call.getArgList().contains(input) || call.filterArg == input) {
        return true;
      }
    }
    return false;
  }
}
