package io.floe.topology.refresh.eval.expr;

import io.floe.topology.refresh.eval.expr.VectorPredicate.Comparison;
import io.floe.topology.refresh.eval.expr.VectorPredicate.LongRange;
import io.floe.topology.refresh.eval.expr.VectorPredicate.ValueComparison;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.util.TimestampString;

/**
 * Compiles a boolean expression into a {@link VectorPredicate}, or into nothing (null) when any
 * part of it is not one of the forms the columnar filter evaluates.
 *
 * <p>The plan keeps expressions as written ({@code CAST(10):DOUBLE}), and Calcite's simplifier is
 * not run on it: its constant folding evaluates timestamps in milliseconds. What is folded here
 * instead is exact: a cast of a numeric literal to a numeric type (a cast that would round an exact
 * value falls back), a {@code SEARCH} (Calcite's form of ranges and IN lists) expanded into the
 * comparisons it stands for, and the literal side of a comparison with a long column, brought to
 * the column's unit as an exact range (so {@code i > 10.5} is {@code i >= 11}, and a microsecond
 * column {@code > TIMESTAMP '... .000000500'} is {@code > ... .000000} in microseconds, as Trino
 * compares them in nanoseconds).
 */
final class VectorPredicateCompiler {

  private final RelDataType inputType;
  private final RexBuilder rexBuilder;

  VectorPredicateCompiler(RelDataType inputType, RexBuilder rexBuilder) {
    this.inputType = inputType;
    this.rexBuilder = rexBuilder;
  }

  /** The predicate, or null when the row path must evaluate {@code node}. */
  VectorPredicate compile(RexNode node) {
    if (node instanceof RexInputRef ref) {
      return type(ref) == SqlTypeName.BOOLEAN
          ? new ValueComparison(ref.getIndex(), Comparison.EQ, Boolean.TRUE)
          : null;
    }
    if (node instanceof RexLiteral literal) {
      return literal.getType().getSqlTypeName() == SqlTypeName.BOOLEAN || literal.isNull()
          ? new VectorPredicate.Constant(literal.getValueAs(Boolean.class))
          : null;
    }
    if (!(node instanceof RexCall call)) {
      return null;
    }
    List<RexNode> operands = call.getOperands();
    return switch (call.getKind()) {
      case AND, OR -> junction(call);
      case NOT -> not(compile(operands.get(0)));
      case IS_NULL, IS_NOT_NULL ->
          operands.get(0) instanceof RexInputRef ref
              ? new VectorPredicate.IsNull(ref.getIndex(), call.getKind() == SqlKind.IS_NOT_NULL)
              : null;
      case IS_TRUE -> is(compile(operands.get(0)), false, false);
      case IS_NOT_TRUE -> is(compile(operands.get(0)), false, true);
      case IS_FALSE -> is(compile(operands.get(0)), true, false);
      case IS_NOT_FALSE -> is(compile(operands.get(0)), true, true);
      case SEARCH -> compile(RexUtil.expandSearch(rexBuilder, null, call));
      case EQUALS -> comparison(call, Comparison.EQ);
      case NOT_EQUALS -> comparison(call, Comparison.NE);
      case LESS_THAN -> comparison(call, Comparison.LT);
      case LESS_THAN_OR_EQUAL -> comparison(call, Comparison.LE);
      case GREATER_THAN -> comparison(call, Comparison.GT);
      case GREATER_THAN_OR_EQUAL -> comparison(call, Comparison.GE);
      default -> null;
    };
  }

  private static VectorPredicate not(VectorPredicate operand) {
    return operand == null ? null : new VectorPredicate.Not(operand);
  }

  private static VectorPredicate is(VectorPredicate operand, boolean ofFalse, boolean negated) {
    return operand == null ? null : new VectorPredicate.Is(operand, ofFalse, negated);
  }

