package io.floe.topology.refresh.eval.expr;

import io.floe.topology.refresh.eval.vector.DictionaryEncoded;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.DoubleVector;
import io.floe.topology.refresh.eval.vector.Vectors.LongVector;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexNode;

/**
 * A view's WHERE compiled to run over a batch of column vectors, a column at a time: comparisons of
 * a column with a literal (and so BETWEEN and IN lists), IS [NOT] NULL, IS [NOT] TRUE|FALSE and
 * AND, OR and NOT of those, over integers, dates and timestamps at their precision, doubles,
 * decimals, strings and booleans ({@link #compile}). Anything else is evaluated by the generated
 * row-at-a-time code of {@link CompiledExpressions}, for the whole view: the choice is made once,
 * when the view compiles.
 *
 * <p>Each node computes SQL's three truth values for every row of a batch, as two bit masks (the
 * rows where it is TRUE, those where it is FALSE; the others are UNKNOWN), so that NOT of UNKNOWN
 * stays UNKNOWN and a comparison with NULL selects nothing, exactly as the row path decides. A
 * comparison of a string, boolean or decimal column asks a {@link DictionaryEncoded} vector for its
 * entries and answers once per entry. Immutable and shared; a {@link Selector} holds one thread's
 * masks.
 */
public abstract sealed class VectorPredicate {

  private VectorPredicate() {}

  /**
   * The columnar form of a boolean expression over rows of {@code inputType}, or empty when it uses
   * something else than the forms above (then the row path evaluates it).
   */
  public static Optional<VectorPredicate> compile(
      RexNode condition, RelDataType inputType, RexBuilder rexBuilder) {
    return Optional.ofNullable(
        new VectorPredicateCompiler(inputType, rexBuilder).compile(condition));
  }

  /** A new selector of rows, for one thread. */
  public Selector newSelector() {
    return new Selector(this);
  }

  /** The levels of masks the evaluation needs, its own result's included. */
  abstract int depth();

  /**
   * Sets, for rows {@code [0, n)} of {@code columns}, the rows where this is TRUE in {@code
   * truths.trues[level]} and those where it is FALSE in {@code truths.falses[level]}; bits of rows
   * at or above {@code n} are 0. Levels above {@code level} are scratch.
   */
  abstract void evaluate(Vector[] columns, int n, Selector truths, int level);

  /** Evaluates a predicate over batches: the rows of a batch it selects, as a bit mask. */
  public static final class Selector {
    private static final int WORDS = (Vectors.BATCH + 63) >>> 6;

    private final VectorPredicate predicate;
    final long[][] trues;
    final long[][] falses;

    private Selector(VectorPredicate predicate) {
      this.predicate = predicate;
      int depth = predicate.depth();
      this.trues = new long[depth][WORDS];
      this.falses = new long[depth][WORDS];
    }

    /**
     * The rows of {@code [0, n)} where the predicate is TRUE (SQL's WHERE): bit {@code i & 63} of
     * word {@code i >>> 6} is set for row {@code i}. The array is reused by the next call.
     */
    public long[] select(Vector[] columns, int n) {
      predicate.evaluate(columns, n, this, 0);
      return trues[0];
    }

    /** The truth value of a row after {@link #select}: TRUE, FALSE or null for UNKNOWN. */
    Boolean truth(int row) {
      if (isSet(trues[0], row)) {
        return Boolean.TRUE;
      }
      return isSet(falses[0], row) ? Boolean.FALSE : null;
    }

    /** Whether bit {@code row} of a mask is set. */
    public static boolean isSet(long[] mask, int row) {
      return (mask[row >>> 6] & (1L << row)) != 0;
    }
  }

  private static int words(int n) {
    return (n + 63) >>> 6;
  }

  /** The bits of rows {@code [0, n)} in word {@code w}. */
  private static long valid(int w, int n) {
    int rows = n - (w << 6);
    return rows >= 64 ? -1L : (1L << rows) - 1;
  }

