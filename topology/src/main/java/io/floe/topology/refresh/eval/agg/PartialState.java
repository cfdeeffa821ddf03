package io.floe.topology.refresh.eval.agg;

import io.floe.topology.refresh.eval.vector.Vectors;
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.Function;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The partial state of one aggregate of one group, stored apart from the view's rows so that rows a
 * source appends merge into it exactly (DESIGN §5, the delta path): a few typed parts per group
 * (for {@code avg}: the compensated sum and the count), merged part by part, and the aggregate's
 * value computed from them as a recompute would. Parts are native values (see {@link
 * io.floe.topology.refresh.eval.expr.CalciteValues}); a group no row reached has no parts (null).
 */
public interface PartialState {

  /** The type of a part: the aggregate's own result type, a double or a long. */
  enum Kind {
    VALUE,
    DOUBLE,
    LONG
  }

  /**
   * One part of the state.
   *
   * @param suffix what the part's column adds to the aggregate's name, empty for a {@link
   *     Kind#VALUE}
   */
  record Part(String suffix, Kind kind) {}

  /** The parts, in the order of the arrays this state reads and writes. */
  List<Part> parts();

  /** The parts of group {@code group} of an aggregation's state of this aggregate. */
  Object[] of(AggregateStates.State state, int group);

  /** The parts of the rows of both states, each over other rows of the same group. */
  Object[] merge(Object[] stored, Object[] delta);

  /** The aggregate's value over the rows the parts summarize. */
  Object result(Object[] parts);

  /**
   * The state of an aggregate whose value is its own state (count, sum of integers, min, max ...),
   * merged by {@code merge}.
   */
  static PartialState value(BinaryOperator<Object> merge) {
    return new Value(merge);
  }

  /**
   * The state of {@code call} when Floe keeps one for it apart from its value, or null: {@code sum}
   * of a double result (a real sum, rounded to a real per group, keeps recomputing), {@code avg} of
   * a double or real result, {@code stddev} and {@code variance} in all their forms (a decimal
   * average, a DISTINCT or FILTER clause keep recomputing), {@code min_by} and {@code max_by} of an
   * integer, temporal or double value ordered by an integer or temporal key.
   *
   * @param inputTypes the types of the aggregate's input columns, which its arguments index
   */
  static PartialState of(AggregateCall call, SqlTypeName[] inputTypes) {
    if (call.isDistinct() || call.filterArg >= 0) {
      return null;
    }
    SqlKind by = call.getAggregation().getKind();
    if ((by == SqlKind.ARG_MIN || by == SqlKind.ARG_MAX)
        && Vectors.longKind(inputTypes[call.getArgList().get(1)]) != null
        && (Vectors.longKind(inputTypes[call.getArgList().get(0)]) != null
            || inputTypes[call.getArgList().get(0)] == SqlTypeName.DOUBLE)) {
      // The typed states of min_by and max_by: ordered by a key held as a long.
      return new By(by == SqlKind.ARG_MIN);
    }
    RelDataType type = call.getType();
    SqlKind kind = call.getAggregation().getKind();
    if ((kind == SqlKind.SUM || kind == SqlKind.SUM0)
        && type.getSqlTypeName() == SqlTypeName.DOUBLE) {
      return new DoubleSum();
    }
    if (kind == SqlKind.AVG && type.getSqlTypeName() != SqlTypeName.DECIMAL) {
      return average(type);
    }
    if (kind == SqlKind.STDDEV_SAMP
        || kind == SqlKind.STDDEV_POP
        || kind == SqlKind.VAR_SAMP
        || kind == SqlKind.VAR_POP) {
      return moments(kind, type);
    }
    return null;
  }

  /**
   * Two compensated sums, each the first two parts {@code (sum, compensation)} of its state, merged
   * as a recompute merges its workers' sums: the merged {@code (sum, compensation)}.
   */
  private static Object[] mergeSums(Object[] stored, Object[] delta) {
    AggregateStates.Neumaier sum =
        AggregateStates.Neumaier.of((Double) stored[0], (Double) stored[1]);
    sum.merge(AggregateStates.Neumaier.of((Double) delta[0], (Double) delta[1]));
    return new Object[] {sum.sumPart(), sum.compensationPart()};
  }

  /** An aggregate's value, merged by the aggregate's own rule. */
  record Value(BinaryOperator<Object> merge) implements PartialState {
    private static final List<Part> PARTS = List.of(new Part("", Kind.VALUE));

    @Override
    public List<Part> parts() {
      return PARTS;
    }

    @Override
    public Object[] of(AggregateStates.State state, int group) {
      return new Object[] {state.result(group)};
    }

    @Override
    public Object[] merge(Object[] stored, Object[] delta) {
      return new Object[] {merge.apply(stored[0], delta[0])};
    }

    @Override
    public Object result(Object[] parts) {
      return parts[0];
    }
  }