  /**
   * AND or OR of the compiled operands; in an OR, equalities of one object column with literals
   * become one IN list, so that a dictionary is consulted once per entry for the whole list, and in
   * an AND, ranges of one long column become their intersection ({@code BETWEEN} is one pass).
   */
  private VectorPredicate junction(RexCall call) {
    boolean isOr = call.getKind() == SqlKind.OR;
    List<VectorPredicate> operands = new ArrayList<>();
    Map<Integer, SortedSet<Object>> lists = new LinkedHashMap<>();
    Map<Integer, LongRange> ranges = new LinkedHashMap<>();
    for (RexNode operand : call.getOperands()) {
      VectorPredicate compiled = compile(operand);
      if (compiled == null) {
        return null;
      }
      if (isOr
          && compiled instanceof ValueComparison equality
          && equality.comparison == Comparison.EQ) {
        lists.computeIfAbsent(equality.column, c -> new TreeSet<>()).add(equality.literal);
      } else if (!isOr && compiled instanceof LongRange range && range.inside) {
        ranges.merge(range.column, range, VectorPredicateCompiler::intersection);
      } else {
        operands.add(compiled);
      }
    }
    lists.forEach(
        (column, literals) ->
            operands.add(
                literals.size() == 1
                    ? new ValueComparison(column, Comparison.EQ, (Comparable<?>) literals.first())
                    : new VectorPredicate.ValueIn(column, literals)));
    operands.addAll(ranges.values());
    return operands.size() == 1 ? operands.get(0) : new VectorPredicate.Junction(isOr, operands);
  }

  /** The values of a long column in both ranges (an empty range when none is). */
  private static LongRange intersection(LongRange a, LongRange b) {
    long low = Math.max(a.low, b.low);
    long high = Math.min(a.high, b.high);
    return low > high ? never(a.column) : new LongRange(a.column, low, high, true);
  }

  /**
   * A column compared with a literal, either way round; the column may be cast to a type that holds
   * each of its values exactly (the validator widens a column to the literal's type: {@code
   * CAST(dec):DECIMAL(12, 2)}, {@code CAST(i):DECIMAL(11, 1)}), which orders them as they are.
   */
  private VectorPredicate comparison(RexCall call, Comparison comparison) {
    RexNode column = call.getOperands().get(0);
    RexNode literal = call.getOperands().get(1);
    if (columnOf(column) == null && columnOf(literal) != null) {
      RexNode swapped = column;
      column = literal;
      literal = swapped;
      comparison = comparison.flipped();
    }
    RexInputRef ref = columnOf(column);
    if (ref == null || !isLiteral(literal)) {
      return null;
    }
    if (RexUtil.isNullLiteral(literal, true)) {
      // A comparison with NULL is UNKNOWN for every row.
      return new VectorPredicate.Constant(null);
    }
    int c = ref.getIndex();
    RelDataType type = inputType.getFieldList().get(c).getType();
    return switch (type.getSqlTypeName()) {
      case INTEGER, BIGINT -> {
        BigDecimal value = exact(literal);
        yield value == null ? null : range(c, comparison, value);
      }
      case DATE -> {
        RexLiteral date =
            literal instanceof RexLiteral l && l.getTypeName() == SqlTypeName.DATE ? l : null;
        yield date == null
            ? null
            : range(c, comparison, BigDecimal.valueOf(date.getValueAs(Integer.class)));
      }
      case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> {
        BigDecimal value = timestamp(literal, type);
        yield value == null ? null : range(c, comparison, value);
      }
      case DOUBLE -> {
        Double value = approximate(literal);
        yield value == null ? null : new VectorPredicate.DoubleComparison(c, comparison, value);
      }
      case DECIMAL -> {
        BigDecimal value = exact(literal);
        yield value == null ? null : new ValueComparison(c, comparison, value);
      }
      case VARCHAR, CHAR -> {
        String value = string(literal);
        yield value == null ? null : new ValueComparison(c, comparison, value);
      }
      case BOOLEAN ->
          literal instanceof RexLiteral l && l.getTypeName() == SqlTypeName.BOOLEAN
              ? new ValueComparison(c, comparison, l.getValueAs(Boolean.class))
              : null;
      default -> null;
    };
  }