  private static void clear(long[] t, long[] f, int n) {
    int words = words(n);
    java.util.Arrays.fill(t, 0, words, 0L);
    java.util.Arrays.fill(f, 0, words, 0L);
  }

  /** Sets row {@code i} in {@code t} where {@code holds}, else in {@code f}. */
  private static void mark(long[] t, long[] f, int i, boolean holds) {
    long[] set = holds ? t : f;
    set[i >>> 6] |= 1L << i;
  }

  /**
   * A test of one column, row by row: {@link #mark} sets the rows where it holds and those where it
   * does not, on masks cleared for it; rows it leaves in neither are UNKNOWN.
   */
  abstract static sealed class ColumnTest extends VectorPredicate {
    final int column;

    ColumnTest(int column) {
      this.column = column;
    }

    /** Marks rows {@code [0, n)} of {@code vector} TRUE in {@code t} or FALSE in {@code f}. */
    abstract void mark(Vector vector, int n, long[] t, long[] f);

    @Override
    final int depth() {
      return 1;
    }

    @Override
    final void evaluate(Vector[] columns, int n, Selector truths, int level) {
      long[] t = truths.trues[level];
      long[] f = truths.falses[level];
      clear(t, f, n);
      mark(columns[column], n, t, f);
    }
  }

  /**
   * A long column (integers, dates in days, timestamps in their unit) in {@code [low, high]}, or
   * outside it when not {@code inside}: every comparison of such a column with a literal and every
   * BETWEEN is one (an empty range when none can hold: {@code low > high}).
   */
  static final class LongRange extends ColumnTest {
    final long low;
    final long high;
    final boolean inside;

    LongRange(int column, long low, long high, boolean inside) {
      super(column);
      this.low = low;
      this.high = high;
      this.inside = inside;
    }

    @Override
    void mark(Vector column, int n, long[] t, long[] f) {
      LongVector vector = (LongVector) column;
      for (int i = 0; i < n; i++) {
        if (!vector.nulls[i]) {
          long v = vector.values[i];
          VectorPredicate.mark(t, f, i, (v >= low && v <= high) == inside);
        }
      }
    }

    @Override
    public String toString() {
      return "$" + column + (inside ? " in [" : " not in [") + low + ", " + high + "]";
    }
  }

  /** The comparisons of a column with a literal. */
  enum Comparison {
    EQ,
    NE,
    LT,
    LE,
    GT,
    GE;

    /** The same comparison with its operands swapped: {@code 1 < x} is {@code x > 1}. */
    Comparison flipped() {
      return switch (this) {
        case LT -> GT;
        case LE -> GE;
        case GT -> LT;
        case GE -> LE;
        default -> this;
      };
    }

    /** Whether a value that compares to the literal as {@code c} does (its sign) satisfies it. */
    boolean holds(int c) {
      return switch (this) {
        case EQ -> c == 0;
        case NE -> c != 0;
        case LT -> c < 0;
        case LE -> c <= 0;
        case GT -> c > 0;
        case GE -> c >= 0;
      };
    }

    /** Whether {@code v} compares to {@code x} so by Java's operators on doubles. */
    boolean holds(double v, double x) {
      return switch (this) {
        case EQ -> v == x;
        case NE -> v != x;
        case LT -> v < x;
        case LE -> v <= x;
        case GT -> v > x;
        case GE -> v >= x;
      };
    }
  }

  /**
   * A double column compared with a literal as Java's operators compare doubles, which is how the
   * row path's generated code compares them.
   */
  static final class DoubleComparison extends ColumnTest {
    final Comparison comparison;
    final double literal;

    DoubleComparison(int column, Comparison comparison, double literal) {
      super(column);
      this.comparison = comparison;
      this.literal = literal;
    }

    @Override
    void mark(Vector column, int n, long[] t, long[] f) {
      DoubleVector vector = (DoubleVector) column;
      for (int i = 0; i < n; i++) {
        if (!vector.nulls[i]) {
          VectorPredicate.mark(t, f, i, comparison.holds(vector.values[i], literal));
        }
      }
    }