  /**
   * A state kept, in the recompute, in one accumulator per group ({@code avg}, {@code stddev},
   * {@code variance}): its parts as the accumulator gives them, merged and finished by the rules
   * the recompute merges its workers' accumulators by.
   *
   * @param parts the parts
   * @param none the parts over no rows, for a group no row reached
   * @param partial the parts of an accumulator
   * @param merger the parts of two sets of parts over other rows of the same group
   * @param finisher the aggregate's value of a set of parts
   */
  record Accumulated(
      List<Part> parts,
      List<Object> none,
      Function<AggregateStates.Accumulator, Object[]> partial,
      BinaryOperator<Object[]> merger,
      Function<Object[], Object> finisher)
      implements PartialState {

    @Override
    public Object[] of(AggregateStates.State state, int group) {
      AggregateStates.Accumulator accumulator = ((AggregateStates.Boxed) state).accumulator(group);
      return accumulator == null ? none.toArray() : partial.apply(accumulator);
    }

    @Override
    public Object[] merge(Object[] stored, Object[] delta) {
      return merger.apply(stored, delta);
    }

    @Override
    public Object result(Object[] parts) {
      return finisher.apply(parts);
    }
  }

  /**
   * avg: the Neumaier-compensated sum as its two doubles and the count of values; merged as the
   * recompute merges the workers' accumulators, so a folded average equals a recomputed one up to
   * the order of the terms.
   */
  static Accumulated average(RelDataType type) {
    return new Accumulated(
        List.of(
            new Part("sum", Kind.DOUBLE),
            new Part("compensation", Kind.DOUBLE),
            new Part("count", Kind.LONG)),
        List.of(0.0, 0.0, 0L),
        accumulator -> ((AggregateStates.Average) accumulator).doublePartial(),
        (stored, delta) -> {
          Object[] sum = mergeSums(stored, delta);
          return new Object[] {sum[0], sum[1], (Long) stored[2] + (Long) delta[2]};
        },
        parts ->
            (Long) parts[2] == 0
                ? null
                : AggregateStates.Average.doubleResult(
                    type, (Double) parts[0] + (Double) parts[1], (Long) parts[2]));
  }

  /**
   * sum of a double result: the Neumaier-compensated sum as its two doubles, both null when no row
   * had a value; merged as the recompute merges its workers' sums. A refresh's own sum of a group
   * arrives rounded to one double (its compensation folded in), so a folded sum equals a recomputed
   * one up to the order of the terms and one rounding per fold, far inside the oracle's relative
   * 1e-9; the stored compensation keeps what a rounded value would lose (1.0 folded twice into 1e16
   * gives 1e16 + 2, as a recompute does).
   */
  record DoubleSum() implements PartialState {
    private static final List<Part> PARTS =
        List.of(new Part("sum", Kind.DOUBLE), new Part("compensation", Kind.DOUBLE));

    @Override
    public List<Part> parts() {
      return PARTS;
    }

    @Override
    public Object[] of(AggregateStates.State state, int group) {
      Object sum = state.result(group);
      return sum == null ? new Object[2] : new Object[] {sum, 0.0};
    }

    @Override
    public Object[] merge(Object[] stored, Object[] delta) {
      if (stored[0] == null || delta[0] == null) {
        return stored[0] == null ? delta : stored;
      }
      return mergeSums(stored, delta);
    }

    @Override
    public Object result(Object[] parts) {
      return parts[0] == null
          ? null
          : AggregateStates.Neumaier.of((Double) parts[0], (Double) parts[1]).sum();
    }
  }

  /**
   * stddev and variance: the count, mean and M2 of Welford's algorithm, merged by Chan, Golub and
   * LeVeque's pairwise update, as a recompute merges its workers' accumulators.
   */
  static Accumulated moments(SqlKind kind, RelDataType type) {
    return new Accumulated(
        List.of(
            new Part("count", Kind.LONG),
            new Part("mean", Kind.DOUBLE),
            new Part("m2", Kind.DOUBLE)),
        List.of(0L, 0.0, 0.0),
        accumulator -> ((AggregateStates.Moments) accumulator).partial(),
        (stored, delta) -> {
          AggregateStates.Moments merged = AggregateStates.Moments.of(kind, type, stored);
          merged.merge(AggregateStates.Moments.of(kind, type, delta));
          return merged.partial();
        },
        parts -> AggregateStates.Moments.of(kind, type, parts).result());
  }

  /**
   * min_by and max_by: the extreme key (as the typed state holds it, a long) and the value that won
   * at it, merged by the recompute's tie rule: on equal keys a non-null value wins, then the
   * smaller (min_by) or larger (max_by) value.
   */
  record By(boolean min) implements PartialState {
    private static final List<Part> PARTS =
        List.of(new Part("key", Kind.LONG), new Part("value", Kind.VALUE));

    @Override
    public List<Part> parts() {
      return PARTS;
    }

    @Override
    public Object[] of(AggregateStates.State state, int group) {
      return ((AggregateStates.By) state).partial(group);
    }

    @Override
    public Object[] merge(Object[] stored, Object[] delta) {
      if (stored[0] == null || delta[0] == null) {
        return stored[0] == null ? delta : stored;
      }
      int byKey = Long.compare((Long) delta[0], (Long) stored[0]);
      if (byKey != 0) {
        return (min ? byKey < 0 : byKey > 0) ? delta : stored;
      }
      if (delta[1] == null || stored[1] == null) {
        return stored[1] == null ? delta : stored;
      }
      int byValue = AggregateStates.compareNullsFirst(delta[1], stored[1]);
      return (min ? byValue < 0 : byValue > 0) ? delta : stored;
    }

    @Override
    public Object result(Object[] parts) {
      return parts[1];
    }
  }
}
