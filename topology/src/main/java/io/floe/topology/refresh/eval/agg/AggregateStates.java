package io.floe.topology.refresh.eval.agg;

import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.LongKind;
import io.floe.topology.refresh.eval.vector.Vectors.ObjectVector;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import io.floe.topology.view.TrinoFunctions;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.sql.SqlAggFunction;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The aggregate functions of view queries, each implemented once, on native values (see {@link
 * io.floe.topology.refresh.eval.expr.CalciteValues}): one {@link State} per aggregate holds it for
 * every group of a partial aggregation, in primitive arrays indexed by group id where the function
 * and its input types allow (count, count_if, sum, min and max of integers, temporal values and
 * doubles, min_by and max_by ordered by such a value), in object arrays for other types, and for
 * the functions with no typed state (avg, stddev and variance, approx_distinct, approx_percentile)
 * in one {@link Accumulator} per group behind the one fallback, {@link Boxed}. {@code DISTINCT} and
 * {@code FILTER} wrap any state. {@link #factory} is the one dispatch. Partial states merge
 * exactly.
 *
 * <p>Where Trino leaves a choice open, Floe makes it deterministic so that recomputing a bucket
 * always yields the same row: {@code min_by}/{@code max_by} break ties on the key by the smallest
 * (resp. largest) value, {@code arbitrary} is the smallest value, {@code approx_distinct} and
 * {@code approx_percentile} are exact. Floating-point sums use compensated summation so that they
 * hardly depend on the order in which files are read.
 */
public final class AggregateStates {

  private AggregateStates() {}

  /** One aggregate's state for every group of a partial aggregation. */
  public interface State {
    /** Makes room for groups {@code [0, groups)}. */
    void grow(int groups);

    /** Adds rows {@code [0, n)} of a batch; {@code groups[i]} is row i's group, or -1 to skip. */
    void add(int[] groups, int n, Vector[] input);

    /** Folds in another partial state of the same aggregate: its group g is this group map[g]. */
    void merge(State other, int[] map, int otherGroups);

    Object result(int group);
  }

  /**
   * The running state of one group of an aggregate without a typed state, fed boxed rows of the
   * aggregate's input.
   */
  interface Accumulator {
    void add(Object[] row);

    /**
     * Folds in the state of an accumulator of the same aggregate over other rows of the same group,
     * as if this one had seen those rows too.
     */
    void merge(Accumulator other);

    Object result();
  }

  /**
   * The states of {@code call}, whose arguments index the aggregate's input row, of the given
   * column types.
   *
   * @param constantOf the constant value of an argument column, for {@code approx_percentile}'s
   *     percentage, or null when the column is not constant
   * @throws IllegalArgumentException for an aggregate Floe does not implement
   */
  public static Supplier<State> factory(
      AggregateCall call, SqlTypeName[] inputTypes, IntFunction<Object> constantOf) {
    Supplier<State> base = plain(call, inputTypes, constantOf);
    int[] args = call.getArgList().stream().mapToInt(Integer::intValue).toArray();
    Supplier<State> distinct = call.isDistinct() ? () -> new Distinct(base.get(), args) : base;
    int filter = call.filterArg;
    if (filter < 0) {
      return distinct;
    }
    return () -> new Filtered(distinct.get(), filter);
  }

  private static Supplier<State> plain(
      AggregateCall call, SqlTypeName[] inputTypes, IntFunction<Object> constantOf) {
    SqlAggFunction function = call.getAggregation();
    List<Integer> args = call.getArgList();
    RelDataType type = call.getType();
    SqlTypeName result = type.getSqlTypeName();
    // Trino's own aggregates first: their kinds say nothing.
    if (function == TrinoFunctions.COUNT_IF) {
      int arg = args.get(0);
      return () -> new CountIf(arg);
    }
    if (function == TrinoFunctions.ARBITRARY) {
      return minMax(args.get(0), true, inputTypes);
    }
    if (function == TrinoFunctions.APPROX_DISTINCT) {
      int arg = args.get(0);
      return boxed(args, () -> new DistinctCount(arg));
    }
    if (function == TrinoFunctions.APPROX_PERCENTILE) {
      int value = args.get(0);
      int weight = args.size() == 3 ? args.get(1) : -1;
      Object percentage = constantOf.apply(args.get(args.size() - 1));
      if (!(percentage instanceof Number number)) {
        throw new IllegalArgumentException("approx_percentile needs a constant percentage");
      }
      double p = number.doubleValue();
      return boxed(args, () -> new Percentile(value, weight, p, type));
    }
    return switch (function.getKind()) {
      case COUNT -> {
        int[] counted = args.stream().mapToInt(Integer::intValue).toArray();
        yield () -> new Count(counted);
      }
      case SUM, SUM0 -> {
        int arg = args.get(0);
        boolean zeroWhenEmpty = function.getKind() == SqlKind.SUM0;
        yield switch (result) {
          case TINYINT, SMALLINT, INTEGER ->
              () -> new LongState(arg, LongCombine.SUM, true, zeroWhenEmpty);
          case BIGINT -> () -> new LongState(arg, LongCombine.SUM, false, zeroWhenEmpty);
          case DECIMAL -> () -> new SumDecimal(arg, zeroWhenEmpty);
          case REAL, FLOAT -> () -> new SumDouble(arg, true, zeroWhenEmpty);
          default -> () -> new SumDouble(arg, false, zeroWhenEmpty);
        };
      }
      case AVG -> {
        int arg = args.get(0);
        yield boxed(args, () -> new Average(arg, type));
      }
      case MIN -> minMax(args.get(0), true, inputTypes);
      case MAX -> minMax(args.get(0), false, inputTypes);
      case ARG_MIN -> by(args.get(0), args.get(1), true, inputTypes);
      case ARG_MAX -> by(args.get(0), args.get(1), false, inputTypes);
      case STDDEV_SAMP, STDDEV_POP, VAR_SAMP, VAR_POP -> {
        int arg = args.get(0);
        SqlKind kind = function.getKind();
        yield boxed(args, () -> new Moments(arg, kind, type));
      }
      default ->
          throw new IllegalArgumentException(
              "aggregate "
                  + function.getName().toLowerCase(java.util.Locale.ROOT)
                  + " is not supported");
    };
  }

  /** min, max, bool_and (min of booleans), bool_or (max), and arbitrary (min). */
  private static Supplier<State> minMax(int arg, boolean min, SqlTypeName[] inputTypes) {
    LongKind longKind = Vectors.longKind(inputTypes[arg]);
    if (longKind != null) {
      LongCombine combine = min ? LongCombine.MIN : LongCombine.MAX;
      boolean intResult = longKind == LongKind.INT;
      return () -> new LongState(arg, combine, intResult, false);
    }
    if (inputTypes[arg] == SqlTypeName.DOUBLE) {
      return () -> new MinMaxDouble(arg, min);
    }
    return () -> new MinMaxObject(arg, min);
  }

  /** min_by and max_by. */
  private static Supplier<State> by(int value, int key, boolean min, SqlTypeName[] inputTypes) {
    if (Vectors.longKind(inputTypes[key]) != null) {
      LongKind valueKind = Vectors.longKind(inputTypes[value]);
      if (valueKind != null) {
        return () -> new ByLong(value, key, min, valueKind);
      }
      if (inputTypes[value] == SqlTypeName.DOUBLE) {
        return () -> new ByDouble(value, key, min);
      }
    }
    return () -> new ByObject(value, key, min);
  }

  /** The fallback state of an aggregate without a typed one: an accumulator per group. */
  private static Supplier<State> boxed(List<Integer> args, Supplier<Accumulator> factory) {
    int[] columns = new java.util.TreeSet<>(args).stream().mapToInt(Integer::intValue).toArray();
    return () -> new Boxed(factory, columns);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  public static int compareNullsFirst(Object a, Object b) {
    if (a == null || b == null) {
      return a == null ? (b == null ? 0 : -1) : 1;
    }
    return ((Comparable) a).compareTo(b);
  }

  private static int capacity(int current, int groups) {
    int n = Math.max(current, 64);
    while (n < groups) {
      n *= 2;
    }
    return n;
  }

  /**
   * A state whose groups live in arrays indexed by group id: it grows them all at once, by
   * doubling. Each subclass keeps its own per-row loop, so that no call in it is virtual.
   */
  abstract static class Grouped implements State {
    private int capacity;

    @Override
    public final void grow(int groups) {
      if (groups > capacity) {
        int n = capacity(capacity, groups);
        resize(capacity, n);
        capacity = n;
      }
    }

    /** Copies every per-group array into one of length {@code to}, from one of {@code from}. */
    abstract void resize(int from, int to);

    /** Whether group g has been made room for. */
    final boolean holds(int g) {
      return g < capacity;
    }
  }

  /** A count per group: what is counted is the subclass's. */
  abstract static class Counting extends Grouped {
    long[] counts = new long[0];

    @Override
    void resize(int from, int to) {
      counts = Arrays.copyOf(counts, to);
    }

    @Override
    public final void merge(State other, int[] map, int otherGroups) {
      long[] o = ((Counting) other).counts;
      for (int g = 0; g < otherGroups; g++) {
        counts[map[g]] += o[g];
      }
    }

    @Override
    public final Object result(int group) {
      return counts[group];
    }
  }

  /** count(*) and count(x, ...): rows whose arguments are all non-null. */
  static final class Count extends Counting {
    private final int[] args;

    Count(int[] args) {
      this.args = args;
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
  }

  /** count_if(condition): rows whose condition is true. */
  static final class CountIf extends Counting {
    private final int arg;

    CountIf(int arg) {
      this.arg = arg;
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && Boolean.TRUE.equals(v.get(i))) {
          counts[g]++;
        }
      }
    }
  }

  /** How a {@link LongState} folds a group's next value into the one it holds. */
  enum LongCombine {
    /** sum, exact with overflow checks. */
    SUM,
    MIN,
    MAX;

    long apply(long held, long next) {
      return switch (this) {
        case SUM -> Math.addExact(held, next);
        case MIN -> Math.min(held, next);
        case MAX -> Math.max(held, next);
      };
    }
  }

  /**
   * sum with an integer result, and min and max of integers, dates, times and timestamps: a long
   * per group, with whether a non-null value reached it. Tinyint to integer results are ints.
   */
  static final class LongState extends Grouped {
    private final int arg;
    private final LongCombine combine;
    private final boolean intResult;
    private final boolean zeroWhenEmpty;
    private long[] values = new long[0];
    private boolean[] seen = new boolean[0];

    LongState(int arg, LongCombine combine, boolean intResult, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.combine = combine;
      this.intResult = intResult;
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    void resize(int from, int to) {
      values = Arrays.copyOf(values, to);
      seen = Arrays.copyOf(seen, to);
    }

    private void offer(int g, long v) {
      values[g] = seen[g] ? combine.apply(values[g], v) : v;
      seen[g] = true;
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
      LongState o = (LongState) other;
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          offer(map[g], o.values[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      if (!seen[group] && !zeroWhenEmpty) {
        return null;
      }
      return intResult ? (Object) (int) values[group] : (Object) values[group];
    }
  }

  /**
   * sum as a double (of any numeric input, as {@code Number.doubleValue} converts it),
   * Neumaier-compensated ({@link Neumaier}), with its IEEE infinities and NaN; a real result is the
   * double sum rounded once.
   */
  static final class SumDouble extends Grouped {
    private final int arg;
    private final boolean realResult;
    private final boolean zeroWhenEmpty;
    private double[] sums = new double[0];
    private double[] compensations = new double[0];
    private boolean[] seen = new boolean[0];

    SumDouble(int arg, boolean realResult, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.realResult = realResult;
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    void resize(int from, int to) {
      sums = Arrays.copyOf(sums, to);
      compensations = Arrays.copyOf(compensations, to);
      seen = Arrays.copyOf(seen, to);
    }

    private void add(int g, double x) {
      double sum = sums[g];
      double t = sum + x;
      compensations[g] += Neumaier.error(sum, x, t);
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
      double sum = sums[group] + compensations[group];
      return realResult ? (Object) (float) sum : (Object) sum;
    }
  }

  /** min and max of doubles, in {@link Double#compare}'s order like {@code Double.compareTo}. */
  static final class MinMaxDouble extends Grouped {
    private final int arg;
    private final boolean min;
    private double[] best = new double[0];
    private boolean[] seen = new boolean[0];

    MinMaxDouble(int arg, boolean min) {
      this.arg = arg;
      this.min = min;
    }

    @Override
    void resize(int from, int to) {
      best = Arrays.copyOf(best, to);
      seen = Arrays.copyOf(seen, to);
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
   * tie of the key a non-null value wins, then the smallest (min_by) or largest (max_by) value. The
   * subclass holds the values, in a primitive array of their type.
   */
  abstract static class By extends Grouped {
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
    final void resize(int from, int to) {
      keys = Arrays.copyOf(keys, to);
      seen = Arrays.copyOf(seen, to);
      valueNull = Arrays.copyOf(valueNull, to);
      resizeValues(to);
    }

    abstract void resizeValues(int n);

    /**
     * The partial state {@code (key, value)} of group g: the extreme key and the value that won at
     * it (null when the winning rows' values are null), both null when no row with a key reached g.
     */
    Object[] partial(int g) {
      return holds(g) && seen[g] ? new Object[] {keys[g], result(g)} : new Object[2];
    }

    /** Compares a candidate value with group g's value, both non-null. */
    abstract int compareValue(int g, Vector values, int row);

    abstract void setValue(int g, Vector values, int row);

    /** A vector of one row, to hold another state's value as a candidate row. */
    abstract Vector oneRow();

    /** Sets row 0 of {@code one} (from {@link #oneRow}) to group g's non-null value. */
    abstract void copyValue(int g, Vector one);

    /** Group g's non-null value, as its result. */
    abstract Object valueOf(int g);

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

    @Override
    public final void merge(State other, int[] map, int otherGroups) {
      // The other side's best row competes as one row: the tie rules make the order irrelevant.
      By o = (By) other;
      Vector one = oneRow();
      for (int g = 0; g < otherGroups; g++) {
        if (o.seen[g]) {
          if (o.valueNull[g]) {
            one.setNull(0);
          } else {
            o.copyValue(g, one);
          }
          offer(map[g], o.keys[g], one, 0);
        }
      }
    }

    @Override
    public final Object result(int group) {
      return !seen[group] || valueNull[group] ? null : valueOf(group);
    }
  }

  static final class ByDouble extends By {
    private double[] values = new double[0];

    ByDouble(int value, int key, boolean min) {
      super(value, key, min);
    }

    @Override
    void resizeValues(int n) {
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
    Vector oneRow() {
      return new Vectors.DoubleVector();
    }

    @Override
    void copyValue(int g, Vector one) {
      ((Vectors.DoubleVector) one).set(0, values[g]);
    }

    @Override
    Object valueOf(int g) {
      return values[g];
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
    void resizeValues(int n) {
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
    Vector oneRow() {
      return new Vectors.LongVector(kind);
    }

    @Override
    void copyValue(int g, Vector one) {
      ((Vectors.LongVector) one).set(0, values[g]);
    }

    @Override
    Object valueOf(int g) {
      return kind == LongKind.INT ? (Object) (int) values[g] : (Object) values[g];
    }
  }

  /** sum with a decimal result, exact. */
  static final class SumDecimal extends Grouped {
    private final int arg;
    private final boolean zeroWhenEmpty;
    private BigDecimal[] sums = new BigDecimal[0];
    private boolean[] seen = new boolean[0];

    SumDecimal(int arg, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    void resize(int from, int to) {
      sums = Arrays.copyOf(sums, to);
      Arrays.fill(sums, from, to, BigDecimal.ZERO);
      seen = Arrays.copyOf(seen, to);
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0 && !v.isNull(i)) {
          sums[g] = sums[g].add(toDecimal(v.get(i)));
          seen[g] = true;
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      SumDecimal o = (SumDecimal) other;
      for (int g = 0; g < otherGroups; g++) {
        int t = map[g];
        sums[t] = sums[t].add(o.sums[g]);
        seen[t] |= o.seen[g];
      }
    }

    @Override
    public Object result(int group) {
      return seen[group] || zeroWhenEmpty ? sums[group] : null;
    }
  }

  /** min and max of any other comparable values (strings, decimals, booleans, ...). */
  static final class MinMaxObject extends Grouped {
    private final int arg;
    private final boolean min;
    private Object[] best = new Object[0];

    MinMaxObject(int arg, boolean min) {
      this.arg = arg;
      this.min = min;
    }

    @Override
    void resize(int from, int to) {
      best = Arrays.copyOf(best, to);
    }

    private void offer(int g, Object v) {
      if (best[g] == null) {
        best[g] = v;
        return;
      }
      int c = compareNullsFirst(v, best[g]);
      if (min ? c < 0 : c > 0) {
        best[g] = v;
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector v = input[arg];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0) {
          Object value = v.get(i);
          if (value != null) {
            offer(g, value);
          }
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      Object[] o = ((MinMaxObject) other).best;
      for (int g = 0; g < otherGroups; g++) {
        if (o[g] != null) {
          offer(map[g], o[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      return best[group];
    }
  }

  /**
   * min_by and max_by of any other values or keys: rows with a null key are ignored; on a tie of
   * the key a non-null value wins, then the smallest (min_by) or largest (max_by) value.
   */
  static final class ByObject extends Grouped {
    private final int value;
    private final int key;
    private final boolean min;
    private Object[] keys = new Object[0];
    private Object[] values = new Object[0];

    ByObject(int value, int key, boolean min) {
      this.value = value;
      this.key = key;
      this.min = min;
    }

    @Override
    void resize(int from, int to) {
      keys = Arrays.copyOf(keys, to);
      values = Arrays.copyOf(values, to);
    }

    private void offer(int g, Object k, Object v) {
      if (keys[g] == null) {
        keys[g] = k;
        values[g] = v;
        return;
      }
      int c = compareNullsFirst(k, keys[g]);
      if (c == 0) {
        if (v != null) {
          Object best = values[g];
          if (best == null
              || (min ? compareNullsFirst(v, best) < 0 : compareNullsFirst(v, best) > 0)) {
            values[g] = v;
          }
        }
      } else if (min ? c < 0 : c > 0) {
        keys[g] = k;
        values[g] = v;
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      Vector k = input[key];
      Vector v = input[value];
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g >= 0) {
          Object keyValue = k.get(i);
          if (keyValue != null) {
            offer(g, keyValue, v.get(i));
          }
        }
      }
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      // The other side's best row competes as one row: the tie rules make the order irrelevant.
      ByObject o = (ByObject) other;
      for (int g = 0; g < otherGroups; g++) {
        if (o.keys[g] != null) {
          offer(map[g], o.keys[g], o.values[g]);
        }
      }
    }

    @Override
    public Object result(int group) {
      return values[group];
    }
  }

  /** {@code agg(DISTINCT x, ...)}: only argument tuples a group has not seen reach the delegate. */
  static final class Distinct implements State {
    private final State delegate;
    private final int[] args;
    private final int width;
    private List<Set<List<Object>>> seen = new ArrayList<>();
    private int[] passed = new int[0];

    Distinct(State delegate, int[] args) {
      this.delegate = delegate;
      this.args = args;
      int w = 0;
      for (int arg : args) {
        w = Math.max(w, arg + 1);
      }
      this.width = w;
    }

    @Override
    public void grow(int groups) {
      delegate.grow(groups);
      while (seen.size() < groups) {
        seen.add(new HashSet<>());
      }
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      if (passed.length < n) {
        passed = new int[n];
      }
      for (int i = 0; i < n; i++) {
        int g = groups[i];
        if (g < 0) {
          passed[i] = -1;
          continue;
        }
        Object[] tuple = new Object[args.length];
        for (int a = 0; a < args.length; a++) {
          tuple[a] = input[args[a]].get(i);
        }
        passed[i] = seen.get(g).add(Arrays.asList(tuple)) ? g : -1;
      }
      delegate.add(passed, n, input);
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      // Only the tuples this side has not seen reach the delegate, as rows holding just the tuple.
      Distinct o = (Distinct) other;
      Vector[] row = new Vector[width];
      for (int arg : args) {
        row[arg] = new ObjectVector();
      }
      int[] group = new int[1];
      for (int g = 0; g < otherGroups; g++) {
        Set<List<Object>> mine = seen.get(map[g]);
        for (List<Object> tuple : o.seen.get(g)) {
          if (mine.add(tuple)) {
            for (int a = 0; a < args.length; a++) {
              row[args[a]].set(0, tuple.get(a));
            }
            group[0] = map[g];
            delegate.add(group, 1, row);
          }
        }
      }
    }

    @Override
    public Object result(int group) {
      return delegate.result(group);
    }
  }

  /** {@code agg(...) FILTER (WHERE condition)}: rows whose condition is not true are skipped. */
  static final class Filtered implements State {
    private final State delegate;
    private final int condition;
    private int[] passed = new int[0];

    Filtered(State delegate, int condition) {
      this.delegate = delegate;
      this.condition = condition;
    }

    @Override
    public void grow(int groups) {
      delegate.grow(groups);
    }

    @Override
    public void add(int[] groups, int n, Vector[] input) {
      if (passed.length < n) {
        passed = new int[n];
      }
      Vector c = input[condition];
      for (int i = 0; i < n; i++) {
        passed[i] = groups[i] >= 0 && Boolean.TRUE.equals(c.get(i)) ? groups[i] : -1;
      }
      delegate.add(passed, n, input);
    }

    @Override
    public void merge(State other, int[] map, int otherGroups) {
      delegate.merge(((Filtered) other).delegate, map, otherGroups);
    }

    @Override
    public Object result(int group) {
      return delegate.result(group);
    }
  }

  /**
   * The one fallback: an aggregate without a typed state (avg, stddev and variance,
   * approx_distinct, approx_percentile) keeps one accumulator per group, fed boxed rows of the
   * columns it reads.
   */
  static final class Boxed extends Grouped {
    private final Supplier<Accumulator> factory;
    private final int[] columns;
    private Accumulator[] accumulators = new Accumulator[0];
    private Object[] row = new Object[0];

    Boxed(Supplier<Accumulator> factory, int[] columns) {
      this.factory = factory;
      this.columns = columns;
    }

    /** The accumulator of group g, or null when no row reached it. */
    Accumulator accumulator(int g) {
      return holds(g) ? accumulators[g] : null;
    }

    @Override
    void resize(int from, int to) {
      accumulators = Arrays.copyOf(accumulators, to);
    }

    private Accumulator of(int g) {
      Accumulator a = accumulators[g];
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
          row[c] = input[c] == null ? null : input[c].get(i);
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

  /** avg: a count and a sum, exact for decimals, compensated for every other type. */
  static final class Average implements Accumulator {
    private final int arg;
    private final RelDataType type;
    private long count;
    private BigDecimal decimalSum = BigDecimal.ZERO;
    private final Neumaier doubleSum = new Neumaier();

    Average(int arg, RelDataType type) {
      this.arg = arg;
      this.type = type;
    }

    @Override
    public void add(Object[] row) {
      Object v = row[arg];
      if (v == null) {
        return;
      }
      count++;
      if (type.getSqlTypeName() == SqlTypeName.DECIMAL) {
        decimalSum = decimalSum.add(toDecimal(v));
      } else {
        doubleSum.add(((Number) v).doubleValue());
      }
    }

    @Override
    public void merge(Accumulator other) {
      Average o = (Average) other;
      count += o.count;
      decimalSum = decimalSum.add(o.decimalSum);
      doubleSum.merge(o.doubleSum);
    }

    @Override
    public Object result() {
      if (count == 0) {
        return null;
      }
      return switch (type.getSqlTypeName()) {
        case DECIMAL ->
            decimalSum.divide(
                BigDecimal.valueOf(count), Math.max(type.getScale(), 0), RoundingMode.HALF_UP);
        default -> doubleResult(type, doubleSum.sum(), count);
      };
    }

    /** The average of a double or real result over {@code count} values summing to {@code sum}. */
    static Object doubleResult(RelDataType type, double sum, long count) {
      return type.getSqlTypeName() == SqlTypeName.REAL || type.getSqlTypeName() == SqlTypeName.FLOAT
          ? (Object) (float) (sum / count)
          : (Object) (sum / count);
    }

    /** The partial state {@code (sum, compensation, count)} of a non-decimal average. */
    Object[] doublePartial() {
      return new Object[] {doubleSum.sum, doubleSum.compensation, count};
    }
  }

  private static final class DistinctCount implements Accumulator {
    private final int arg;
    private final Set<Object> seen = new HashSet<>();

    DistinctCount(int arg) {
      this.arg = arg;
    }

    @Override
    public void add(Object[] row) {
      if (row[arg] != null) {
        seen.add(row[arg]);
      }
    }

    @Override
    public void merge(Accumulator other) {
      seen.addAll(((DistinctCount) other).seen);
    }

    @Override
    public Object result() {
      return (long) seen.size();
    }
  }

  /**
   * Exact nearest-rank percentile: the smallest value whose cumulative weight reaches {@code p} of
   * the total weight (every row weighs 1 unless a weight column is given).
   */
  private static final class Percentile implements Accumulator {
    private final int value;
    private final int weight;
    private final double p;
    private final RelDataType type;
    private final List<Object[]> values = new ArrayList<>();

    Percentile(int value, int weight, double p, RelDataType type) {
      this.value = value;
      this.weight = weight;
      this.p = p;
      this.type = type;
    }

    @Override
    public void add(Object[] row) {
      Object v = row[value];
      if (v == null) {
        return;
      }
      double w = weight < 0 ? 1 : row[weight] == null ? 0 : ((Number) row[weight]).doubleValue();
      if (w > 0) {
        values.add(new Object[] {v, w});
      }
    }

    @Override
    public void merge(Accumulator other) {
      values.addAll(((Percentile) other).values);
    }

    @Override
    public Object result() {
      if (values.isEmpty()) {
        return null;
      }
      values.sort((a, b) -> compareNullsFirst(a[0], b[0]));
      double total = 0;
      for (Object[] entry : values) {
        total += (Double) entry[1];
      }
      double threshold = p * total;
      double cumulative = 0;
      for (Object[] entry : values) {
        cumulative += (Double) entry[1];
        if (cumulative >= threshold) {
          return entry[0];
        }
      }
      return values.get(values.size() - 1)[0];
    }

    @Override
    public String toString() {
      return "approx_percentile(" + type + ")";
    }
  }

  /** Variance and standard deviation by Welford's online algorithm. */
  static final class Moments implements Accumulator {
    private final int arg;
    private final org.apache.calcite.sql.SqlKind kind;
    private final RelDataType type;
    private long n;
    private double mean;
    private double m2;

    Moments(int arg, org.apache.calcite.sql.SqlKind kind, RelDataType type) {
      this.arg = arg;
      this.kind = kind;
      this.type = type;
    }

    @Override
    public void add(Object[] row) {
      Object v = row[arg];
      if (v == null) {
        return;
      }
      double x = ((Number) v).doubleValue();
      n++;
      double delta = x - mean;
      mean += delta / n;
      m2 += delta * (x - mean);
    }

    @Override
    public void merge(Accumulator other) {
      // Chan, Golub and LeVeque's pairwise update.
      Moments o = (Moments) other;
      if (o.n == 0) {
        return;
      }
      if (n == 0) {
        n = o.n;
        mean = o.mean;
        m2 = o.m2;
        return;
      }
      long total = n + o.n;
      double delta = o.mean - mean;
      mean += delta * o.n / total;
      m2 += o.m2 + delta * delta * ((double) n * o.n / total);
      n = total;
    }

    /** The partial state {@code (count, mean, M2)}. */
    Object[] partial() {
      return new Object[] {n, mean, m2};
    }

    /** An accumulator of {@code kind} over values whose partial state is {@code parts}. */
    static Moments of(SqlKind kind, RelDataType type, Object[] parts) {
      Moments m = new Moments(-1, kind, type);
      m.n = (Long) parts[0];
      m.mean = (Double) parts[1];
      m.m2 = (Double) parts[2];
      return m;
    }

    @Override
    public Object result() {
      boolean sample =
          kind == org.apache.calcite.sql.SqlKind.STDDEV_SAMP
              || kind == org.apache.calcite.sql.SqlKind.VAR_SAMP;
      long divisor = sample ? n - 1 : n;
      if (divisor <= 0) {
        return null;
      }
      double variance = m2 / divisor;
      boolean stddev =
          kind == org.apache.calcite.sql.SqlKind.STDDEV_SAMP
              || kind == org.apache.calcite.sql.SqlKind.STDDEV_POP;
      double result = stddev ? Math.sqrt(variance) : variance;
      return type.getSqlTypeName() == SqlTypeName.DECIMAL ? BigDecimal.valueOf(result) : result;
    }
  }

  /**
   * Neumaier's compensated summation: nearly independent of the order of the terms. A sum that is
   * no longer finite (a term is infinite or NaN, or the finite terms overflow) is what IEEE
   * addition makes it from there on, as Trino's plain double sum is: +Infinity, -Infinity, or NaN
   * where Trino gives NaN (both infinities, or a NaN term).
   */
  static final class Neumaier {
    private double sum;
    private double compensation;

    void add(double x) {
      double t = sum + x;
      compensation += error(sum, x, t);
      sum = t;
    }

    /**
     * The rounding error of {@code t = sum + x}, to be added to the compensation; zero once {@code
     * t} is not finite, whose error term would be NaN ({@code Infinity - Infinity}) and turn an
     * infinite sum into NaN.
     */
    static double error(double sum, double x, double t) {
      if (!Double.isFinite(t)) {
        return 0;
      }
      return Math.abs(sum) >= Math.abs(x) ? (sum - t) + x : (x - t) + sum;
    }

    void merge(Neumaier other) {
      add(other.sum);
      add(other.compensation);
    }

    /** A sum whose running parts are {@code sum} and {@code compensation}, as stored apart. */
    static Neumaier of(double sum, double compensation) {
      Neumaier n = new Neumaier();
      n.sum = sum;
      n.compensation = compensation;
      return n;
    }

    double sumPart() {
      return sum;
    }

    double compensationPart() {
      return compensation;
    }

    double sum() {
      return sum + compensation;
    }
  }

  private static BigDecimal toDecimal(Object v) {
    if (v instanceof BigDecimal d) {
      return d;
    }
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return BigDecimal.valueOf(((Number) v).longValue());
    }
    return BigDecimal.valueOf(((Number) v).doubleValue());
  }
}