    @Override
    public String toString() {
      return "$" + column + " " + comparison + " " + literal;
    }
  }

  /**
   * A test of the values of an object column (strings, booleans, decimals) against literals: a
   * comparison with one, or membership in an IN list. Over a {@link DictionaryEncoded} vector the
   * test runs once per dictionary entry and each row looks its entry's answer up.
   */
  abstract static sealed class ValueTest extends ColumnTest {

    ValueTest(int column) {
      super(column);
    }

    /** Whether a non-null value passes. */
    abstract boolean test(Object value);

    @Override
    void mark(Vector vector, int n, long[] t, long[] f) {
      if (vector instanceof DictionaryEncoded dictionary) {
        // Each entry the batch refers to is tested once: 0 not yet, 1 passes, 2 fails.
        byte[] answers = new byte[dictionary.entries()];
        int[] ids = dictionary.ids();
        for (int i = 0; i < n; i++) {
          if (vector.isNull(i)) {
            continue;
          }
          int id = ids[i];
          if (id < 0) {
            VectorPredicate.mark(t, f, i, test(vector.get(i)));
            continue;
          }
          if (answers[id] == 0) {
            answers[id] = test(dictionary.entry(id)) ? (byte) 1 : (byte) 2;
          }
          VectorPredicate.mark(t, f, i, answers[id] == 1);
        }
        return;
      }
      for (int i = 0; i < n; i++) {
        Object value = vector.get(i);
        if (value != null) {
          VectorPredicate.mark(t, f, i, test(value));
        }
      }
    }
  }

  /**
   * An object column compared with a literal of its native type by {@code compareTo}, as the row
   * path compares strings (UTF-16 code units), booleans and decimals (whatever their scales).
   */
  static final class ValueComparison extends ValueTest {
    final Comparison comparison;
    final Comparable<Object> literal;

    @SuppressWarnings("unchecked")
    ValueComparison(int column, Comparison comparison, Comparable<?> literal) {
      super(column);
      this.comparison = comparison;
      this.literal = (Comparable<Object>) literal;
    }

    @Override
    boolean test(Object value) {
      // The literal compares to the value; the value's sign is the opposite.
      return comparison.holds(-Integer.signum(literal.compareTo(value)));
    }

    @Override
    public String toString() {
      return "$" + column + " " + comparison + " " + literal;
    }
  }

  /** An object column in a list of non-null literals; compared by {@code compareTo}. */
  static final class ValueIn extends ValueTest {
    final SortedSet<Object> literals;

    ValueIn(int column, SortedSet<Object> literals) {
      super(column);
      this.literals = literals;
    }

    @Override
    boolean test(Object value) {
      return literals.contains(value);
    }

    @Override
    public String toString() {
      return "$" + column + " in " + literals;
    }
  }

  /** {@code column IS NULL}, or {@code IS NOT NULL} when {@code negated}: never UNKNOWN. */
  static final class IsNull extends ColumnTest {
    final boolean negated;

    IsNull(int column, boolean negated) {
      super(column);
      this.negated = negated;
    }

    @Override
    void mark(Vector vector, int n, long[] t, long[] f) {
      for (int i = 0; i < n; i++) {
        VectorPredicate.mark(t, f, i, vector.isNull(i) != negated);
      }
    }

    @Override
    public String toString() {
      return "$" + column + (negated ? " is not null" : " is null");
    }
  }

  /** The same truth value for every row: TRUE, FALSE or UNKNOWN (null), e.g. {@code x = NULL}. */
  static final class Constant extends VectorPredicate {
    final Boolean value;

    Constant(Boolean value) {
      this.value = value;
    }

    @Override
    int depth() {
      return 1;
    }

