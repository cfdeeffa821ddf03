package io.floe.topology.view.sql;

import io.floe.topology.view.TrinoFunctions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.calcite.plan.Contexts;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.plan.hep.HepPlanner;
import org.apache.calcite.plan.hep.HepProgram;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.rules.CoreRules;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.tools.RelBuilder;
import org.apache.calcite.tools.RelBuilderFactory;
import org.apache.calcite.util.ImmutableBitSet;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * The relational plan of a view query in the one shape the engine evaluates and that a flat query
 * has: projections and filters over the source scan, the aggregate, and the outer query's HAVING
 * and projection above it. Subqueries in FROM and WITH queries convert to a Project and Filter
 * each; Calcite's rules merge them into the flat query's nodes.
 */
final class FlatRelation {

  /**
   * Builds the merged nodes without simplifying their expressions: the flat query's plan keeps them
   * as written ({@code CAST(100):DOUBLE}, not {@code 100.0E0}), and so does the merged one.
   */
  private static final RelBuilderFactory AS_WRITTEN =
      RelBuilder.proto(Contexts.of(RelBuilder.Config.DEFAULT.withSimplify(false)));

  /**
   * Pushes filters below projections, then merges adjacent filters and adjacent projections and
   * drops the projections that pass every column through: a chain of subqueries ends as the one
   * Filter and Project a flat query converts to. A flat query's plan has no filter over a
   * projection and no two adjacent filters or projections below its aggregate, so the rules leave
   * that part of it as the converter built it.
   */
  private static final HepProgram FLATTEN =
      HepProgram.builder()
          .addRuleCollection(
              List.of(
                  CoreRules.FILTER_PROJECT_TRANSPOSE
                      .config
                      .withRelBuilderFactory(AS_WRITTEN)
                      .toRule(),
                  CoreRules.FILTER_MERGE.config.withRelBuilderFactory(AS_WRITTEN).toRule(),
                  CoreRules.PROJECT_MERGE.config.withRelBuilderFactory(AS_WRITTEN).toRule(),
                  CoreRules.PROJECT_REMOVE.config.withRelBuilderFactory(AS_WRITTEN).toRule()))
          .build();

  private FlatRelation() {}

  /** The flat form of {@code relation}. */
  static RelNode flatten(RelNode relation) {
    HepPlanner planner = new HepPlanner(FLATTEN);
    planner.setRoot(relation);
    return planner.findBestExp();
  }

  /**
   * The source columns that the plan's bucketed group keys truncate: for each group key computed as
   * {@code DATE_TRUNC(unit, column)} (every bucket form binds to one), the source column it reads,
   * traced down through projections. The plan is Calcite's reading of the query, so this is what a
   * bucket means whatever the names on the way (scopes, column lists) say.
   */
  static Set<String> bucketedSourceColumns(RelNode relation, Schema sourceSchema) {
    Set<String> columns = new LinkedHashSet<>();
    for (int index : bucketedIndexes(relation)) {
      if (index >= 0) {
        columns.add(sourceSchema.columns().get(index).name());
      }
    }
    return columns;
  }

  /**
   * Whether a bucketed group key truncates a column of a dimension table rather than of the fact
   * table: dirty buckets come from the fact files' statistics, so the bucket must be a fact column.
   */
  static boolean bucketReadsDimension(RelNode relation) {
    return bucketedIndexes(relation).contains(DIMENSION);
  }

  private static Set<Integer> bucketedIndexes(RelNode relation) {
    Aggregate aggregate = aggregateOf(relation);
    Set<Integer> indexes = new LinkedHashSet<>();
    if (!(aggregate.getInput() instanceof Project keys)) {
      return indexes;
    }
    for (int key : aggregate.getGroupSet()) {
      if (keys.getProjects().get(key) instanceof RexCall call
          && call.getOperator() == TrinoFunctions.DATE_TRUNC
          && call.getOperands().get(1) instanceof RexInputRef column) {
        indexes.add(sourceIndex(keys.getInput(), column.getIndex()));
      }
    }
    return indexes;
  }

  /**
   * The joins of the plan's left-deep join tree below its projections and filters, the join that
   * adds the first dimension first; empty for a plan over one table. Each join's left input is the
   * fact table's scan or the join before it, its right input the scan of its dimension, so a joined
   * row is the fact row followed by each dimension's row, in this order.
   */
  static List<Join> joins(RelNode relation) {
    List<Join> joins = new ArrayList<>();
    RelNode node = bottom(relation);
    while (node instanceof Join join) {
      joins.add(0, join);
      node = join.getLeft();
    }
    return joins;
  }

