package io.floe.topology.refresh.eval.agg;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.RowAggregation;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.math.BigDecimal;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Partial aggregations over disjoint parts of the rows, merged, equal one aggregation over all of
 * them, for every aggregate Floe evaluates, typed or boxed: what lets a refresh split its files
 * across threads.
 */
class PartialAggregationTest {

  private static final Schema SOURCE =
      new Schema(
          Types.NestedField.required(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "price", Types.DoubleType.get()),
          Types.NestedField.optional(4, "quantity", Types.LongType.get()),
          Types.NestedField.optional(5, "side", Types.StringType.get()),
          Types.NestedField.optional(6, "n", Types.IntegerType.get()),
          Types.NestedField.optional(7, "amount", Types.DecimalType.of(12, 2)));

  private static final String EVERY_AGGREGATE =
      """
      SELECT symbol, date_trunc('hour', ts) AS h,
             count(*) AS c, count(side) AS cs, count_if(side = 'B') AS cb,
             sum(quantity) AS sq, sum(n) AS sn, sum(price) AS sp, sum(amount) AS sa,
             avg(price) AS ap, avg(amount) AS aa,
             min(price) AS minp, max(price) AS maxp, min(quantity) AS minq, max(n) AS maxn,
             min(side) AS mins, max(ts) AS maxts, arbitrary(side) AS anys,
             bool_and(price > 10) AS alls, bool_or(price > 40) AS anyb,
             min_by(price, ts) AS open, max_by(price, ts) AS close,
             min_by(quantity, ts) AS firstq, max_by(side, ts) AS lastside,
             min_by(price, quantity) AS pbyq,
             count(DISTINCT side) AS sides, approx_distinct(quantity) AS dq,
             approx_percentile(price, 0.5) AS median, approx_percentile(price, quantity, 0.9) AS p90,
             stddev(price) AS sd, var_pop(price) AS vp,
             sum(quantity) FILTER (WHERE side = 'S') AS sold, sum(DISTINCT n) AS dn
      FROM lake.market.trades
      GROUP BY symbol, date_trunc('hour', ts)
      """;

  @Test
  void shouldMergePartialStatesOfEveryAggregateExactly() throws InvalidViewException {
    CompiledQuery query = compile(EVERY_AGGREGATE);
    List<Object[]> rows = rows(4000);

    List<Object[]> whole = aggregateRowAtATime(query, rows);
    List<Object[]> merged = mergedParts(query, rows, 3);

    assertSameRows(merged, whole);
  }

  @Test
  void shouldMergePartialsThatSawDifferentGroupsAndDictionaries() throws InvalidViewException {
    CompiledQuery query = compile(EVERY_AGGREGATE);
    List<Object[]> rows = rows(3000);
    // Part 0 sees only symbol A, part 1 only B and C, in a different first-seen order.
    List<List<Object[]>> parts = List.of(new ArrayList<>(), new ArrayList<>());
    for (int i = rows.size() - 1; i >= 0; i--) {
      Object[] row = rows.get(i);
      parts.get("A".equals(row[0]) ? 0 : 1).add(row);
    }

    PartialAggregation first = partial(query, parts.get(0));
    first.merge(partial(query, parts.get(1)));

    assertSameRows(first.results(), aggregateRowAtATime(query, rows));
  }

  @Test
  void shouldMergeRowEvaluatedPartialsOfViewsWithWhereAndExpressions() throws InvalidViewException {
    CompiledQuery query =
        compile(
            "SELECT upper(side) AS s, date_trunc('day', ts) AS d, sum(price * quantity) AS v,"
                + " min_by(price, ts) AS o, count(*) AS c FROM lake.market.trades"
                + " WHERE quantity > 3 GROUP BY 1, 2 HAVING count(*) > 2");
    List<Object[]> rows = rows(2000);

    assertSameRows(mergedParts(query, rows, 4), aggregateRowAtATime(query, rows));
  }

  private static CompiledQuery compile(String sql) throws InvalidViewException {
    ViewPlan plan = ViewQueryBinder.bind(ViewQueryParser.parse(sql), SOURCE, ZoneOffset.UTC);
    return CompiledQuery.compile(plan);
  }

  /** Rows with nulls, ties on ts, and values that make every aggregate do something. */
  private static List<Object[]> rows(int n) {
    Random random = new Random(11);
    long base = 1_775_000_000_000_000L;
    List<Object[]> rows = new ArrayList<>();
    String[] symbols = {"A", "B", "C"};
    for (int i = 0; i < n; i++) {
      rows.add(
          new Object[] {
            symbols[random.nextInt(3)],
            random.nextInt(50) == 0 ? null : base + random.nextInt(6 * 3600) * 1_000_000L / 4,
            random.nextInt(30) == 0 ? null : random.nextInt(400) / 8.0,
            random.nextInt(30) == 0 ? null : (long) random.nextInt(20),
            random.nextInt(10) == 0 ? null : random.nextBoolean() ? "B" : "S",
            random.nextInt(10) == 0 ? null : random.nextInt(7) - 3,
            random.nextInt(10) == 0 ? null : BigDecimal.valueOf(random.nextInt(10_000), 2)
          });
    }
    return rows;
  }

  private static List<Object[]> aggregateRowAtATime(CompiledQuery query, List<Object[]> rows) {
    RowAggregation aggregation = RowAggregation.of(query, SOURCE, 1);
    rows.forEach(aggregation::add);
    return aggregation.results();
  }

  /** The rows dealt round-robin to {@code parts} partial aggregations, merged into the first. */
  private static List<Object[]> mergedParts(CompiledQuery query, List<Object[]> rows, int parts) {
    List<List<Object[]>> split = new ArrayList<>();
    for (int p = 0; p < parts; p++) {
      split.add(new ArrayList<>());
    }
    for (int i = 0; i < rows.size(); i++) {
      split.get(i % parts).add(rows.get(i));
    }
    PartialAggregation merged = partial(query, split.get(0));
    for (int p = 1; p < parts; p++) {
      merged.merge(partial(query, split.get(p)));
    }
    return merged.results();
  }

  private static PartialAggregation partial(CompiledQuery query, List<Object[]> rows) {
    Vector[] vectors = new Vector[SOURCE.columns().size()];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = Vectors.forIceberg(SOURCE.columns().get(c).type());
    }
    PartialAggregation aggregation =
        new PartialAggregation(
            query,
            vectors,
            1,
            BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
            true);
    int n = 0;
    for (Object[] row : rows) {
      for (int c = 0; c < vectors.length; c++) {
        vectors[c].set(n, row[c]);
      }
      if (++n == Vectors.BATCH) {
        aggregation.add(n);
        n = 0;
      }
    }
    if (n > 0) {
      aggregation.add(n);
    }
    return aggregation;
  }

  private static void assertSameRows(List<Object[]> actual, List<Object[]> expected) {
    assertThat(expected).isNotEmpty();
    assertThat(actual).hasSameSizeAs(expected);
    for (int r = 0; r < expected.size(); r++) {
      Object[] e = expected.get(r);
      Object[] a = actual.get(r);
      for (int c = 0; c < e.length; c++) {
        if (e[c] instanceof Double x && a[c] instanceof Double y) {
          assertThat(y)
              .as("row %d column %d", r, c)
              .isCloseTo(x, org.assertj.core.data.Offset.offset(1e-9 * Math.max(1, Math.abs(x))));
        } else {
          assertThat(a[c]).as("row %d column %d", r, c).isEqualTo(e[c]);
        }
      }
    }
  }
}
