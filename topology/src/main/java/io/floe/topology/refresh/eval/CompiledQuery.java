package io.floe.topology.refresh.eval;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.refresh.eval.agg.AggregateInput;
import io.floe.topology.refresh.eval.agg.AggregateStates;
import io.floe.topology.refresh.eval.agg.GroupedQuery;
import io.floe.topology.refresh.eval.agg.PartialState;
import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import io.floe.topology.refresh.eval.join.JoinStep;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TrinoFunctions;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.calcite.adapter.java.JavaTypeFactory;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.JoinInfo;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * A view query compiled for evaluation: the steps from a source row to the aggregate's input
 * (WHERE, projections, the bucket), the hash aggregation per bucket and group keys, and the steps
 * from an aggregated group to an output row (HAVING, expressions over aggregates).
 *
 * <p>Rows are arrays of native values (see {@link
 * io.floe.topology.refresh.eval.expr.CalciteValues}); a source row has one slot per column of the
 * source schema, in schema order, of which only the plan's required columns need to be filled.
 * Output rows have one slot per column of the plan's output schema.
 */
public final class CompiledQuery implements GroupedQuery {

  private final List<Step> before;
  private final int[] groupKeys;
  private final List<Supplier<AggregateStates.State>> aggregates;
  private final List<Step> after;
  private final int sourceWidth;
  private final Comparator<Object[]> outputOrder;
  private final JavaTypeFactory typeFactory;
  private final List<Merge> merges;
  private final PartialStates partialStates;
  private final AggregateInput aggregateInput;
  private final List<JoinStep> joins;

  private CompiledQuery(
      List<Step> before,
      int[] groupKeys,
      List<Supplier<AggregateStates.State>> aggregates,
      List<Step> after,
      int sourceWidth,
      Comparator<Object[]> outputOrder,
      JavaTypeFactory typeFactory,
      List<Merge> merges,
      PartialStates partialStates,
      AggregateInput aggregateInput,
      List<JoinStep> joins) {
    this.partialStates = partialStates;
    this.aggregateInput = aggregateInput;
    this.joins = joins;
    this.before = before;
    this.groupKeys = groupKeys;
    this.aggregates = aggregates;
    this.after = after;
    this.sourceWidth = sourceWidth;
    this.outputOrder = outputOrder;
    this.typeFactory = typeFactory;
    this.merges = merges;
  }

  /**
   * How one output column of a decomposable view combines the rows of the same group computed over
   * two disjoint sets of source rows.
   */
  public enum Merge {
    /** A group key: both rows hold the same value. */
    KEY,
    /**
     * count, count_if, sum of integers and decimals: the sum of both, null (no value) counting as
     * nothing.
     */
    ADD,
    /** min, bool_and, arbitrary (which Floe evaluates as min): the smaller. */
    MIN,
    /** max, bool_or: the larger. */
    MAX;

    /** The value over both sets of rows of two values of this column over each. */
    public Object apply(Object existing, Object delta) {
      if (this == KEY) {
        return existing;
      }
      // An aggregate is null when no row had a value: the other side's value stands alone.
      if (existing == null || delta == null) {
        return existing == null ? delta : existing;
      }
      return switch (this) {
        case ADD -> add(existing, delta);
        case MIN -> AggregateStates.compareNullsFirst(existing, delta) <= 0 ? existing : delta;
        case MAX -> AggregateStates.compareNullsFirst(existing, delta) >= 0 ? existing : delta;
        case KEY -> throw new AssertionError();
      };
    }

    /** Exact sums only: floating-point sums are never merged ({@link #mergeOf}). */
    private static Object add(Object a, Object b) {
      if (a instanceof Long x) {
        return Math.addExact(x, ((Number) b).longValue());
      }
      if (a instanceof Integer x) {
        return Math.addExact(x, ((Number) b).intValue());
      }
      if (a instanceof BigDecimal x) {
        return x.add((BigDecimal) b);
      }
      throw new IllegalStateException("Cannot add values of " + a.getClass().getSimpleName());
    }
  }

