package io.floe.topology.refresh.eval.agg;

import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.LongKind;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import io.floe.topology.view.sql.TrinoOperatorTable;
import java.util.Arrays;
import java.util.function.Supplier;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.sql.SqlAggFunction;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The state of one aggregate over all groups of a partial aggregation, in primitive arrays indexed
 * by group id where the aggregate and its input types allow it (count, sum of integers and doubles,
 * min and max of integers, temporal values and doubles, min_by and max_by ordered by such a value),
 * and one {@link Accumulators.Accumulator} per group otherwise. Either way the semantics are those
 * of {@link Accumulators}, and partial states merge exactly.
 */
final class AggregateStates {

  private AggregateStates() {}

  /** One aggregate's state for every group of a partial aggregation. */
  interface State {
    /** Makes room for groups {@code [0, groups)}. */
    void grow(int groups);

    /** Adds rows {@code [0, n)} of a batch; {@code groups[i]} is row i's group, or -1 to skip. */
    void add(int[] groups, int n, Vector[] input);

    /** Folds in another partial state of the same aggregate: its group g is this group map[g]. */
    void merge(State other, int[] map, int otherGroups);

    Object result(int group);
  }

  /** Chooses the state of an aggregate call over an input row of the given column types. */
  static Supplier<State> factory(
      AggregateCall call, SqlTypeName[] inputTypes, Supplier<Accumulators.Accumulator> boxed) {
    if (call.isDistinct() || call.filterArg >= 0) {
      return () -> new Boxed(boxed, call);
    }
    SqlAggFunction function = call.getAggregation();
    // Trino's own aggregates first, as Accumulators does: their kinds say nothing.
    SqlKind kind =
        function == TrinoOperatorTable.ARBITRARY
            ? SqlKind.MIN
            : function == TrinoOperatorTable.COUNT_IF
                    || function == TrinoOperatorTable.APPROX_DISTINCT
                    || function == TrinoOperatorTable.APPROX_PERCENTILE
                ? SqlKind.OTHER_FUNCTION
                : function.getKind();
    SqlTypeName result = call.getType().getSqlTypeName();
    if (kind == SqlKind.COUNT) {
      int[] args = call.getArgList().stream().mapToInt(Integer::intValue).toArray();
      return () -> new Count(args);
    }
    if ((kind == SqlKind.SUM || kind == SqlKind.SUM0) && call.getArgList().size() == 1) {
      int arg = call.getArgList().get(0);
      boolean zeroWhenEmpty = kind == SqlKind.SUM0;
      if (result == SqlTypeName.BIGINT || result == SqlTypeName.INTEGER) {
        return () -> new SumLong(arg, result == SqlTypeName.INTEGER, zeroWhenEmpty);
      }
      if (result == SqlTypeName.DOUBLE && isNumeric(inputTypes[arg])) {
        return () -> new SumDouble(arg, zeroWhenEmpty);
      }
    }
    if (kind == SqlKind.MIN || kind == SqlKind.MAX) {
      int arg = call.getArgList().get(0);
      boolean min = kind == SqlKind.MIN;
      LongKind longKind = Vectors.longKind(inputTypes[arg]);
      if (longKind != null) {
        return () -> new MinMaxLong(arg, min, longKind);
      }
      if (inputTypes[arg] == SqlTypeName.DOUBLE) {
        return () -> new MinMaxDouble(arg, min);
      }
    }
    if ((kind == SqlKind.ARG_MIN || kind == SqlKind.ARG_MAX) && call.getArgList().size() == 2) {
      int value = call.getArgList().get(0);
      int key = call.getArgList().get(1);
      boolean min = kind == SqlKind.ARG_MIN;
      if (Vectors.longKind(inputTypes[key]) != null) {
        LongKind valueKind = Vectors.longKind(inputTypes[value]);
        if (valueKind != null) {
          return () -> new ByLong(value, key, min, valueKind);
        }
        if (inputTypes[value] == SqlTypeName.DOUBLE) {
          return () -> new ByDouble(value, key, min);
        }
      }
    }
    return () -> new Boxed(boxed, call);
  }

  private static boolean isNumeric(SqlTypeName type) {
    return switch (type) {
      case TINYINT, SMALLINT, INTEGER, BIGINT, DOUBLE -> true;
      default -> false;
    };
  }

  private static int capacity(int current, int groups) {
    int n = Math.max(current, 64);
    while (n < groups) {
      n *= 2;
    }
    return n;
  }

  /** count(*) and count(x, ...): rows whose arguments are all non-null. */
  static final class Count implements State {
    private final int[] args;
    private long[] counts = new long[0];

    Count(int[] args) {
      this.args = args;
    }

    @Override
    public void grow(int groups) {
      if (groups > counts.length) {
        counts = Arrays.copyOf(counts, capacity(counts.length, groups));
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      rows:
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g < 0) {
          continue;
        }
        for (int arg : args) {
          if (input[arg].isNull(i)) {
            continue rows;
          }
        }
        counts[g]++;
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      long[] o = ((Count) other).counts;
      for (int g = 0; g < otherGroups; g++) {
        counts[map[g]] += o[g];
      }
    }