    @Override
    void evaluate(Vector[] columns, int n, Selector truths, int level) {
      long[] t = truths.trues[level];
      long[] f = truths.falses[level];
      clear(t, f, n);
      if (value == null) {
        return;
      }
      long[] set = value ? t : f;
      for (int w = 0; w < words(n); w++) {
        set[w] = valid(w, n);
      }
    }

    @Override
    public String toString() {
      return String.valueOf(value);
    }
  }

  /**
   * AND ({@code any} false) or OR ({@code any} true) of operands: AND is TRUE where all are TRUE
   * and FALSE where any is FALSE, OR the other way round; UNKNOWN elsewhere.
   */
  static final class Junction extends VectorPredicate {
    final boolean isOr;
    final List<VectorPredicate> operands;

    Junction(boolean isOr, List<VectorPredicate> operands) {
      this.isOr = isOr;
      this.operands = List.copyOf(operands);
    }

    @Override
    int depth() {
      int depth = operands.get(0).depth();
      for (VectorPredicate operand : operands.subList(1, operands.size())) {
        depth = Math.max(depth, 1 + operand.depth());
      }
      return depth;
    }

    @Override
    void evaluate(Vector[] columns, int n, Selector truths, int level) {
      operands.get(0).evaluate(columns, n, truths, level);
      long[] t = truths.trues[level];
      long[] f = truths.falses[level];
      int words = words(n);
      for (VectorPredicate operand : operands.subList(1, operands.size())) {
        operand.evaluate(columns, n, truths, level + 1);
        long[] ot = truths.trues[level + 1];
        long[] of = truths.falses[level + 1];
        for (int w = 0; w < words; w++) {
          if (isOr) {
            t[w] |= ot[w];
            f[w] &= of[w];
          } else {
            t[w] &= ot[w];
            f[w] |= of[w];
          }
        }
      }
    }

    @Override
    public String toString() {
      return (isOr ? "or" : "and") + operands;
    }
  }

  /**
   * A node that evaluates its operand on its own level and then rewrites each word of the two masks
   * ({@link #rewrite}).
   */
  abstract static sealed class OfOperand extends VectorPredicate {
    final VectorPredicate operand;

    OfOperand(VectorPredicate operand) {
      this.operand = operand;
    }

    /** Rewrites word {@code w} of {@code t} and {@code f}, {@code valid} its bits of rows. */
    abstract void rewrite(long[] t, long[] f, int w, long valid);

    @Override
    final int depth() {
      return operand.depth();
    }

    @Override
    final void evaluate(Vector[] columns, int n, Selector truths, int level) {
      operand.evaluate(columns, n, truths, level);
      long[] t = truths.trues[level];
      long[] f = truths.falses[level];
      for (int w = 0; w < words(n); w++) {
        rewrite(t, f, w, valid(w, n));
      }
    }
  }

  /** NOT: TRUE and FALSE swap, UNKNOWN stays UNKNOWN. */
  static final class Not extends OfOperand {

    Not(VectorPredicate operand) {
      super(operand);
    }

    @Override
    void rewrite(long[] t, long[] f, int w, long valid) {
      long was = t[w];
      t[w] = f[w];
      f[w] = was;
    }

    @Override
    public String toString() {
      return "not(" + operand + ")";
    }
  }

  /**
   * {@code operand IS [NOT] TRUE} or {@code IS [NOT] FALSE}: TRUE or FALSE for every row, UNKNOWN
   * counting as neither TRUE nor FALSE.
   */
  static final class Is extends OfOperand {
    final boolean ofFalse;
    final boolean negated;

    Is(VectorPredicate operand, boolean ofFalse, boolean negated) {
      super(operand);
      this.ofFalse = ofFalse;
      this.negated = negated;
    }

    @Override
    void rewrite(long[] t, long[] f, int w, long valid) {
      long is = ofFalse ? f[w] : t[w];
      t[w] = negated ? ~is & valid : is;
      f[w] = negated ? is : ~is & valid;
    }

    @Override
    public String toString() {
      return operand + " is " + (negated ? "not " : "") + (ofFalse ? "false" : "true");
    }
  }
}
