package io.floe.topology.refresh.eval.agg;

import io.floe.topology.view.sql.TrinoOperatorTable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.sql.SqlAggFunction;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * The aggregate functions of view queries, evaluated on native values (see {@link
 * io.floe.topology.refresh.eval.expr.CalciteValues}). Each aggregate of a group gets its own {@link
 * Accumulator}.
 *
 * <p>Where Trino leaves a choice open, Floe makes it deterministic so that recomputing a bucket
 * always yields the same row: {@code min_by}/{@code max_by} break ties on the key by the smallest
 * (resp. largest) value, {@code arbitrary} is the smallest value, {@code approx_distinct} and
 * {@code approx_percentile} are exact. Floating-point sums use compensated summation so that they
 * hardly depend on the order in which files are read.
 */
public final class Accumulators {

  private Accumulators() {}

  /** The running state of one aggregate of one group. */
  public interface Accumulator {
    void add(Object[] row);

    /**
     * Folds in the state of an accumulator of the same aggregate over other rows of the same group,
     * as if this one had seen those rows too: partial states of one refresh, computed on several
     * threads, merge exactly.
     */
    void merge(Accumulator other);

    Object result();
  }

  /**
   * A factory of accumulators for {@code call}, whose arguments index the aggregate's input row.
   *
   * @param constantOf the constant value of an argument column, for {@code approx_percentile}'s
   *     percentage, or null when the column is not constant
   * @throws IllegalArgumentException for an aggregate Floe does not implement
   */
  public static Supplier<Accumulator> factory(
      AggregateCall call, java.util.function.IntFunction<Object> constantOf) {
    Supplier<Accumulator> base = plain(call, constantOf);
    int filter = call.filterArg;
    int[] args = call.getArgList().stream().mapToInt(Integer::intValue).toArray();
    Supplier<Accumulator> distinct =
        call.isDistinct() ? () -> new Distinct(base.get(), args) : base;
    if (filter < 0) {
      return distinct;
    }
    return () -> new Filtered(distinct.get(), filter);
  }