    @Override
    public Object result(int group) {
      return counts[group];
    }
  }

  /** sum of integers, exact with overflow checks. */
  static final class SumLong implements State {
    private final int arg;
    private final boolean intResult;
    private final boolean zeroWhenEmpty;
    private long[] sums = new long[0];
    private boolean[] seen = new boolean[0];

    SumLong(int arg, boolean intResult, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.intResult = intResult;
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    public void grow(int groups) {
      if (groups > sums.length) {
        int n = capacity(sums.length, groups);
        sums = Arrays.copyOf(sums, n);
        seen = Arrays.copyOf(seen, n);
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !v.isNull(i)) {
          sums[g] = Math.addExact(sums[g], v.getLong(i));
          seen[g] = true;
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      SumLong o = (SumLong) other;
      for (int g = 0; g < otherGroups; g++) {
        int t = map[g];
        sums[t] = Math.addExact(sums[t], o.sums[g]);
        seen[t] |= o.seen[g];
      }
    }

    @Override
    public Object result(int group) {
      if (!seen[group] && !zeroWhenEmpty) {
        return null;
      }
      return intResult ? (Object) (int) sums[group] : (Object) sums[group];
    }
  }

  /**
   * sum of doubles, Neumaier-compensated as in {@link Accumulators.Neumaier}, and with its IEEE
   * infinities and NaN.
   */
  static final class SumDouble implements State {
    private final int arg;
    private final boolean zeroWhenEmpty;
    private double[] sums = new double[0];
    private double[] compensations = new double[0];
    private boolean[] seen = new boolean[0];

    SumDouble(int arg, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    public void grow(int groups) {
      if (groups > sums.length) {
        int n = capacity(sums.length, groups);
        sums = Arrays.copyOf(sums, n);
        compensations = Arrays.copyOf(compensations, n);
        seen = Arrays.copyOf(seen, n);
      }
    }

    private void add(int g, double x) {
      double sum = sums[g];
      double t = sum + x;
      compensations[g] += Accumulators.Neumaier.error(sum, x, t);
      sums[g] = t;
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !v.isNull(i)) {
          add(g, v.getDouble(i));
          seen[g] = true;
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      SumDouble o = (SumDouble) other;
      for (int g = 0; g < otherGroups; g++) {
        int t = map[g];
        add(t, o.sums[g]);
        add(t, o.compensations[g]);
        seen[t] |= o.seen[g];
      }
    }

    @Override
    public Object result(int group) {
      if (!seen[group] && !zeroWhenEmpty) {
        return null;
      }
      return sums[group] + compensations[group];
    }
  }

  /** min and max of integers, dates, times and timestamps. */
  static final class MinMaxLong implements State {
    private final int arg;
    private final boolean min;
    private final LongKind kind;
    private long[] best = new long[0];
    private boolean[] seen = new boolean[0];

    MinMaxLong(int arg, boolean min, LongKind kind) {
      this.arg = arg;
      this.min = min;
      this.kind = kind;
    }

    @Override
    public void grow(int groups) {
      if (groups > best.length) {
        int n = capacity(best.length, groups);
        best = Arrays.copyOf(best, n);
        seen = Arrays.copyOf(seen, n);
      }
    }

    private void offer(int g, long v) {
      if (!seen[g] || (min ? v < best[g] : v > best[g])) {
        best[g] = v;
        seen[g] = true;
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !v.isNull(i)) {
          offer(g, v.getLong(i));
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      MinMaxLong o = (MinMaxLong) other;
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          offer(map[g], o.best[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      if (!seen[group]) {
        return null;
      }
      return kind == LongKind.INT ? (Object) (int) best[group] : (Object) best[group];
    }
  }

  /** min and max of doubles, in {@link Double#compare}'s order like {@code Double.compareTo}. */
  static final class MinMaxDouble implements State {
    private final int arg;
    private final boolean min;
    private double[] best = new double[0];
    private boolean[] seen = new boolean[0];

    MinMaxDouble(int arg, boolean min) {
      this.arg = arg;
      this.min = min;
    }

    @Override
    public void grow(int groups) {
      if (groups > best.length) {
        int n = capacity(best.length, groups);
        best = Arrays.copyOf(best, n);
        seen = Arrays.copyOf(seen, n);
      }
    }

    private void offer(int g, double v) {
      if (!seen[g]) {
        best[g] = v;
        seen[g] = true;
        return;
      }
      int c = Double.compare(v, best[g]);
      if (min ? c < 0 : c > 0) {
        best[g] = v;
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !v.isNull(i)) {
          offer(g, v.getDouble(i));
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      MinMaxDouble o = (MinMaxDouble) other;
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          offer(map[g], o.best[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      return seen[group] ? (Object) best[group] : null;
    }
  }

  /**
   * min_by and max_by ordered by an integer or temporal key: rows with a null key are ignored; on a
   * tie of the key a non-null value wins, then the smallest (min_by) or largest (max_by) value.
   */
  private abstract static class By implements State {
    final int value;
    final int key;
    final boolean min;
    long[] keys = new long[0];
    boolean[] seen = new boolean[0];
    boolean[] valueNull = new boolean[0];

    By(int value, int key, boolean min) {
      this.value = value;
      this.key = key;
      this.min = min;
    }

    @Override
    public void grow(int groups) {
      if (groups > keys.length) {
        int n = capacity(keys.length, groups);
        keys = Arrays.copyOf(keys, n);
        seen = Arrays.copyOf(seen, n);
        valueNull = Arrays.copyOf(valueNull, n);
        growValues(n);
      }
    }

    abstract void growValues(int n);

    /** Compares a candidate value with group g's value, both non-null. */
    abstract int compareValue(int g, Vector values, int row);

    abstract void setValue(int g, Vector values, int row);

    final void offer(int g, long k, Vector values, int row) {
      boolean isNull = values.isNull(row);
      if (!seen[g] || (min ? k < keys[g] : k > keys[g])) {
        seen[g] = true;
        keys[g] = k;
        valueNull[g] = isNull;
        if (!isNull) {
          setValue(g, values, row);
        }
      } else if (k == keys[g] && !isNull) {
        if (valueNull[g]) {
          valueNull[g] = false;
          setValue(g, values, row);
        } else {
          int c = compareValue(g, values, row);
          if (min ? c < 0 : c > 0) {
            setValue(g, values, row);
          }
        }
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector k = input[key];
      Vector v = input[value];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !k.isNull(i)) {
          offer(g, k.getLong(i), v, i);
        }
      }
    }
  }

  static final class ByDouble extends By {
    private double[] values = new double[0];

    ByDouble(int value, int key, boolean min) {
      super(value, key, min);
    }

    @Override
    void growValues(int n) {
      values = Arrays.copyOf(values, n);
    }

    @Override
    int compareValue(int g, Vector v, int row) {
      return Double.compare(v.getDouble(row), values[g]);
    }

    @Override
    void setValue(int g, Vector v, int row) {
      values[g] = v.getDouble(row);
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      ByDouble o = (ByDouble) other;
      Vectors.DoubleVector one = new Vectors.DoubleVector();
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          if (o.valueNull[g]) {
            one.setNull(0);
          } else {
            one.set(0, o.values[g]);
          }
          offer(map[g], o.keys[g], one, 0);
        }
      }
    }

    @Override
    public Object result(int group) {
      return !seen[group] || valueNull[group] ? null : (Object) values[group];
    }
  }

  static final class ByLong extends By {
    private final LongKind kind;
    private long[] values = new long[0];

    ByLong(int value, int key, boolean min, LongKind kind) {
      super(value, key, min);
      this.kind = kind;
    }

    @Override
    void growValues(int n) {
      values = Arrays.copyOf(values, n);
    }

    @Override
    int compareValue(int g, Vector v, int row) {
      return Long.compare(v.getLong(row), values[g]);
    }

    @Override
    void setValue(int g, Vector v, int row) {
      values[g] = v.getLong(row);
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      ByLong o = (ByLong) other;
      Vectors.LongVector one = new Vectors.LongVector(kind);
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          if (o.valueNull[g]) {
            one.setNull(0);
          } else {
            one.set(0, o.values[g]);
          }
          offer(map[g], o.keys[g], one, 0);
        }
      }
    }

    @Override
    public Object result(int group) {
      if (!seen[group] || valueNull[group]) {
        return null;
      }
      return kind == LongKind.INT ? (Object) (int) values[group] : (Object) values[group];
    }
  }

  /**
   * Any other aggregate (avg, stddev, count(DISTINCT), approx_percentile, FILTER, ...): one
   * accumulator per group, fed boxed rows of the columns it reads.
   */
  static final class Boxed implements State {
    private final Supplier<Accumulators.Accumulator> factory;
    private final int[] columns;
    private Accumulators.Accumulator[] accumulators = new Accumulators.Accumulator[0];
    private Object[] row = new Object[0];

    Boxed(Supplier<Accumulators.Accumulator> factory, AggregateCall call) {
      this.factory = factory;
      java.util.TreeSet<Integer> read = new java.util.TreeSet<>(call.getArgList());
      if (call.filterArg >= 0) {
        read.add(call.filterArg);
      }
      this.columns = read.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public void grow(int groups) {
      if (groups > accumulators.length) {
        accumulators = Arrays.copyOf(accumulators, capacity(accumulators.length, groups));
      }
    }

    private Accumulators.Accumulator of(int g) {
      Accumulators.Accumulator a = accumulators[g];
      if (a == null) {
        a = factory.get();
        accumulators[g] = a;
      }
      return a;
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      if (row.length != input.length) {
        row = new Object[input.length];
      }
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g < 0) {
          continue;
        }
        for (int c : columns) {
          row[c] = input[c].get(i);
        }
        of(g).add(row);
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      Boxed o = (Boxed) other;
      for (int g = 0; g < otherGroups; g++) {
        if (o.accumulators[g] != null) {
          of(map[g]).merge(o.accumulators[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      return of(group).result();
    }
  }
}
