package io.floe.topology.refresh.eval.expr;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.view.TrinoFunctions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TimeZone;
import org.apache.calcite.DataContext;
import org.apache.calcite.adapter.java.JavaTypeFactory;
import org.apache.calcite.linq4j.QueryProvider;
import org.apache.calcite.linq4j.function.Function1;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexExecutorImpl;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.schema.SchemaPlus;

/**
 * A list of scalar expressions over rows of one type, compiled once and evaluated per row.
 *
 * <p>Column references are copied as they are, and {@code date_trunc} is computed by {@link
 * Bucketing} on the native value: both keep full precision and cost nothing. Every other expression
 * is compiled to Java by Calcite's code generator ({@link RexExecutorImpl}) with the functions'
 * Calcite implementations, rewritten first so that timestamps keep the precision of their type
 * ({@link ExactTimestamps}); a {@code date_trunc} inside such an expression becomes an extra input
 * column computed natively first.
 */
public final class CompiledExpressions {

  private static final String INPUT_RECORD = "inputRecord";
  private static final TimeZone UTC = TimeZone.getTimeZone("UTC");

  private final int width;
  // Per output: index of the input column it copies, or -1.
  private final int[] copies;
  // Per output: index of the input column it truncates to its bucket, or -1.
  private final int[] buckets;
  private final boolean bucketIsDate;
  private final Bucketing bucketing;
  // Outputs computed by generated code, in the order the generated function returns them.
  private final int[] generatedOutputs;
  private final Function1<DataContext, Object[]> generated;
  private final CalciteValues.Conversion[] inputConversions;
  private final int[] extraBucketSources;
  private final CalciteValues.Conversion[] outputConversions;

  private CompiledExpressions(
      int width,
      int[] copies,
      int[] buckets,
      boolean bucketIsDate,
      Bucketing bucketing,
      int[] generatedOutputs,
      Function1<DataContext, Object[]> generated,
      CalciteValues.Conversion[] inputConversions,
      int[] extraBucketSources,
      CalciteValues.Conversion[] outputConversions) {
    this.width = width;
    this.copies = copies;
    this.buckets = buckets;
    this.bucketIsDate = bucketIsDate;
    this.bucketing = bucketing;
    this.generatedOutputs = generatedOutputs;
    this.generated = generated;
    this.inputConversions = inputConversions;
    this.extraBucketSources = extraBucketSources;
    this.outputConversions = outputConversions;
  }

  /**
   * Compiles {@code expressions} over rows of {@code inputType}.
   *
   * @throws IllegalArgumentException when Calcite cannot generate code for an expression
   */
  public static CompiledExpressions compile(
      List<RexNode> expressions,
      RelDataType inputType,
      Bucketing bucketing,
      RexBuilder rexBuilder) {
    int n = expressions.size();
    int[] copies = new int[n];
    int[] buckets = new int[n];
    List<RexNode> toGenerate = new ArrayList<>();
    List<Integer> generatedOutputs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      RexNode e = expressions.get(i);
      copies[i] = -1;
      buckets[i] = -1;
      if (e instanceof RexInputRef ref) {
        copies[i] = ref.getIndex();
      } else if (isDateTruncOfColumn(e)) {
        buckets[i] = ((RexInputRef) ((RexCall) e).getOperands().get(1)).getIndex();
      } else {
        toGenerate.add(e);
        generatedOutputs.add(i);
      }
    }