  /**
   * How a view that is not decomposable but whose every aggregate merges keeps the aggregates'
   * partial states apart from its rows (DESIGN §5): every group key is an output column, and every
   * output column a group key or built from aggregates (HAVING filters on them too); appends fold
   * into the stored states, from which the group rows and then the view's rows are computed, by the
   * same steps above the aggregate that a recompute runs ({@link #finishPartials}).
   *
   * @param states how each aggregate's state is kept, in aggregate order
   * @param outputs the output column of each position of a group row: the group keys in GROUP BY
   *     order, then the aggregates; -1 for an aggregate that is no output column by itself (a part
   *     of an expression, or read only by HAVING)
   * @param columns the state table's column of each position of a group row, or for an aggregate of
   *     several parts what each part's column name starts with: the output column's name, and for
   *     an aggregate that is no output column by itself the name of the first output column built
   *     from it with its ordinal among those ({@code vwap__1}, {@code vwap__2} for {@code sum(price
   *     * quantity) / sum(quantity) AS vwap}), or {@code having__<n>}
   * @param valueTypes the Iceberg type of each aggregate's value, in aggregate order; every list is
   *     immutable, made once where the query is compiled
   */
  public record PartialStates(
      List<PartialState> states,
      List<Integer> outputs,
      List<String> columns,
      List<Type> valueTypes) {

    /** How many group keys (the bucket among them) lead a group row. */
    public int keys() {
      return outputs.size() - states.size();
    }
  }

  /**
   * Each plan compiled once, for as long as the plan is in use: a plan is bound once per view and
   * source schema ({@link io.floe.topology.view.CompiledView#bind}) and dropped with its view, and
   * weak keys compare by identity, so a plan's entry lives exactly as long as its binding.
   */
  private static final Cache<ViewPlan, CompiledQuery> COMPILED =
      Caffeine.newBuilder().weakKeys().build();

  /**
   * The compiled form of a bound view's plan, compiled (Calcite code generation) the first time it
   * is asked for; a plan that fails to compile is not remembered.
   *
   * @throws InvalidViewException when the plan uses something Floe cannot evaluate
   */
  public static CompiledQuery of(ViewPlan plan) throws InvalidViewException {
    CompiledQuery known = COMPILED.getIfPresent(plan);
    if (known != null) {
      return known;
    }
    CompiledQuery compiled = compile(plan);
    CompiledQuery raced = COMPILED.asMap().putIfAbsent(plan, compiled);
    return raced == null ? compiled : raced;
  }

  /**
   * Compiles the relational plan of a bound view.
   *
   * @throws InvalidViewException when the plan uses something Floe cannot evaluate
   */
  public static CompiledQuery compile(ViewPlan plan) throws InvalidViewException {
    try {
      return compileUnchecked(plan);
    } catch (IllegalArgumentException e) {
      throw new InvalidViewException(ViewRule.INVALID_QUERY, 0, 0, e.getMessage());
    }
  }

  private static CompiledQuery compileUnchecked(ViewPlan plan) {
    RelNode node = plan.relation();
    RexBuilder rexBuilder = node.getCluster().getRexBuilder();
    Bucketing bucketing = plan.bucketing();

    List<RelNode> above = new ArrayList<>();
    Aggregate aggregate = aggregateOf(node, above);
    above.forEach(CompiledQuery::requireProjectOrFilter);
    if (aggregate.getGroupType() != Aggregate.Group.SIMPLE) {
      throw new IllegalArgumentException("GROUPING SETS, ROLLUP and CUBE are not supported");
    }
    List<RelNode> below = new ArrayList<>();
    node = aggregate.getInput();
    while (!(node instanceof TableScan) && !(node instanceof Join)) {
      if (node instanceof Aggregate) {
        throw new IllegalArgumentException(
            "SELECT DISTINCT and nested aggregations are not supported");
      }
      requireProjectOrFilter(node);
      below.add(node);
      node = node.getInput(0);
    }
    Collections.reverse(above);
    Collections.reverse(below);
    List<JoinStep> joins = joinSteps(node);
    int sourceWidth =
        joins.isEmpty() ? plan.sourceSchema().columns().size() : node.getRowType().getFieldCount();

    RelNode aggregateInput = aggregate.getInput();
    AggregateInput input = AggregateInput.of(aggregate, below, bucketing);
    List<Supplier<AggregateStates.State>> aggregates = new ArrayList<>();
    for (AggregateCall call : aggregate.getAggCallList()) {
      aggregates.add(
          AggregateStates.factory(
              call, input.types(), column -> constantOf(aggregateInput, column)));
    }
    List<Merge> merges = merges(aggregate, above);
    return new CompiledQuery(
        compileSteps(below, bucketing, rexBuilder),
        aggregate.getGroupSet().asList().stream().mapToInt(Integer::intValue).toArray(),
        aggregates,
        compileSteps(above, bucketing, rexBuilder),
        sourceWidth,
        outputOrder(plan),
        (JavaTypeFactory) rexBuilder.getTypeFactory(),
        merges,
        merges == null && longEnoughForStates(bucketing)
            ? partialStates(plan, aggregate, above, input.types())
            : null,
        input,
        joins);
  }

