package io.floe.topology.refresh.eval.expr;

import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.schema.impl.ScalarFunctionImpl;
import org.apache.calcite.sql.SqlFunction;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.type.InferTypes;
import org.apache.calcite.sql.type.ReturnTypes;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.sql.validate.SqlUserDefinedFunction;
import org.apache.calcite.util.TimestampString;

/**
 * Rewrites expressions for Calcite's code generator so that they see timestamps at the precision of
 * their type (DESIGN §3.9): Calcite's runtime holds a timestamp as epoch milliseconds whatever its
 * precision, which would make {@code ts > TIMESTAMP '10:00:00.000500'} compare milliseconds.
 *
 * <p>Instead, every timestamp value is a {@code BIGINT} counting the unit of its type, as Floe's
 * native values do: microseconds up to precision 6, nanoseconds above. Columns reach generated code
 * as the native longs they are, literals become the longs their digits say, and comparisons, CASE,
 * COALESCE, NULLIF, GREATEST and LEAST work on those longs, the operands brought to the finer unit
 * first (a microsecond column against a nanosecond literal compares in nanoseconds, as Trino does).
 * Casts between timestamp precisions scale (and round to a lower precision, as Trino does), a date
 * becomes its midnight, and adding or subtracting an interval keeps what lies below the
 * millisecond. Any other function of a timestamp (extract, casts to date or varchar, date parts) is
 * Calcite's own, on the value floored to milliseconds, which decides everything those functions
 * return from a whole millisecond; a timestamp it returns is counted in the unit again.
 */
final class ExactTimestamps {

  private static final SqlFunction SCALE = function("scale");
  private static final SqlFunction ROUND = function("round");
  private static final SqlFunction FLOOR_DIV = function("floorDiv");
  private static final SqlFunction FLOOR_MOD = function("floorMod");

  private static final Set<SqlKind> COMPARISONS =
      EnumSet.of(
          SqlKind.EQUALS,
          SqlKind.NOT_EQUALS,
          SqlKind.LESS_THAN,
          SqlKind.LESS_THAN_OR_EQUAL,
          SqlKind.GREATER_THAN,
          SqlKind.GREATER_THAN_OR_EQUAL,
          SqlKind.IS_DISTINCT_FROM,
          SqlKind.IS_NOT_DISTINCT_FROM);

  /** Calls whose timestamp result is one of their timestamp operands. */
  private static final Set<SqlKind> CHOICES =
      EnumSet.of(
          SqlKind.CASE,
          SqlKind.COALESCE,
          SqlKind.NULLIF,
          SqlKind.GREATEST,
          SqlKind.LEAST,
          SqlKind.IF);

  /** Calls that look at their operands' nullness only. */
  private static final Set<SqlKind> NULL_TESTS = EnumSet.of(SqlKind.IS_NULL, SqlKind.IS_NOT_NULL);

  private final RexBuilder rexBuilder;
  private final RelDataTypeFactory types;

  private ExactTimestamps(RexBuilder rexBuilder) {
    this.rexBuilder = rexBuilder;
    this.types = rexBuilder.getTypeFactory();
  }

  /** The row type generated code reads: each timestamp column a {@code BIGINT} in its unit. */
  static RelDataType inputType(RelDataType row, RelDataTypeFactory types) {
    RelDataTypeFactory.Builder builder = types.builder();
    for (RelDataTypeField field : row.getFieldList()) {
      builder.add(
          field.getName(),
          isTimestamp(field.getType()) ? bigint(types, field.getType()) : field.getType());
    }
    return builder.build();
  }

  /**
   * {@code expression} over rows of {@link #inputType}: the same value, a timestamp as a {@code
   * BIGINT} in the unit of {@code expression}'s type.
   */
  static RexNode rewrite(RexNode expression, RexBuilder rexBuilder) {
    return new ExactTimestamps(rexBuilder).exact(expression);
  }

  /** Whether values of the type are timestamps, which generated code sees as counts of a unit. */
  static boolean isTimestamp(RelDataType type) {
    return type.getSqlTypeName() == SqlTypeName.TIMESTAMP
        || type.getSqlTypeName() == SqlTypeName.TIMESTAMP_WITH_LOCAL_TIME_ZONE;
  }

  private RexNode exact(RexNode node) {
    if (node instanceof RexInputRef ref) {
      return isTimestamp(ref.getType())
          ? new RexInputRef(ref.getIndex(), bigint(types, ref.getType()))
          : ref;
    }
    if (node instanceof RexLiteral literal) {
      return isTimestamp(literal.getType()) ? literal(literal) : literal;
    }
    if (node instanceof RexCall call) {
      return call(call);
    }
    return node;
  }