  private static Supplier<Accumulator> plain(
      AggregateCall call, java.util.function.IntFunction<Object> constantOf) {
    SqlAggFunction function = call.getAggregation();
    List<Integer> args = call.getArgList();
    RelDataType type = call.getType();
    if (function == TrinoOperatorTable.COUNT_IF) {
      int arg = args.get(0);
      return () -> new CountIf(arg);
    }
    if (function == TrinoOperatorTable.ARBITRARY) {
      int arg = args.get(0);
      return () -> new MinMax(arg, true);
    }
    if (function == TrinoOperatorTable.APPROX_DISTINCT) {
      int arg = args.get(0);
      return () -> new DistinctCount(arg);
    }
    if (function == TrinoOperatorTable.APPROX_PERCENTILE) {
      int value = args.get(0);
      int weight = args.size() == 3 ? args.get(1) : -1;
      Object percentage = constantOf.apply(args.get(args.size() - 1));
      if (!(percentage instanceof Number number)) {
        throw new IllegalArgumentException("approx_percentile needs a constant percentage");
      }
      double p = number.doubleValue();
      return () -> new Percentile(value, weight, p, type);
    }
    return switch (function.getKind()) {
      case COUNT -> {
        int[] counted = args.stream().mapToInt(Integer::intValue).toArray();
        yield () -> new Count(counted);
      }
      case SUM, SUM0 -> {
        int arg = args.get(0);
        boolean zeroWhenEmpty = function.getKind() == org.apache.calcite.sql.SqlKind.SUM0;
        yield () -> new Sum(arg, type, zeroWhenEmpty);
      }
      case AVG -> {
        int arg = args.get(0);
        yield () -> new Average(arg, type);
      }
      case MIN -> {
        int arg = args.get(0);
        yield () -> new MinMax(arg, true);
      }
      case MAX -> {
        int arg = args.get(0);
        yield () -> new MinMax(arg, false);
      }
      case ARG_MIN -> {
        int value = args.get(0);
        int key = args.get(1);
        yield () -> new By(value, key, true);
      }
      case ARG_MAX -> {
        int value = args.get(0);
        int key = args.get(1);
        yield () -> new By(value, key, false);
      }
      case STDDEV_SAMP, STDDEV_POP, VAR_SAMP, VAR_POP -> {
        int arg = args.get(0);
        org.apache.calcite.sql.SqlKind kind = function.getKind();
        yield () -> new Moments(arg, kind, type);
      }
      default ->
          throw new IllegalArgumentException(
              "aggregate "
                  + function.getName().toLowerCase(java.util.Locale.ROOT)
                  + " is not supported");
    };
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  public static int compareNullsFirst(Object a, Object b) {
    if (a == null || b == null) {
      return a == null ? (b == null ? 0 : -1) : 1;
    }
    return ((Comparable) a).compareTo(b);
  }

  private static final class Count implements Accumulator {
    private final int[] args;
    private long count;

    Count(int[] args) {
      this.args = args;
    }

    @Override
    public void add(Object[] row) {
      for (int arg : args) {
        if (row[arg] == null) {
          return;
        }
      }
      count++;
    }

    @Override
    public void merge(Accumulator other) {
      count += ((Count) other).count;
    }

    @Override
    public Object result() {
      return count;
    }
  }

  private static final class CountIf implements Accumulator {
    private final int arg;
    private long count;

    CountIf(int arg) {
      this.arg = arg;
    }

    @Override
    public void add(Object[] row) {
      if (Boolean.TRUE.equals(row[arg])) {
        count++;
      }
    }

    @Override
    public void merge(Accumulator other) {
      count += ((CountIf) other).count;
    }

    @Override
    public Object result() {
      return count;
    }
  }

  /** Exact sums: long with overflow checks, BigDecimal, or compensated double. */
  private static final class Sum implements Accumulator {
    private final int arg;
    private final SqlTypeName type;
    private final boolean zeroWhenEmpty;
    private boolean seen;
    private long longSum;
    private BigDecimal decimalSum = BigDecimal.ZERO;
    private final Neumaier doubleSum = new Neumaier();

    Sum(int arg, RelDataType type, boolean zeroWhenEmpty) {
      this.arg = arg;
      this.type = type.getSqlTypeName();
      this.zeroWhenEmpty = zeroWhenEmpty;
    }

    @Override
    public void add(Object[] row) {
      Object v = row[arg];
      if (v == null) {
        return;
      }
      seen = true;
      switch (type) {
        case TINYINT, SMALLINT, INTEGER, BIGINT ->
            longSum = Math.addExact(longSum, ((Number) v).longValue());
        case DECIMAL -> decimalSum = decimalSum.add(toDecimal(v));
        default -> doubleSum.add(((Number) v).doubleValue());
      }
    }

    @Override
    public void merge(Accumulator other) {
      Sum o = (Sum) other;
      seen |= o.seen;
      longSum = Math.addExact(longSum, o.longSum);
      decimalSum = decimalSum.add(o.decimalSum);
      doubleSum.merge(o.doubleSum);
    }

    @Override
    public Object result() {
      if (!seen && !zeroWhenEmpty) {
        return null;
      }
      return switch (type) {
        case TINYINT, SMALLINT, INTEGER -> (int) longSum;
        case BIGINT -> longSum;
        case DECIMAL -> decimalSum;
        case REAL, FLOAT -> (float) doubleSum.sum();
        default -> doubleSum.sum();
      };
    }
  }

  private static final class Average implements Accumulator {
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
        case REAL, FLOAT -> (float) (doubleSum.sum() / count);
        default -> doubleSum.sum() / count;
      };
    }
  }

  /** min, max, bool_and (min of booleans), bool_or (max), and arbitrary (min). */
  private static final class MinMax implements Accumulator {
    private final int arg;
    private final boolean min;
    private Object best;

    MinMax(int arg, boolean min) {
      this.arg = arg;
      this.min = min;
    }

    @Override
    public void add(Object[] row) {
      offer(row[arg]);
    }

    private void offer(Object v) {
      if (v == null) {
        return;
      }
      if (best == null) {
        best = v;
        return;
      }
      int c = compareNullsFirst(v, best);
      if (min ? c < 0 : c > 0) {
        best = v;
      }
    }

    @Override
    public void merge(Accumulator other) {
      offer(((MinMax) other).best);
    }

    @Override
    public Object result() {
      return best;
    }
  }

  /** min_by and max_by; rows with a null key are ignored, ties go to the extreme value. */
  private static final class By implements Accumulator {
    private final int value;
    private final int key;
    private final boolean min;
    private Object bestKey;
    private Object bestValue;

    By(int value, int key, boolean min) {
      this.value = value;
      this.key = key;
      this.min = min;
    }

    @Override
    public void add(Object[] row) {
      Object k = row[key];
      if (k == null) {
        return;
      }
      Object v = row[value];
      if (bestKey == null) {
        bestKey = k;
        bestValue = v;
        return;
      }
      int c = compareNullsFirst(k, bestKey);
      if (c == 0) {
        // Tie on the key: a non-null value wins, then the smallest (min_by) or largest (max_by).
        int byValue = v == null ? -1 : bestValue == null ? 1 : compareNullsFirst(v, bestValue);
        boolean better = bestValue == null ? v != null : (min ? byValue < 0 : byValue > 0);
        if (v != null && better) {
          bestValue = v;
        }
      } else if (min ? c < 0 : c > 0) {
        bestKey = k;
        bestValue = v;
      }
    }

    @Override
    public void merge(Accumulator other) {
      // The other side's best row competes as one row: the tie rules make the order irrelevant.
      By o = (By) other;
      if (o.bestKey == null) {
        return;
      }
      Object[] row = new Object[Math.max(value, key) + 1];
      row[value] = o.bestValue;
      row[key] = o.bestKey;
      add(row);
    }

    @Override
    public Object result() {
      return bestValue;
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
  private static final class Moments implements Accumulator {
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

  /** Feeds the delegate only argument tuples it has not seen: {@code agg(DISTINCT x)}. */
  private static final class Distinct implements Accumulator {
    private final Accumulator delegate;
    private final int[] args;
    private final Set<List<Object>> seen = new HashSet<>();

    Distinct(Accumulator delegate, int[] args) {
      this.delegate = delegate;
      this.args = args;
    }

    @Override
    public void add(Object[] row) {
      Object[] tuple = new Object[args.length];
      for (int i = 0; i < args.length; i++) {
        tuple[i] = row[args[i]];
      }
      if (seen.add(Arrays.asList(tuple))) {
        delegate.add(row);
      }
    }

    @Override
    public void merge(Accumulator other) {
      // Only the tuples this side has not seen reach the delegate, as rows holding just the tuple.
      int width = 0;
      for (int arg : args) {
        width = Math.max(width, arg + 1);
      }
      for (List<Object> tuple : ((Distinct) other).seen) {
        if (seen.add(tuple)) {
          Object[] row = new Object[width];
          for (int i = 0; i < args.length; i++) {
            row[args[i]] = tuple.get(i);
          }
          delegate.add(row);
        }
      }
    }

    @Override
    public Object result() {
      return delegate.result();
    }
  }

  /** {@code agg(...) FILTER (WHERE condition)}. */
  private static final class Filtered implements Accumulator {
    private final Accumulator delegate;
    private final int condition;

    Filtered(Accumulator delegate, int condition) {
      this.delegate = delegate;
      this.condition = condition;
    }

    @Override
    public void add(Object[] row) {
      if (Boolean.TRUE.equals(row[condition])) {
        delegate.add(row);
      }
    }

    @Override
    public void merge(Accumulator other) {
      delegate.merge(((Filtered) other).delegate);
    }

    @Override
    public Object result() {
      return delegate.result();
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