  /**
   * The joins of a left-deep join tree over the fact table's scan, the first dimension's first; a
   * joined row is the fact row followed by each dimension's row. Empty for a plan over one table.
   */
  private static List<JoinStep> joinSteps(RelNode bottom) {
    List<JoinStep> steps = new ArrayList<>();
    RelNode node = bottom;
    while (node instanceof Join join) {
      if (join.getJoinType() != JoinRelType.INNER && join.getJoinType() != JoinRelType.LEFT) {
        throw new IllegalArgumentException("cannot evaluate a " + join.getJoinType() + " join");
      }
      if (!(join.getRight() instanceof TableScan)) {
        throw new IllegalArgumentException("cannot evaluate a join whose right side is no table");
      }
      JoinInfo info = join.analyzeCondition();
      if (!info.isEqui() || info.leftKeys.isEmpty()) {
        throw new IllegalArgumentException(
            "cannot evaluate a join on " + join.getCondition() + ": only equalities of columns");
      }
      steps.add(
          0,
          new JoinStep(
              join.getJoinType() == JoinRelType.INNER,
              join.getLeft().getRowType().getFieldCount(),
              join.getRight().getRowType().getFieldCount(),
              info.leftKeys.toIntArray(),
              info.rightKeys.toIntArray()));
      node = join.getLeft();
    }
    if (!(node instanceof TableScan)) {
      throw new IllegalArgumentException(
          "cannot evaluate " + node.getRelTypeName() + " in a view query");
    }
    return List.copyOf(steps);
  }