  private RexNode call(RexCall call) {
    SqlKind kind = call.getKind();
    if (kind == SqlKind.SEARCH) {
      return exact(RexUtil.expandSearch(rexBuilder, null, call));
    }
    boolean timestampResult = isTimestamp(call.getType());
    boolean timestampOperands = call.getOperands().stream().anyMatch(o -> isTimestamp(o.getType()));
    if (NULL_TESTS.contains(kind) || (!timestampResult && !timestampOperands)) {
      return call.clone(call.getType(), exactOperands(call));
    }
    if (COMPARISONS.contains(kind) && isDatetimes(call.getOperands())) {
      RelDataType finest = finest(call.getOperands());
      List<RexNode> operands = new ArrayList<>();
      for (RexNode operand : call.getOperands()) {
        operands.add(convert(exact(operand), operand.getType(), finest));
      }
      return call.clone(call.getType(), operands);
    }
    if (CHOICES.contains(kind) && timestampResult) {
      List<RexNode> operands = new ArrayList<>();
      for (RexNode operand : call.getOperands()) {
        RexNode exact = exact(operand);
        operands.add(
            isTimestamp(operand.getType())
                ? convert(exact, operand.getType(), call.getType())
                : exact);
      }
      return call.clone(bigint(types, call.getType()), operands);
    }
    if (kind == SqlKind.CAST
        && timestampResult
        && isDatetime(call.getOperands().get(0).getType())) {
      RexNode operand = call.getOperands().get(0);
      RexNode converted = convert(exact(operand), operand.getType(), call.getType());
      return rexBuilder.makeCast(bigint(types, call.getType()), converted, true, false);
    }
    if ((kind == SqlKind.PLUS || kind == SqlKind.MINUS) && timestampResult) {
      return shift(call);
    }
    return inCalcite(call);
  }

  private List<RexNode> exactOperands(RexCall call) {
    List<RexNode> operands = new ArrayList<>();
    for (RexNode operand : call.getOperands()) {
      operands.add(exact(operand));
    }
    return operands;
  }

  /**
   * A timestamp plus or minus an interval: Calcite shifts the whole milliseconds (an interval is
   * milliseconds or months), and what lay below the millisecond is added back, which no interval
   * changes. Calcite's datetime operators shift a plain timestamp, the timestamp first: the
   * validator leaves a timestamp with local time zone minus months as Calcite's numeric minus,
   * which would take the months for milliseconds, and in UTC, the session's zone, both types shift
   * alike.
   */
  private RexNode shift(RexCall call) {
    RexNode timestamp = null;
    RexNode calciteTimestamp = null;
    List<RexNode> others = new ArrayList<>();
    for (RexNode operand : call.getOperands()) {
      RexNode exact = exact(operand);
      if (isTimestamp(operand.getType()) && timestamp == null) {
        timestamp = convert(exact, operand.getType(), call.getType());
        calciteTimestamp = toCalcite(exact, wallClock(operand.getType()));
      } else if (isDatetime(operand.getType())) {
        return inCalcite(call);
      } else {
        others.add(exact);
      }
    }
    if (timestamp == null
        || others.size() != 1
        || (call.getKind() == SqlKind.MINUS && !isTimestamp(call.getOperands().get(0).getType()))) {
      return inCalcite(call);
    }
    RexNode shifted =
        fromCalcite(
            rexBuilder.makeCall(
                wallClock(call.getType()),
                call.getKind() == SqlKind.PLUS
                    ? SqlStdOperatorTable.DATETIME_PLUS
                    : SqlStdOperatorTable.MINUS_DATE,
                List.of(calciteTimestamp, others.get(0))),
            call.getType());
    RexNode belowMillis = units(FLOOR_MOD, timestamp, unitsPerMilli(call.getType()));
    return rexBuilder.makeCall(
        bigint(types, call.getType()), SqlStdOperatorTable.PLUS, List.of(shifted, belowMillis));
  }

  /** A call Calcite evaluates as it is, on timestamps floored to milliseconds. */
  private RexNode inCalcite(RexCall call) {
    List<RexNode> operands = new ArrayList<>();
    for (RexNode operand : call.getOperands()) {
      RexNode exact = exact(operand);
      operands.add(isTimestamp(operand.getType()) ? toCalcite(exact, operand.getType()) : exact);
    }
    RexNode result = call.clone(call.getType(), operands);
    return isTimestamp(call.getType()) ? fromCalcite(result, call.getType()) : result;
  }

  /** Calcite's timestamp (epoch milliseconds) of a count of {@code type}'s unit. */
  private RexNode toCalcite(RexNode units, RelDataType type) {
    return rexBuilder.makeReinterpretCast(
        type, units(FLOOR_DIV, units, unitsPerMilli(type)), rexBuilder.makeLiteral(false));
  }

  /** The count of {@code type}'s unit of Calcite's timestamp (epoch milliseconds). */
  private RexNode fromCalcite(RexNode timestamp, RelDataType type) {
    RexNode millis =
        rexBuilder.makeReinterpretCast(
            bigint(types, type), timestamp, rexBuilder.makeLiteral(false));
    return units(SCALE, millis, unitsPerMilli(type));
  }

