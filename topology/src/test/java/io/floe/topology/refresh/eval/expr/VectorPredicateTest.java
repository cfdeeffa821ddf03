package io.floe.topology.refresh.eval.expr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.refresh.eval.vector.DictionaryEncoded;
import io.floe.topology.refresh.eval.vector.DictionaryVector;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.apache.calcite.adapter.java.JavaTypeFactory;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rex.RexBuilder;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The columnar WHERE over vectors with nulls in every column: for each operator and column type, a
 * row's truth value (TRUE, FALSE or UNKNOWN) is the one the row path's generated code gives it, and
 * only TRUE selects; what the columnar filter does not cover is refused when the view compiles.
 */
class VectorPredicateTest {

  private static final Schema SOURCE =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "b", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "i", Types.IntegerType.get()),
          Types.NestedField.optional(4, "l", Types.LongType.get()),
          Types.NestedField.optional(5, "d", Types.DoubleType.get()),
          Types.NestedField.optional(6, "s", Types.StringType.get()),
          Types.NestedField.optional(7, "flag", Types.BooleanType.get()),
          Types.NestedField.optional(8, "dt", Types.DateType.get()),
          Types.NestedField.optional(9, "dec", Types.DecimalType.of(10, 2)),
          Types.NestedField.optional(10, "tn", Types.TimestampNanoType.withZone()),
          Types.NestedField.optional(11, "ts", Types.TimestampType.withoutZone()));

  private static final int B = 1;
  private static final int I = 2;
  private static final int S = 5;

  /** 2026-04-08 12:00:00 in microseconds. */
  private static final long NOON =
      LocalDateTime.of(2026, 4, 8, 12, 0).toEpochSecond(ZoneOffset.UTC) * 1_000_000L;

  /** A view's plan and the filter of its WHERE. */
  private record Bound(ViewPlan plan, Filter filter) {}

  private static Filter filterOf(String where) throws InvalidViewException {
    return bind(where).filter();
  }

  private static Bound bind(String where) throws InvalidViewException {
    ViewPlan plan =
        ViewQueryBinder.bind(
            ViewQueryParser.parse(
                "SELECT date_trunc('day', b) AS day_b, count(*) AS n FROM lake.market.t WHERE "
                    + where
                    + " GROUP BY 1"),
            SOURCE,
            ZoneOffset.UTC);
    RelNode node = plan.relation();
    while (!(node instanceof Filter)) {
      node = node.getInput(0);
    }
    return new Bound(plan, (Filter) node);
  }

  private static Optional<VectorPredicate> columnar(String where) throws InvalidViewException {
    Filter filter = filterOf(where);
    return VectorPredicate.compile(
        filter.getCondition(), filter.getInput().getRowType(), filter.getCluster().getRexBuilder());
  }

  /** Rows of every column type, each value null one time in six, near the literals tested. */
  private static List<Object[]> rows(int n) {
    Random random = new Random(11);
    List<Object[]> rows = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      long micros = (random.nextBoolean() ? NOON : NOON + 500) + random.nextInt(5) - 2;
      Object[] row = {
        (long) r,
        micros,
        random.nextInt(13) - 6,
        random.nextInt(10) == 0 ? 7L : (long) random.nextInt(1000),
        random.nextInt(13) * 2.5,
        "s" + random.nextInt(5),
        random.nextBoolean(),
        (int) LocalDate.of(2026, 1, 1 + random.nextInt(12)).toEpochDay(),
        BigDecimal.valueOf(random.nextInt(2000), 2),
        micros * 1000 + random.nextInt(1001) - 500,
        micros
      };
      for (int c = 1; c < row.length; c++) {
        if (random.nextInt(6) == 0) {
          row[c] = null;
        }
      }
      rows.add(row);
    }
    return rows;
  }

  private static Vector[] vectors(List<Object[]> rows) {
    Vector[] vectors = new Vector[SOURCE.columns().size()];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = Vectors.forIceberg(SOURCE.columns().get(c).type());
      for (int r = 0; r < rows.size(); r++) {
        vectors[c].set(r, rows.get(r)[c]);
      }
    }
    return vectors;
  }

  /** Each row's truth value as the row path's generated code evaluates the same condition. */
  private static List<Boolean> rowPathTruths(Bound bound, List<Object[]> rows) {
    Filter filter = bound.filter();
    RexBuilder rexBuilder = filter.getCluster().getRexBuilder();
    CompiledExpressions condition =
        CompiledExpressions.compile(
            List.of(filter.getCondition()),
            filter.getInput().getRowType(),
            bound.plan().bucketing(),
            rexBuilder);
    CompiledExpressions.RowContext context =
        new CompiledExpressions.RowContext((JavaTypeFactory) rexBuilder.getTypeFactory());
    List<Boolean> truths = new ArrayList<>();
    for (Object[] row : rows) {
      truths.add((Boolean) condition.evaluate(row, context)[0]);
    }
    return truths;
  }

  private static List<Boolean> columnarTruths(VectorPredicate predicate, Vector[] vectors, int n) {
    VectorPredicate.Selector selector = predicate.newSelector();
    long[] selected = selector.select(vectors, n);
    List<Boolean> truths = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      Boolean truth = selector.truth(r);
      assertThat(VectorPredicate.Selector.isSet(selected, r)).isEqualTo(truth == Boolean.TRUE);
      truths.add(truth);
    }
    return truths;
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        // integers, each operator, either side, BETWEEN, IN lists, null tests
        "i = 3",
        "i <> 3",
        "i < 3",
        "i <= 3",
        "i > 3",
        "i >= -3",
        "3 < i",
        "i > 10.5",
        "i <= 2.5",
        "CAST(i AS BIGINT) > 3",
        "i BETWEEN -2 AND 4",
        "i NOT BETWEEN -2 AND 4",
        "i IN (1, 3, 5)",
        "i NOT IN (1, 3)",
        "i IN (1, NULL)",
        "i NOT IN (1, NULL)",
        "i IS NULL",
        "i IS NOT NULL",
        "l >= 500",
        "l = 7",
        "l < 20 OR l > 990",
        // doubles: literals the converter casts
        "d > 10",
        "d <= 2.5",
        "d = 25",
        "d <> 12.5",
        "d BETWEEN 1 AND 20.5",
        "d IN (0, 5, 7.5)",
        // strings
        "s = 's1'",
        "s <> 's3'",
        "s < 's2'",
        "s >= 's2'",
        "s IN ('s1', 's4')",
        "s NOT IN ('s0', 's2')",
        "s IS NULL",
        // booleans
        "flag",
        "NOT flag",
        "flag = false",
        "flag <> true",
        "flag IS TRUE",
        "flag IS NOT TRUE",
        "flag IS FALSE",
        "flag IS NOT FALSE",
        // dates
        "dt >= DATE '2026-01-10'",
        "dt = DATE '2026-01-05'",
        "dt BETWEEN DATE '2026-01-03' AND DATE '2026-01-09'",
        // decimals, compared whatever their scales
        "dec > 10.5",
        "dec = 12.25",
        "dec IN (1.5, 2.50, 3)",
        "dec <= 100",
        // timestamps at their precision: micro- and nanosecond literals on micro- and nanosecond
        // columns, with and without time zone
        "b >= TIMESTAMP '2026-04-08 12:00:00'",
        "b > TIMESTAMP '2026-04-08 12:00:00.000500'",
        "b = TIMESTAMP '2026-04-08 12:00:00.000500'",
        "b > TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "b >= TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "b < TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "b <= TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "b = TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "b <> TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "tn < TIMESTAMP '2026-04-08 12:00:00.000500500'",
        "tn = TIMESTAMP '2026-04-08 12:00:00.000000500'",
        "tn >= TIMESTAMP '2026-04-08 12:00:00.0005'",
        "ts BETWEEN TIMESTAMP '2026-04-08 12:00:00' AND TIMESTAMP '2026-04-08 12:00:00.000500'",
        // logic
        "i > 0 AND s <> 's3'",
        "i > 0 OR d < 5",
        "NOT (i > 3)",
        "NOT (i > 3 AND flag)",
        "NOT (i > 3 OR s = 's1')",
        "(i IS NULL OR l < 100) AND NOT (flag IS FALSE)",
        "(i > 0 AND d > 10) OR (s IN ('s1', 's2') AND NOT flag) OR dt = DATE '2026-01-02'",
        "(i > 0 OR flag) IS NOT TRUE",
        "(i > 0 AND flag) IS FALSE",
      })
  void shouldGiveEachRowTheTruthValueOfTheRowPath(String where) throws InvalidViewException {
    // Given a WHERE the columnar filter covers, and rows with nulls in every column
    Bound bound = bind(where);
    Optional<VectorPredicate> predicate = columnar(where);
    List<Object[]> rows = rows(1_000);

    // When it evaluates a batch of them
    assertThat(predicate).as("columnar form of %s", bound.filter().getCondition()).isPresent();
    List<Boolean> columnar = columnarTruths(predicate.get(), vectors(rows), rows.size());

    // Then each row is TRUE, FALSE or UNKNOWN as the generated row-at-a-time code says, and the
    // rows are not all alike
    assertThat(columnar)
        .as("%s as %s", where, predicate.get())
        .isEqualTo(rowPathTruths(bound, rows));
    assertThat(new HashSet<>(columnar)).as("truth values met").hasSizeGreaterThan(1);
  }

  @Test
  void shouldSelectNoRowWhoseComparisonMeetsANull() throws InvalidViewException {
    // Given a batch whose i is NULL, 5 and 1
    Vector[] vectors = vectors(List.of(row(null, "s1"), row(5, "s1"), row(1, null)));

    // When comparisons of i meet the null, either way
    for (String where :
        List.of("i > 3", "i <> 3", "i <= 3", "i IN (5, NULL)", "s = 's1' AND i > 3")) {
      List<Boolean> truths = columnarTruths(columnar(where).orElseThrow(), vectors, 3);

      // Then that row is UNKNOWN: neither selected nor FALSE
      assertThat(truths.get(0)).as(where).isNull();
    }
    assertThat(columnarTruths(columnar("i <> 3").orElseThrow(), vectors, 3))
        .containsExactly(null, true, true);
  }

  @Test
  void shouldKeepNotOfUnknownUnknownAndLetOrAndAndDecideAroundIt() throws InvalidViewException {
    // Given a batch whose i is NULL, 5 and 1, and whose s is s1, s1 and NULL
    Vector[] vectors = vectors(List.of(row(null, "s1"), row(5, "s1"), row(1, null)));

    // When NOT, OR and AND meet an UNKNOWN
    // Then NOT of UNKNOWN is UNKNOWN, TRUE OR UNKNOWN is TRUE, FALSE AND UNKNOWN is FALSE
    assertThat(columnarTruths(columnar("NOT (i > 3)").orElseThrow(), vectors, 3))
        .containsExactly(null, false, true);
    assertThat(columnarTruths(columnar("i > 3 OR s = 's1'").orElseThrow(), vectors, 3))
        .containsExactly(true, true, null);
    assertThat(columnarTruths(columnar("i > 3 AND s = 's2'").orElseThrow(), vectors, 3))
        .containsExactly(false, false, false);
    assertThat(columnarTruths(columnar("NOT (i > 3 AND s = 's1')").orElseThrow(), vectors, 3))
        .containsExactly(null, false, true);
  }

  private static Object[] row(Integer i, String s) {
    Object[] row = new Object[SOURCE.columns().size()];
    row[0] = 0L;
    row[I] = i;
    row[S] = s;
    return row;
  }

  @Test
  void shouldCompileABetweenOfALongColumnToOneRangeAndAnInListOfStringsToOneList()
      throws InvalidViewException {
    assertThat(columnar("i BETWEEN -2 AND 4").orElseThrow()).hasToString("$2 in [-2, 4]");
    assertThat(columnar("i > 3 AND i < 0").orElseThrow()).hasToString("$2 in [1, 0]");
    assertThat(columnar("s IN ('s4', 's1', 's2')").orElseThrow()).hasToString("$5 in [s1, s2, s4]");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "i + 1 > 3",
        "s LIKE 's%'",
        "l > i",
        "upper(s) = 'S1'",
        "i > 0 AND s LIKE 's%'",
        "NOT (s LIKE 's%')",
        "b > TIMESTAMP '2026-04-08 12:00:00' + INTERVAL '1' HOUR",
        "extract(hour FROM b) = 12",
        "(i > 0) IS NULL",
        "i IS DISTINCT FROM 3"
      })
  void shouldLeaveAnyOtherWhereToTheRowPath(String where) throws InvalidViewException {
    assertThat(columnar(where)).as(where).isEmpty();
  }

  @Test
  void shouldAnswerAStringTestOncePerDictionaryEntryOverADictionaryVector()
      throws InvalidViewException {
    // Given a batch of dictionary ids into four strings, with nulls, whose values are never
    // boxed
    String[] dictionary = {"s0", "s1", "s2", "s4"};
    int n = 700;
    Random random = new Random(3);
    Dictionary strings = new Dictionary(dictionary, n);
    List<Object[]> rows = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      boolean isNull = random.nextInt(7) == 0;
      strings.ids[r] = random.nextInt(dictionary.length);
      strings.nulls[r] = isNull;
      rows.add(row(0, isNull ? null : dictionary[strings.ids[r]]));
    }
    Vector[] plain = vectors(rows);
    Vector[] encoded = plain.clone();
    encoded[S] = strings;

    for (String where : List.of("s = 's1'", "s IN ('s1', 's4')", "s NOT IN ('s0')", "s < 's2'")) {
      // When the filter evaluates it
      List<Boolean> fromIds = columnarTruths(columnar(where).orElseThrow(), encoded, n);

      // Then each row has the truth value of its string
      assertThat(fromIds)
          .as(where)
          .isEqualTo(columnarTruths(columnar(where).orElseThrow(), plain, n));
    }
    assertThatThrownBy(() -> strings.get(0)).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void shouldTestTheRowsOfTheParquetReadersDictionaryVectorByIdAndTheRowsItHoldsAsValuesByValue()
      throws InvalidViewException {
    // Given the reader's vector of a chunk whose dictionary fell back to plain values part way,
    // with nulls among both kinds of rows
    String[] dictionary = {"s0", "s1", "s2", "s4"};
    int n = 700;
    Random random = new Random(5);
    DictionaryVector strings = new DictionaryVector();
    strings.setDictionary(dictionary);
    List<Object[]> rows = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      String value;
      if (random.nextInt(7) == 0) {
        strings.setNull(r);
        value = null;
      } else if (r < n / 2) {
        int id = random.nextInt(dictionary.length);
        strings.setId(r, id);
        value = dictionary[id];
      } else {
        value = "s" + random.nextInt(6);
        strings.set(r, value);
      }
      rows.add(row(0, value));
    }
    Vector[] plain = vectors(rows);
    Vector[] encoded = plain.clone();
    encoded[S] = strings;

    for (String where : List.of("s = 's1'", "s IN ('s1', 's5')", "s NOT IN ('s0')", "s >= 's3'")) {
      // When the filter evaluates it, then each row has the truth value of its string
      assertThat(columnarTruths(columnar(where).orElseThrow(), encoded, n))
          .as(where)
          .isEqualTo(columnarTruths(columnar(where).orElseThrow(), plain, n));
    }
  }

  /** A dictionary-encoded string vector that answers only through its ids. */
  private static final class Dictionary extends Vector implements DictionaryEncoded {
    private final String[] entries;
    final int[] ids;
    final boolean[] nulls;

    Dictionary(String[] entries, int n) {
      this.entries = entries;
      this.ids = new int[n];
      this.nulls = new boolean[n];
      Arrays.fill(ids, -1);
    }

    @Override
    public int entries() {
      return entries.length;
    }

    @Override
    public Object entry(int id) {
      return entries[id];
    }

    @Override
    public int[] ids() {
      return ids;
    }

    @Override
    public boolean isNull(int row) {
      return nulls[row];
    }

    @Override
    public Object get(int row) {
      throw new UnsupportedOperationException("a dictionary vector's rows are read by id");
    }

    @Override
    public void setNull(int row) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void set(int row, Object value) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void move(int from, int to) {
      throw new UnsupportedOperationException();
    }
  }
}