    Function1<DataContext, Object[]> generated = null;
    CalciteValues.Conversion[] inputConversions = new CalciteValues.Conversion[0];
    List<Integer> extraBucketSources = new ArrayList<>();
    CalciteValues.Conversion[] outputConversions = new CalciteValues.Conversion[toGenerate.size()];
    if (!toGenerate.isEmpty()) {
      // date_trunc has no Calcite implementation: each becomes an extra input column.
      RelDataTypeFactory.Builder extended = rexBuilder.getTypeFactory().builder();
      extended.addAll(inputType.getFieldList());
      List<RexNode> rewritten = new ArrayList<>();
      for (RexNode e : toGenerate) {
        rewritten.add(
            e.accept(
                new RexShuttle() {
                  @Override
                  public RexNode visitCall(RexCall call) {
                    if (isDateTruncOfColumn(call)) {
                      int source = ((RexInputRef) call.getOperands().get(1)).getIndex();
                      int column = inputType.getFieldCount() + extraBucketSources.size();
                      extraBucketSources.add(source);
                      extended.add("$bucket" + column, call.getType());
                      return new RexInputRef(column, call.getType());
                    }
                    return super.visitCall(call);
                  }
                }));
      }
      // Timestamps reach generated code as the native counts of their unit they are.
      RelDataType extendedType =
          ExactTimestamps.inputType(extended.build(), rexBuilder.getTypeFactory());
      rewritten.replaceAll(e -> ExactTimestamps.rewrite(e, rexBuilder));
      try {
        generated =
            RexExecutorImpl.getExecutable(rexBuilder, rewritten, extendedType).getFunction();
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "Cannot compile " + toGenerate + ": " + e.getMessage(), e);
      }
      inputConversions = new CalciteValues.Conversion[extendedType.getFieldCount()];
      for (int c = 0; c < inputConversions.length; c++) {
        inputConversions[c] =
            CalciteValues.Conversion.of(extendedType.getFieldList().get(c).getType());
      }
      for (int o = 0; o < rewritten.size(); o++) {
        outputConversions[o] = CalciteValues.Conversion.of(rewritten.get(o).getType());
      }
    }
    return new CompiledExpressions(
        inputType.getFieldCount(),
        copies,
        buckets,
        bucketing.columnType().isDate(),
        bucketing,
        generatedOutputs.stream().mapToInt(Integer::intValue).toArray(),
        generated,
        inputConversions,
        extraBucketSources.stream().mapToInt(Integer::intValue).toArray(),
        outputConversions);
  }

  public static boolean isDateTruncOfColumn(RexNode node) {
    return node instanceof RexCall call
        && call.getOperator() == TrinoFunctions.DATE_TRUNC
        && call.getOperands().get(1) instanceof RexInputRef;
  }

  /** Evaluates every expression on {@code row}; {@code context} is the caller's own. */
  public Object[] evaluate(Object[] row, RowContext context) {
    Object[] out = new Object[copies.length];
    for (int i = 0; i < out.length; i++) {
      if (copies[i] >= 0) {
        out[i] = row[copies[i]];
      } else if (buckets[i] >= 0) {
        out[i] = bucket(row[buckets[i]]);
      }
    }
    if (generated != null) {
      Object[] input = new Object[inputConversions.length];
      for (int c = 0; c < width; c++) {
        input[c] = inputConversions[c].toCalcite(row[c]);
      }
      for (int x = 0; x < extraBucketSources.length; x++) {
        input[width + x] =
            inputConversions[width + x].toCalcite(bucket(row[extraBucketSources[x]]));
      }
      context.input = input;
      Object[] results = generated.apply(context);
      for (int g = 0; g < generatedOutputs.length; g++) {
        out[generatedOutputs[g]] = outputConversions[g].toNative(results[g]);
      }
    }
    return out;
  }

  /** Evaluates a single boolean expression: true only for TRUE (SQL's WHERE semantics). */
  public boolean test(Object[] row, RowContext context) {
    return Boolean.TRUE.equals(evaluate(row, context)[0]);
  }

  private Object bucket(Object value) {
    if (value == null) {
      return null;
    }
    if (bucketIsDate) {
      return (int) bucketing.floor(((Integer) value).longValue());
    }
    return bucketing.floor((Long) value);
  }

  /** The data context generated code reads its input row from; one per evaluating thread. */
  public static final class RowContext implements DataContext {
    private final JavaTypeFactory typeFactory;
    private Object[] input;

    public RowContext(JavaTypeFactory typeFactory) {
      this.typeFactory = typeFactory;
    }

    @Override
    public SchemaPlus getRootSchema() {
      return null;
    }

    @Override
    public JavaTypeFactory getTypeFactory() {
      return typeFactory;
    }

    @Override
    public QueryProvider getQueryProvider() {
      return null;
    }

    @Override
    public Object get(String name) {
      if (INPUT_RECORD.equals(name)) {
        return input;
      }
      // Conversions between timestamp with and without time zone happen in UTC, Trino's default.
      if (DataContext.Variable.TIME_ZONE.camelName.equals(name)) {
        return UTC;
      }
      if (DataContext.Variable.LOCALE.camelName.equals(name)) {
        return Locale.ROOT;
      }
      return null;
    }
  }
}