  /**
   * A value of datetime type {@code from} (in its unit, or days for a date) in the unit of
   * timestamp type {@code to}, rounded to {@code to}'s precision when that is lower, as Trino
   * casts.
   */
  private RexNode convert(RexNode value, RelDataType from, RelDataType to) {
    if (from.getSqlTypeName() == SqlTypeName.DATE) {
      RexNode days =
          rexBuilder.makeReinterpretCast(bigint(types, from), value, rexBuilder.makeLiteral(false));
      return units(SCALE, days, unitsPerSecond(to) * 86_400L);
    }
    RexNode converted = value;
    int digits = digits(from);
    if (to.getPrecision() < from.getPrecision() && to.getPrecision() < digits) {
      converted = units(ROUND, converted, pow10(digits - to.getPrecision()));
    }
    if (digits(to) > digits) {
      return units(SCALE, converted, pow10(digits(to) - digits));
    }
    if (digits(to) < digits) {
      return units(FLOOR_DIV, converted, pow10(digits - digits(to)));
    }
    return converted;
  }

  /**
   * {@link #convert} of a known count of timestamp type {@code from}'s unit to timestamp type
   * {@code to}: the same rounding and scaling, on the value (a cast of a literal, for {@link
   * VectorPredicate}).
   */
  static long convert(long units, RelDataType from, RelDataType to) {
    long converted = units;
    int digits = digits(from);
    if (to.getPrecision() < from.getPrecision() && to.getPrecision() < digits) {
      converted = TimestampFunctions.round(converted, pow10(digits - to.getPrecision()));
    }
    if (digits(to) > digits) {
      return TimestampFunctions.scale(converted, pow10(digits(to) - digits));
    }
    if (digits(to) < digits) {
      return TimestampFunctions.floorDiv(converted, pow10(digits - digits(to)));
    }
    return converted;
  }

  /** {@code function(value, factor)}, one of {@link TimestampFunctions}' longs. */
  private RexNode units(SqlFunction function, RexNode value, long factor) {
    return rexBuilder.makeCall(
        types.createTypeWithNullability(
            types.createSqlType(SqlTypeName.BIGINT), value.getType().isNullable()),
        function,
        List.of(value, rexBuilder.makeBigintLiteral(BigDecimal.valueOf(factor))));
  }

  /** A timestamp literal as the count of its type's unit its digits say. */
  private RexNode literal(RexLiteral literal) {
    TimestampString value = literal.getValueAs(TimestampString.class);
    if (value == null) {
      return rexBuilder.makeNullLiteral(bigint(types, literal.getType()));
    }
    return rexBuilder.makeBigintLiteral(BigDecimal.valueOf(units(value, literal.getType())));
  }

  /** A timestamp's digits as the count of the unit of timestamp type {@code type}. */
  static long units(TimestampString value, RelDataType type) {
    LocalDateTime at = LocalDateTime.parse(value.toString().replace(' ', 'T'));
    long unitsPerSecond = unitsPerSecond(type);
    return TimestampFunctions.scale(at.toEpochSecond(ZoneOffset.UTC), unitsPerSecond)
        + at.getNano() / (1_000_000_000L / unitsPerSecond);
  }

  /** The timestamp without time zone of the same precision and nullability. */
  private RelDataType wallClock(RelDataType type) {
    return types.createTypeWithNullability(
        types.createSqlType(SqlTypeName.TIMESTAMP, type.getPrecision()), type.isNullable());
  }

  private static boolean isDatetime(RelDataType type) {
    return isTimestamp(type) || type.getSqlTypeName() == SqlTypeName.DATE;
  }

  private static boolean isDatetimes(List<RexNode> operands) {
    return operands.stream().allMatch(o -> isDatetime(o.getType()));
  }

  /** The timestamp type of the finest unit among the operands'. */
  private static RelDataType finest(List<RexNode> operands) {
    RelDataType finest = null;
    for (RexNode operand : operands) {
      RelDataType type = operand.getType();
      if (isTimestamp(type) && (finest == null || digits(type) > digits(finest))) {
        finest = type;
      }
    }
    return finest;
  }

  /** Digits of a second the type's unit counts: 6 (microseconds) or 9 (nanoseconds). */
  static int digits(RelDataType type) {
    return type.getPrecision() > 6 ? 9 : 6;
  }

  private static long unitsPerSecond(RelDataType type) {
    return pow10(digits(type));
  }

  private static long unitsPerMilli(RelDataType type) {
    return pow10(digits(type) - 3);
  }

  private static long pow10(int exponent) {
    long value = 1;
    for (int i = 0; i < exponent; i++) {
      value *= 10;
    }
    return value;
  }

  private static RelDataType bigint(RelDataTypeFactory types, RelDataType like) {
    return types.createTypeWithNullability(
        types.createSqlType(SqlTypeName.BIGINT), like.isNullable());
  }

  private static SqlFunction function(String name) {
    Method method;
    try {
      method = TimestampFunctions.class.getMethod(name, long.class, long.class);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(e);
    }
    return new SqlUserDefinedFunction(
        new SqlIdentifier("FLOE_" + name.toUpperCase(java.util.Locale.ROOT), SqlParserPos.ZERO),
        SqlKind.OTHER_FUNCTION,
        ReturnTypes.BIGINT_NULLABLE,
        InferTypes.FIRST_KNOWN,
        null,
        ScalarFunctionImpl.create(method));
  }
}