  /**
   * The merge of each output column when the view is decomposable, or null: every output column is
   * a group key or one aggregate whose value over a union of rows follows from its values over the
   * parts, every group key is in the output, and nothing filters groups (no HAVING).
   */
  private static List<Merge> merges(Aggregate aggregate, List<RelNode> above) {
    int keys = aggregate.getGroupCount();
    List<Merge> byInput = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      byInput.add(Merge.KEY);
    }
    for (AggregateCall call : aggregate.getAggCallList()) {
      Merge merge = mergeOf(call);
      if (merge == null) {
        return null;
      }
      byInput.add(merge);
    }
    if (above.isEmpty()) {
      return List.copyOf(byInput);
    }
    if (above.size() != 1 || !(above.get(0) instanceof Project project)) {
      return null;
    }
    List<Merge> merges = new ArrayList<>();
    BitSet keysInOutput = new BitSet();
    for (RexNode expression : project.getProjects()) {
      if (!(expression instanceof org.apache.calcite.rex.RexInputRef ref)) {
        return null;
      }
      merges.add(byInput.get(ref.getIndex()));
      if (ref.getIndex() < keys) {
        keysInOutput.set(ref.getIndex());
      }
    }
    return keysInOutput.cardinality() == keys ? List.copyOf(merges) : null;
  }

  /** The shortest bucket whose view keeps partial states ({@link #longEnoughForStates}). */
  public static final long MIN_STATE_BUCKET_SECONDS = 3600;

  /**
   * Whether the view's buckets are long enough for partial states to pay: an hour or more (a day's
   * or a week's recompute reads the whole bucket however small the change). A shorter bucket's
   * recompute reads little more than its dirty rows (the pages of its dirty minutes), while a state
   * table doubles a refresh's writes and commits and slows a full refresh several times (the {@code
   * backfill} bench's 1-minute bars ran at 0.19x DuckDB's rows/s through states).
   */
  private static boolean longEnoughForStates(Bucketing bucketing) {
    Granularity granularity = bucketing.granularity();
    return !granularity.isTimeOfDay() || granularity.seconds() >= MIN_STATE_BUCKET_SECONDS;
  }

  /**
   * How the view keeps its aggregates' partial states, or null when it cannot: an aggregate has no
   * state Floe keeps, or a group key is not in the output.
   */
  private static PartialStates partialStates(
      ViewPlan plan,
      Aggregate aggregate,
      List<RelNode> above,
      org.apache.calcite.sql.type.SqlTypeName[] inputTypes) {
    List<PartialState> states = new ArrayList<>();
    List<Type> valueTypes = new ArrayList<>();
    for (AggregateCall call : aggregate.getAggCallList()) {
      PartialState state = PartialState.of(call, inputTypes);
      Merge merge = state == null ? mergeOf(call) : null;
      Optional<Type> type = ViewPlan.storedType(call.getType());
      if ((state == null && merge == null) || type.isEmpty()) {
        return null;
      }
      states.add(state == null ? PartialState.value(merge::apply) : state);
      valueTypes.add(type.get());
    }
    int keys = aggregate.getGroupCount();
    OutputLineage lineage = OutputLineage.of(keys + states.size(), above);
    List<String> names = new ArrayList<>();
    plan.outputSchema().columns().forEach(column -> names.add(column.name()));
    List<Integer> outputs = new ArrayList<>();
    List<String> columns = new ArrayList<>();
    Map<String, Integer> parts = new HashMap<>();
    for (int position = 0; position < keys + states.size(); position++) {
      int output = lineage.outputOf(position);
      if (output < 0 && position < keys) {
        return null;
      }
      outputs.add(output);
      if (output >= 0) {
        columns.add(names.get(output));
        continue;
      }
      int reader = lineage.firstReaderOf(position);
      String base = reader < 0 ? "having" : names.get(reader);
      String column = base + "__" + parts.merge(base, 1, Integer::sum);
      if (names.contains(column)) {
        return null;
      }
      columns.add(column);
    }
    return new PartialStates(
        List.copyOf(states), List.copyOf(outputs), List.copyOf(columns), List.copyOf(valueTypes));
  }

  /**
   * Which output columns the positions of a group row (group keys, then aggregates) reach through
   * the projections and filters above the aggregate: as the column itself (a bare reference), or as
   * a part of an expression.
   */
  private record OutputLineage(int[] bare, List<BitSet> reads) {

    /** The lineage of a group row of {@code width} positions, {@code above} from the top down. */
    static OutputLineage of(int width, List<RelNode> above) {
      int[] bare = new int[width];
      List<BitSet> reads = new ArrayList<>();
      for (int i = 0; i < width; i++) {
        bare[i] = i;
        BitSet self = new BitSet();
        self.set(i);
        reads.add(self);
      }
      for (int n = above.size() - 1; n >= 0; n--) {
        // A filter (HAVING) keeps the columns as they are.
        if (above.get(n) instanceof Project project) {
          List<RexNode> projects = project.getProjects();
          int[] nextBare = new int[projects.size()];
          List<BitSet> nextReads = new ArrayList<>();
          for (int column = 0; column < projects.size(); column++) {
            RexNode expression = projects.get(column);
            nextBare[column] = expression instanceof RexInputRef ref ? bare[ref.getIndex()] : -1;
            BitSet read = new BitSet();
            for (int input : RelOptUtil.InputFinder.bits(expression)) {
              read.or(reads.get(input));
            }
            nextReads.add(read);
          }
          bare = nextBare;
          reads = nextReads;
        }
      }
      return new OutputLineage(bare, reads);
    }

    /** The first output column that is {@code position} itself, or -1. */
    int outputOf(int position) {
      for (int column = 0; column < bare.length; column++) {
        if (bare[column] == position) {
          return column;
        }
      }
      return -1;
    }

    /** The first output column computed from {@code position}, or -1. */
    int firstReaderOf(int position) {
      for (int column = 0; column < reads.size(); column++) {
        if (reads.get(column).get(position)) {
          return column;
        }
      }
      return -1;
    }
  }

  private static Merge mergeOf(AggregateCall call) {
    if (call.isDistinct()) {
      return null;
    }
    if (call.getAggregation() == TrinoFunctions.COUNT_IF) {
      return Merge.ADD;
    }
    if (call.getAggregation() == TrinoFunctions.ARBITRARY) {
      return Merge.MIN;
    }
    if (call.getAggregation() == TrinoFunctions.APPROX_DISTINCT
        || call.getAggregation() == TrinoFunctions.APPROX_PERCENTILE) {
      return null;
    }
    return switch (call.getAggregation().getKind()) {
      // A real or double sum is kept in the target as one rounded value, without its
      // compensation: folding into it would round once per append where a recompute sums in
      // compensated double precision and rounds once (1e16 + 1.0 + 1.0 folds to 1e16).
      case SUM, SUM0 -> isFloatingPoint(call.getType()) ? null : Merge.ADD;
      case COUNT -> Merge.ADD;
      case MIN -> Merge.MIN;
      case MAX -> Merge.MAX;
      default -> null;
    };
  }

  private static boolean isFloatingPoint(org.apache.calcite.rel.type.RelDataType type) {
    return type.getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.REAL
        || type.getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.FLOAT
        || type.getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.DOUBLE;
  }

  /**
   * How to merge each output column, when the view is decomposable (see {@link Merge}); empty
   * otherwise. A decomposable view can fold the rows a source appended into its target rows without
   * re-reading the rest of their buckets.
   */
  public java.util.Optional<List<Merge>> decomposition() {
    return java.util.Optional.ofNullable(merges);
  }

  /**
   * How the view keeps its aggregates' partial states apart from its rows, when it is not
   * decomposable but every aggregate merges (see {@link PartialStates}); empty otherwise.
   */
  public java.util.Optional<PartialStates> partialStates() {
    return java.util.Optional.ofNullable(partialStates);
  }

  /**
   * The output rows of groups given by their partial states (rows as {@link
   * io.floe.topology.refresh.eval.agg.PartialAggregation#partials} makes them): each aggregate's
   * value computed from its parts, then as {@link #finish}.
   */
  public List<Object[]> finishPartials(List<Object[]> groups) {
    int keys = partialStates.keys();
    List<PartialState> states = partialStates.states();
    List<Object[]> rows = new ArrayList<>(groups.size());
    for (Object[] group : groups) {
      Object[] row = new Object[group.length];
      System.arraycopy(group, 0, row, 0, keys);
      for (int a = 0; a < states.size(); a++) {
        row[keys + a] = states.get(a).result((Object[]) group[keys + a]);
      }
      rows.add(row);
    }
    return finish(rows, newContext());
  }

  /**
   * Whether appends to the view's source are folded in (the delta path) rather than recomputing
   * their buckets: the view is decomposable (appends fold into its target rows), or it keeps
   * partial states ({@link #keepsPartialStates}).
   */
  public static boolean foldsAppends(ViewPlan plan) {
    List<RelNode> above = new ArrayList<>();
    return merges(aggregateOf(plan.relation(), above), above) != null || keepsPartialStates(plan);
  }

  /**
   * Whether the view keeps its aggregates' partial states in a state table, into which appends fold
   * ({@link #partialStates()}); false for a plan Floe cannot evaluate.
   */
  public static boolean keepsPartialStates(ViewPlan plan) {
    try {
      return of(plan).partialStates().isPresent();
    } catch (InvalidViewException e) {
      return false;
    }
  }

  /** The plan's aggregate; the nodes above it, from the top down, are added to {@code above}. */
  static Aggregate aggregateOf(RelNode top, List<RelNode> above) {
    RelNode node = top;
    while (!(node instanceof Aggregate)) {
      if (node.getInputs().size() != 1) {
        throw new IllegalArgumentException(
            "cannot evaluate " + node.getRelTypeName() + " in a view query");
      }
      above.add(node);
      node = node.getInput(0);
    }
    return (Aggregate) node;
  }

  private static void requireProjectOrFilter(RelNode node) {
    if (!(node instanceof Project) && !(node instanceof Filter)) {
      throw new IllegalArgumentException(
          "cannot evaluate " + node.getRelTypeName() + " in a view query");
    }
  }

  private static List<Step> compileSteps(
      List<RelNode> nodes, Bucketing bucketing, RexBuilder rexBuilder) {
    List<Step> steps = new ArrayList<>();
    for (RelNode node : nodes) {
      RelNodeInput input = new RelNodeInput(node);
      if (node instanceof Filter filter) {
        CompiledExpressions condition =
            CompiledExpressions.compile(
                List.of(filter.getCondition()), input.type(), bucketing, rexBuilder);
        steps.add((row, context) -> condition.test(row, context) ? row : null);
      } else {
        Project project = (Project) node;
        CompiledExpressions projections =
            CompiledExpressions.compile(project.getProjects(), input.type(), bucketing, rexBuilder);
        steps.add(projections::evaluate);
      }
    }
    return steps;
  }

  private record RelNodeInput(RelNode node) {
    org.apache.calcite.rel.type.RelDataType type() {
      return node.getInput(0).getRowType();
    }
  }

  /** The literal a column of {@code input} always holds, or null. */
  private static Object constantOf(RelNode input, int column) {
    if (input instanceof Project project) {
      RexNode e = project.getProjects().get(column);
      if (e instanceof RexLiteral literal) {
        return literal.getValueAs(BigDecimal.class);
      }
    }
    return null;
  }

  /** Output rows sort by bucket, then by the group keys in GROUP BY order, nulls first. */
  private static Comparator<Object[]> outputOrder(ViewPlan plan) {
    List<Integer> keys = new ArrayList<>();
    keys.add(position(plan, plan.bucketOutput()));
    for (String key : plan.groupKeys()) {
      keys.add(position(plan, key));
    }
    int[] positions = keys.stream().mapToInt(Integer::intValue).toArray();
    return (a, b) -> {
      for (int p : positions) {
        int c = AggregateStates.compareNullsFirst(a[p], b[p]);
        if (c != 0) {
          return c;
        }
      }
      return 0;
    };
  }

  private static int position(ViewPlan plan, String column) {
    List<Types.NestedField> columns = plan.outputSchema().columns();
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(column)) {
        return i;
      }
    }
    throw new IllegalStateException("No output column " + column);
  }

  /**
   * Width of the source rows this query consumes: the number of source schema columns, and with
   * joins those of every dimension's schema after them (a joined row).
   */
  @Override
  public int sourceWidth() {
    return sourceWidth;
  }

  /** The view's joins of dimension tables to its source, in join order; empty without any. */
  public List<JoinStep> joins() {
    return joins;
  }

  @Override
  public AggregateInput aggregateInput() {
    return aggregateInput;
  }

  @Override
  public int[] groupKeys() {
    return groupKeys;
  }

  @Override
  public AggregateStates.State newState(int aggregate) {
    return aggregates.get(aggregate).get();
  }

  @Override
  public CompiledExpressions.RowContext newContext() {
    return new CompiledExpressions.RowContext(typeFactory);
  }

  @Override
  public Object[] aggregateInputOf(Object[] sourceRow, CompiledExpressions.RowContext context) {
    Object[] row = sourceRow;
    for (Step step : before) {
      row = step.apply(row, context);
      if (row == null) {
        return null;
      }
    }
    return row;
  }

  @Override
  public List<Object[]> finish(List<Object[]> groups, CompiledExpressions.RowContext context) {
    List<Object[]> out = new ArrayList<>(groups.size());
    for (Object[] group : groups) {
      Object[] row = group;
      for (Step step : after) {
        row = step.apply(row, context);
        if (row == null) {
          break;
        }
      }
      if (row != null) {
        out.add(row);
      }
    }
    out.sort(outputOrder);
    return out;
  }

  /** One row transformation; returns null to drop the row. */
  @FunctionalInterface
  private interface Step {
    Object[] apply(Object[] row, CompiledExpressions.RowContext context);
  }
}