  /** The column {@code node} is, or is cast from without changing a value; null otherwise. */
  private RexInputRef columnOf(RexNode node) {
    if (node instanceof RexInputRef ref) {
      return ref;
    }
    if (node instanceof RexCall cast
        && cast.getKind() == SqlKind.CAST
        && cast.getOperands().get(0) instanceof RexInputRef ref
        && holdsExactly(ref.getType(), cast.getType())) {
      return ref;
    }
    return null;
  }

  /** Whether type {@code to} holds every value of type {@code from} as it is, in the same order. */
  private static boolean holdsExactly(RelDataType from, RelDataType to) {
    SqlTypeName target = to.getSqlTypeName();
    return switch (from.getSqlTypeName()) {
      case INTEGER ->
          target == SqlTypeName.BIGINT
              || (target == SqlTypeName.DECIMAL && to.getPrecision() - to.getScale() >= 10);
      case BIGINT -> target == SqlTypeName.DECIMAL && to.getPrecision() - to.getScale() >= 19;
      case DECIMAL ->
          target == SqlTypeName.DECIMAL
              && to.getScale() >= from.getScale()
              && to.getPrecision() - to.getScale() >= from.getPrecision() - from.getScale();
      case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE ->
          ExactTimestamps.isTimestamp(to)
              && to.getPrecision() >= from.getPrecision()
              && ExactTimestamps.digits(to) >= ExactTimestamps.digits(from);
      default -> false;
    };
  }

  private SqlTypeName type(RexInputRef ref) {
    return inputType.getFieldList().get(ref.getIndex()).getType().getSqlTypeName();
  }

  private static boolean isLiteral(RexNode node) {
    return node instanceof RexLiteral
        || (node instanceof RexCall cast
            && cast.getKind() == SqlKind.CAST
            && cast.getOperands().get(0) instanceof RexLiteral);
  }

  /**
   * The value of an exact numeric literal, or of one cast exactly to an exact numeric type; null
   * for anything else (a cast that would round, an approximate literal).
   */
  private static BigDecimal exact(RexNode node) {
    if (node instanceof RexLiteral literal) {
      return isExact(literal.getTypeName()) ? literal.getValueAs(BigDecimal.class) : null;
    }
    RexCall cast = (RexCall) node;
    RexLiteral literal = (RexLiteral) cast.getOperands().get(0);
    if (!isExact(literal.getTypeName())) {
      return null;
    }
    BigDecimal value = literal.getValueAs(BigDecimal.class);
    RelDataType to = cast.getType();
    return switch (to.getSqlTypeName()) {
      case TINYINT, SMALLINT, INTEGER, BIGINT ->
          value.stripTrailingZeros().scale() <= 0 && fits(value, to.getSqlTypeName())
              ? value
              : null;
      case DECIMAL ->
          value.stripTrailingZeros().scale() <= to.getScale()
                  && value.precision() - value.scale() <= to.getPrecision() - to.getScale()
              ? value
              : null;
      default -> null;
    };
  }

  /** Whether an integral value is one of the integer type's. */
  private static boolean fits(BigDecimal value, SqlTypeName type) {
    int bits =
        switch (type) {
          case TINYINT -> 8;
          case SMALLINT -> 16;
          case INTEGER -> 32;
          default -> 64;
        };
    return value.toBigInteger().bitLength() < bits;
  }

  private static boolean isExact(SqlTypeName type) {
    return SqlTypeName.EXACT_TYPES.contains(type);
  }

  private static boolean isApproximate(SqlTypeName type) {
    return type == SqlTypeName.DOUBLE || type == SqlTypeName.FLOAT;
  }

  /**
   * The value of a double literal, or of a numeric literal cast to double (the nearest double, as
   * the cast gives it at run time); null for anything else.
   */
  private static Double approximate(RexNode node) {
    if (node instanceof RexLiteral literal) {
      return isApproximate(literal.getTypeName()) ? literal.getValueAs(Double.class) : null;
    }
    RexCall cast = (RexCall) node;
    RexLiteral literal = (RexLiteral) cast.getOperands().get(0);
    if (!isApproximate(cast.getType().getSqlTypeName())) {
      return null;
    }
    if (isApproximate(literal.getTypeName())) {
      return literal.getValueAs(Double.class);
    }
    return isExact(literal.getTypeName())
        ? literal.getValueAs(BigDecimal.class).doubleValue()
        : null;
  }