  /** The node under the projections and filters below the aggregate: a scan or a join. */
  private static RelNode bottom(RelNode relation) {
    RelNode node = aggregateOf(relation).getInput();
    while (node instanceof Project || node instanceof Filter) {
      node = node.getInput(0);
    }
    return node;
  }

  /** The view's one aggregate, below the outer query's HAVING and projection. */
  private static Aggregate aggregateOf(RelNode relation) {
    RelNode node = relation;
    while (!(node instanceof Aggregate)) {
      node = node.getInput(0);
    }
    return (Aggregate) node;
  }

  /** {@link #sourceIndex} of a field that passes through a dimension's column. */
  private static final int DIMENSION = -2;

  /**
   * The fact scan's field that field {@code index} of {@code node} passes through, {@link
   * #DIMENSION} when it is a dimension's column, or -1 when it is computed.
   */
  private static int sourceIndex(RelNode node, int index) {
    while (!(node instanceof TableScan)) {
      if (node instanceof Join join) {
        if (index >= join.getLeft().getRowType().getFieldCount()) {
          return DIMENSION;
        }
        node = join.getLeft();
        continue;
      }
      if (node instanceof Project project) {
        if (!(project.getProjects().get(index) instanceof RexInputRef ref)) {
          return -1;
        }
        index = ref.getIndex();
      } else if (!(node instanceof Filter)) {
        return -1;
      }
      node = node.getInput(0);
    }
    return index;
  }

  /**
   * The source columns the plan reads below its aggregate, in source schema order: the group keys
   * and aggregate arguments, traced down through projections, and every column a filter tests.
   */
  static List<String> sourceColumnsRead(RelNode relation, Schema sourceSchema) {
    ImmutableBitSet columns = columnsReadAboveJoins(relation);
    for (Join join : joins(relation)) {
      columns = columns.union(RelOptUtil.InputFinder.bits(join.getCondition()));
    }
    int width = sourceSchema.columns().size();
    List<String> read = new ArrayList<>();
    List<Types.NestedField> fields = sourceSchema.columns();
    for (int i : columns) {
      if (i < width) {
        read.add(fields.get(i).name());
      }
    }
    return read;
  }

  /**
   * The columns of a dimension the plan reads above its joins (what it contributes to the rows), in
   * its schema's order: {@code offset} is the position of its first column in a joined row.
   */
  static List<String> dimensionColumnsRead(RelNode relation, int offset, Schema schema) {
    ImmutableBitSet columns = columnsReadAboveJoins(relation);
    List<String> read = new ArrayList<>();
    List<Types.NestedField> fields = schema.columns();
    for (int i : columns) {
      if (i >= offset && i < offset + fields.size()) {
        read.add(fields.get(i - offset).name());
      }
    }
    return read;
  }

  /**
   * The fields of the bottom node ({@link #bottom}: the source scan or the joined row) that the
   * plan reads below its aggregate: the group keys and aggregate arguments, traced down through
   * projections, and every column a filter tests.
   */
  private static ImmutableBitSet columnsReadAboveJoins(RelNode relation) {
    Aggregate aggregate = aggregateOf(relation);
    ImmutableBitSet.Builder used = ImmutableBitSet.builder();
    used.addAll(aggregate.getGroupSet());
    for (AggregateCall call : aggregate.getAggCallList()) {
      used.addAll(call.getArgList());
      if (call.filterArg >= 0) {
        used.set(call.filterArg);
      }
      used.addAll(call.collation.getKeys());
    }
    ImmutableBitSet columns = used.build();
    RelNode node = aggregate.getInput();
    while (!(node instanceof TableScan) && !(node instanceof Join)) {
      if (node instanceof Project project) {
        ImmutableBitSet.Builder below = ImmutableBitSet.builder();
        for (int i : columns) {
          below.addAll(RelOptUtil.InputFinder.bits(project.getProjects().get(i)));
        }
        columns = below.build();
      } else if (node instanceof Filter filter) {
        columns = columns.union(RelOptUtil.InputFinder.bits(filter.getCondition()));
      } else {
        // A node the engine cannot evaluate, which compiling the plan rejects: it may read all.
        columns =
            columns.union(ImmutableBitSet.range(node.getInput(0).getRowType().getFieldCount()));
      }
      node = node.getInput(0);
    }
    return columns;
  }
}