  /**
   * A timestamp literal, or a timestamp literal cast to a timestamp type, in the unit of the
   * timestamp column type {@code column}: its count of its type's unit, as {@link ExactTimestamps}
   * reads and casts it (a cast to a lower precision rounds), scaled exactly (a fraction of the
   * column's unit when the literal's unit is finer).
   */
  private static BigDecimal timestamp(RexNode node, RelDataType column) {
    RexLiteral literal =
        node instanceof RexCall cast ? (RexLiteral) cast.getOperands().get(0) : (RexLiteral) node;
    if (!ExactTimestamps.isTimestamp(literal.getType())
        || !ExactTimestamps.isTimestamp(node.getType())) {
      return null;
    }
    long units =
        ExactTimestamps.convert(
            ExactTimestamps.units(literal.getValueAs(TimestampString.class), literal.getType()),
            literal.getType(),
            node.getType());
    return BigDecimal.valueOf(units)
        .scaleByPowerOfTen(ExactTimestamps.digits(column) - ExactTimestamps.digits(node.getType()));
  }

  /**
   * A string literal's value; null for anything else, and for a CHAR literal that ends in a space,
   * whose padding semantics are the row path's to decide.
   */
  private static String string(RexNode node) {
    if (!(node instanceof RexLiteral literal)) {
      return null;
    }
    if (literal.getTypeName() == SqlTypeName.VARCHAR) {
      return literal.getValueAs(String.class);
    }
    if (literal.getTypeName() == SqlTypeName.CHAR) {
      String value = literal.getValueAs(String.class);
      return value.endsWith(" ") ? null : value;
    }
    return null;
  }

  /**
   * A long column compared with an exact value: the range of longs that satisfy the comparison
   * (inside it), or for {@code <>} the one value that does not (outside it).
   */
  private static VectorPredicate range(int column, Comparison comparison, BigDecimal value) {
    BigDecimal floor = value.setScale(0, RoundingMode.FLOOR);
    BigDecimal ceiling = value.setScale(0, RoundingMode.CEILING);
    boolean integral = floor.compareTo(value) == 0;
    return switch (comparison) {
      case EQ -> integral ? range(column, value, value, true) : never(column);
      case NE -> integral ? range(column, value, value, false) : always(column);
      case LT -> range(column, null, ceiling.subtract(BigDecimal.ONE), true);
      case LE -> range(column, null, floor, true);
      case GT -> range(column, floor.add(BigDecimal.ONE), null, true);
      case GE -> range(column, ceiling, null, true);
    };
  }

  private static final BigDecimal MIN = BigDecimal.valueOf(Long.MIN_VALUE);
  private static final BigDecimal MAX = BigDecimal.valueOf(Long.MAX_VALUE);

  /** {@code [low, high]} (null: unbounded) of a long column, clamped to the longs. */
  private static VectorPredicate range(
      int column, BigDecimal low, BigDecimal high, boolean inside) {
    BigDecimal from = low == null ? MIN : low.max(MIN);
    BigDecimal to = high == null ? MAX : high.min(MAX);
    if (from.compareTo(to) > 0) {
      return inside ? never(column) : always(column);
    }
    return new LongRange(column, from.longValueExact(), to.longValueExact(), inside);
  }

  /** FALSE for every non-null value of the column (UNKNOWN for nulls). */
  private static LongRange never(int column) {
    return new LongRange(column, 1, 0, true);
  }

  /** TRUE for every non-null value of the column (UNKNOWN for nulls). */
  private static VectorPredicate always(int column) {
    return new LongRange(column, Long.MIN_VALUE, Long.MAX_VALUE, true);
  }
}
