package io.floe.topology.refresh.eval;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Evaluation of compiled view queries over native rows, without any I/O. */
class CompiledQueryTest {

  private static final Schema TRADES =
      new Schema(
          Types.NestedField.required(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "price", Types.DoubleType.get()),
          Types.NestedField.optional(4, "quantity", Types.LongType.get()),
          Types.NestedField.optional(5, "side", Types.StringType.get()));

  private static long micros(String instant) {
    Instant i = Instant.parse(instant);
    return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
  }

  private static Object[] trade(
      String symbol, String ts, Double price, Long quantity, String side) {
    return new Object[] {symbol, ts == null ? null : micros(ts), price, quantity, side};
  }

  private static List<Object[]> evaluate(String sql, ZoneId zone, Object[]... rows)
      throws InvalidViewException {
    ViewPlan plan = ViewQueryBinder.bind(ViewQueryParser.parse(sql), TRADES, zone);
    RowAggregation aggregation = RowAggregation.of(plan);
    for (Object[] row : rows) {
      aggregation.add(row);
    }
    return aggregation.results();
  }

  private static java.util.Optional<List<CompiledQuery.Merge>> decomposition(String select)
      throws InvalidViewException {
    ViewPlan plan = ViewQueryBinder.bind(ViewQueryParser.parse(select), TRADES, ZoneOffset.UTC);
    return CompiledQuery.compile(plan).decomposition();
  }

  @Test
  void shouldCompileABoundPlanOnceWhileItIsInUse() throws InvalidViewException {
    // Given a plan bound once
    ViewPlan plan =
        ViewQueryBinder.bind(
            ViewQueryParser.parse(
                "SELECT symbol, date_trunc('minute', ts) AS m, count(*) AS n"
                    + " FROM lake.market.trades GROUP BY 1, 2"),
            TRADES,
            ZoneOffset.UTC);

    // When the engine is asked for its compiled form twice
    CompiledQuery first = CompiledQuery.of(plan);
    CompiledQuery second = CompiledQuery.of(plan);

    // Then Calcite's code generation ran once: both are the same compiled query
    assertThat(second).isSameAs(first);
  }

  @Test
  void shouldKnowWhichViewsAppendedRowsCanBeFoldedInto() throws InvalidViewException {
    assertThat(
            decomposition(
                "SELECT symbol, date_trunc('minute', ts) AS m, sum(quantity) AS v, count(*) AS n,"
                    + " min(price) AS lo, max(price) AS hi, count_if(side = 'B') AS b,"
                    + " bool_and(price > 1) AS a, bool_or(price > 9) AS o, arbitrary(side) AS s"
                    + " FROM lake.market.trades WHERE quantity > 0 GROUP BY 1, 2"))
        .contains(
            List.of(
                CompiledQuery.Merge.KEY,
                CompiledQuery.Merge.KEY,
                CompiledQuery.Merge.ADD,
                CompiledQuery.Merge.ADD,
                CompiledQuery.Merge.MIN,
                CompiledQuery.Merge.MAX,
                CompiledQuery.Merge.ADD,
                CompiledQuery.Merge.MIN,
                CompiledQuery.Merge.MAX,
                CompiledQuery.Merge.MIN));
    assertThat(
            decomposition(
                "SELECT count(*) AS n, date_trunc('hour', ts) AS h, symbol"
                    + " FROM lake.market.trades GROUP BY 2, 3"))
        .contains(
            List.of(CompiledQuery.Merge.ADD, CompiledQuery.Merge.KEY, CompiledQuery.Merge.KEY));
    for (String notDecomposable :
        List.of(
            "avg(price) AS x",
            "count(DISTINCT side) AS x",
            "min_by(price, ts) AS x",
            "approx_distinct(side) AS x",
            "stddev(price) AS x",
            "sum(price) / count(*) AS x",
            "sum(price) AS x")) {
      assertThat(
              decomposition(
                  "SELECT symbol, date_trunc('minute', ts) AS m, "
                      + notDecomposable
                      + " FROM lake.market.trades GROUP BY 1, 2"))
          .as(notDecomposable)
          .isEmpty();
    }
    assertThat(
            decomposition(
                "SELECT symbol, date_trunc('minute', ts) AS m, count(*) AS n"
                    + " FROM lake.market.trades GROUP BY 1, 2 HAVING count(*) > 1"))
        .as("HAVING")
        .isEmpty();
  }

  private static java.util.Optional<CompiledQuery.PartialStates> partialStates(String select)
      throws InvalidViewException {
    ViewPlan plan = ViewQueryBinder.bind(ViewQueryParser.parse(select), TRADES, ZoneOffset.UTC);
    return CompiledQuery.compile(plan).partialStates();
  }

  @Test
  void shouldKeepTheStatesOfTheAggregatesThatExpressionsAndHavingAreBuiltFrom()
      throws InvalidViewException {
    // A VWAP and a range: the parts of each expression keep their states under its name
    assertThat(
            partialStates(
                    "SELECT symbol, date_trunc('day', ts) AS d,"
                        + " sum(price * quantity) / sum(quantity) AS vwap,"
                        + " max(price) - min(price) AS price_range, max(price) AS high"
                        + " FROM lake.market.trades GROUP BY 1, 2")
                .orElseThrow()
                .columns())
        .containsExactly("symbol", "d", "vwap__1", "vwap__2", "high", "price_range__1");
    // HAVING over an aggregate no output column holds
    assertThat(
            partialStates(
                    "SELECT symbol, date_trunc('day', ts) AS d, avg(price) AS mean"
                        + " FROM lake.market.trades GROUP BY 1, 2 HAVING count(*) > 10")
                .orElseThrow()
                .columns())
        .containsExactly("symbol", "d", "mean", "having__1");
    // A group key that is no output column, an aggregate that does not merge: no states
    assertThat(
            partialStates(
                "SELECT date_trunc('day', ts) AS d, sum(price) / count(*) AS mean"
                    + " FROM lake.market.trades GROUP BY symbol, date_trunc('day', ts)"))
        .isEmpty();
    assertThat(
            partialStates(
                "SELECT symbol, date_trunc('day', ts) AS d, count(DISTINCT side) / count(*) AS x"
                    + " FROM lake.market.trades GROUP BY 1, 2"))
        .isEmpty();
  }

  @Test
  void shouldComputeOhlcvBarsPerMinuteAndSymbol() throws InvalidViewException {
    List<Object[]> bars =
        evaluate(
            """
            SELECT symbol, date_trunc('minute', ts) AS minute_ts,
                   min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
                   max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trade_count
            FROM lake.market.trades
            GROUP BY symbol, date_trunc('minute', ts)
            """,
            ZoneOffset.UTC,
            trade("AAPL", "2026-04-08T10:00:05.000001Z", 10.0, 5L, "B"),
            trade("AAPL", "2026-04-08T10:00:59Z", 12.0, 1L, "S"),
            trade("AAPL", "2026-04-08T10:00:05Z", 11.0, 2L, "B"),
            trade("MSFT", "2026-04-08T10:00:30Z", 99.0, 7L, "B"),
            trade("AAPL", "2026-04-08T10:01:00Z", 13.0, 3L, "S"));

    assertThat(bars)
        .containsExactly(
            new Object[] {"AAPL", micros("2026-04-08T10:00:00Z"), 11.0, 12.0, 10.0, 12.0, 8L, 3L},
            new Object[] {"MSFT", micros("2026-04-08T10:00:00Z"), 99.0, 99.0, 99.0, 99.0, 7L, 1L},
            new Object[] {"AAPL", micros("2026-04-08T10:01:00Z"), 13.0, 13.0, 13.0, 13.0, 3L, 1L});
  }

  @Test
  void shouldApplyWhereHavingFilterAndExpressionsOverAggregates() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            """
            SELECT date_trunc('day', ts) AS day_ts,
                   CASE WHEN side = 'B' THEN 'buy' ELSE 'sell' END AS direction,
                   sum(price * quantity) / sum(quantity) AS vwap,
                   count(*) FILTER (WHERE price > 10) AS big,
                   count(DISTINCT symbol) AS symbols
            FROM lake.market.trades
            WHERE symbol <> 'IGNORED'
            GROUP BY 1, 2
            HAVING count(*) > 1
            """,
            ZoneOffset.UTC,
            trade("A", "2026-04-08T10:00:00Z", 10.0, 1L, "B"),
            trade("B", "2026-04-08T11:00:00Z", 20.0, 3L, "B"),
            trade("A", "2026-04-08T12:00:00Z", 30.0, 1L, "B"),
            trade("IGNORED", "2026-04-08T12:00:00Z", 1000.0, 100L, "B"),
            trade("A", "2026-04-08T13:00:00Z", 5.0, 1L, "S"));

    assertThat(rows)
        .containsExactly(new Object[] {micros("2026-04-08T00:00:00Z"), "buy", 20.0, 2L, 2L});
  }

  @Test
  void shouldBucketInTheViewTimeZone() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            "SELECT date_trunc('day', ts) AS day_ts, count(*) AS n FROM lake.m.trades GROUP BY 1",
            ZoneId.of("Europe/Paris"),
            trade("A", "2026-04-07T21:59:59Z", 1.0, 1L, "B"),
            trade("A", "2026-04-07T22:00:00Z", 1.0, 1L, "B"));

    assertThat(rows)
        .containsExactly(
            new Object[] {micros("2026-04-06T22:00:00Z"), 1L},
            new Object[] {micros("2026-04-07T22:00:00Z"), 1L});
  }

  @Test
  void shouldKeepTheNullBucketAndNullGroupKeys() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            "SELECT side, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.trades GROUP BY 1, 2",
            ZoneOffset.UTC,
            trade("A", null, 1.0, 1L, "B"),
            trade("A", "2026-04-08T10:10:00Z", 1.0, 1L, null),
            trade("A", "2026-04-08T10:20:00Z", 1.0, 1L, null));

    assertThat(rows)
        .containsExactly(
            new Object[] {"B", null, 1L}, new Object[] {null, micros("2026-04-08T10:00:00Z"), 2L});
  }

  @Test
  void shouldSumRealsToARealThatOverflowsToInfinityAsTrinoDoes() throws InvalidViewException {
    // Given reals whose sum exceeds the largest real (Trino's sum(real) is a real; DuckDB's is a
    // double, 6e38, so the oracle cannot stand for Trino here)
    Schema amounts =
        new Schema(
            Types.NestedField.optional(1, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(2, "amount", Types.FloatType.get()));
    ViewPlan plan =
        ViewQueryBinder.bind(
            ViewQueryParser.parse(
                "SELECT date_trunc('day', ts) AS d, sum(amount) AS total, avg(amount) AS mean"
                    + " FROM lake.m.amounts GROUP BY 1"),
            amounts,
            ZoneOffset.UTC);
    RowAggregation aggregation = RowAggregation.of(plan);

    // When they are summed
    long at = micros("2026-04-08T10:00:00Z");
    aggregation.add(new Object[] {at, 3e38f});
    aggregation.add(new Object[] {at, 3e38f});

    // Then the sum is real +Infinity, and the average, summed in double, is finite
    Object[] row = aggregation.results().get(0);
    assertThat(row[1]).isEqualTo(Float.POSITIVE_INFINITY);
    assertThat(row[2]).isEqualTo(3e38f);
  }

  @Test
  void shouldComputeTheDeterministicVariantsOfTrinosApproximations() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            """
            SELECT date_trunc('day', ts) AS d, arbitrary(symbol) AS any_symbol,
                   approx_distinct(symbol) AS symbols, approx_percentile(price, 0.5) AS median,
                   approx_percentile(price, quantity, 0.9) AS p90, count_if(side = 'B') AS buys,
                   bool_and(price > 0) AS all_positive, bool_or(price > 25) AS any_big,
                   stddev_pop(price) AS sd, var_samp(price) AS var, avg(quantity) AS avg_qty
            FROM lake.m.trades GROUP BY 1
            """,
            ZoneOffset.UTC,
            trade("C", "2026-04-08T10:00:00Z", 10.0, 1L, "B"),
            trade("A", "2026-04-08T11:00:00Z", 20.0, 1L, "S"),
            trade("B", "2026-04-08T12:00:00Z", 30.0, 8L, "B"));

    Object[] row = rows.get(0);
    assertThat(row[1]).isEqualTo("A");
    assertThat(row[2]).isEqualTo(3L);
    assertThat(row[3]).isEqualTo(20.0);
    assertThat(row[4]).isEqualTo(30.0);
    assertThat(row[5]).isEqualTo(2L);
    assertThat(row[6]).isEqualTo(true);
    assertThat(row[7]).isEqualTo(true);
    assertThat((Double) row[8])
        .isCloseTo(Math.sqrt(200.0 / 3), org.assertj.core.data.Offset.offset(1e-9));
    assertThat((Double) row[9]).isCloseTo(100.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(row[10]).isEqualTo(10.0 / 3);
  }

  @Test
  void shouldBreakMinByTiesOnTheSmallestValue() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            "SELECT date_trunc('day', ts) AS d, min_by(price, ts) AS first_price,"
                + " max_by(price, ts) AS last_price FROM lake.m.trades GROUP BY 1",
            ZoneOffset.UTC,
            trade("A", "2026-04-08T10:00:00Z", 12.0, 1L, "B"),
            trade("A", "2026-04-08T10:00:00Z", 11.0, 1L, "B"),
            trade("A", "2026-04-08T11:00:00Z", 13.0, 1L, "B"),
            trade("A", "2026-04-08T11:00:00Z", 14.0, 1L, "B"));

    assertThat(rows.get(0)).containsExactly(micros("2026-04-08T00:00:00Z"), 11.0, 14.0);
  }

  @Test
  void shouldEvaluateScalarFunctionsAndTimestampExpressions() throws InvalidViewException {
    List<Object[]> rows =
        evaluate(
            """
            SELECT date_trunc('hour', ts) AS h, max(lower(symbol) || '-' || upper(side)) AS tag,
                   max(extract(minute FROM ts)) AS last_minute, max(year(ts)) AS yr,
                   max(ts) AS last_ts, max(length(symbol)) AS len,
                   max(if(price > 1, 'big', 'small')) AS size
            FROM lake.m.trades
            WHERE ts >= TIMESTAMP '2026-04-08 10:15:00' AND date_trunc('hour', ts) < TIMESTAMP '2026-04-09 00:00:00'
            GROUP BY 1
            """,
            ZoneOffset.UTC,
            trade("Abc", "2026-04-08T10:00:00Z", 2.0, 1L, "b"),
            trade("Abc", "2026-04-08T10:42:17.123456Z", 2.0, 1L, "b"),
            trade("Abc", "2026-04-09T10:42:17Z", 2.0, 1L, "b"));

    assertThat(rows)
        .containsExactly(
            new Object[] {
              micros("2026-04-08T10:00:00Z"),
              "abc-B",
              42L,
              2026L,
              micros("2026-04-08T10:42:17.123456Z"),
              3,
              "big"
            });
  }

  @Test
  void shouldRoundATimestampCastToALowerPrecisionAsTrinoDoes() throws InvalidViewException {
    // Trino rounds a timestamp cast to fewer digits, halves up; the oracle (DuckDB) has no
    // timestamp(3).
    List<Object[]> rows =
        evaluate(
            "SELECT symbol, date_trunc('hour', ts) AS h, max(CAST(ts AS TIMESTAMP(3))) AS ms"
                + " FROM lake.m.trades GROUP BY 1, 2",
            ZoneOffset.UTC,
            trade("A", "2026-04-08T10:00:00.000499Z", 1.0, 1L, "B"),
            trade("B", "2026-04-08T10:00:00.000500Z", 1.0, 1L, "B"),
            trade("C", "1969-12-31T23:59:59.999500Z", 1.0, 1L, "B"));

    assertThat(rows)
        .containsExactly(
            new Object[] {"C", micros("1969-12-31T23:00:00Z"), micros("1970-01-01T00:00:00Z")},
            new Object[] {"A", micros("2026-04-08T10:00:00Z"), micros("2026-04-08T10:00:00Z")},
            new Object[] {"B", micros("2026-04-08T10:00:00Z"), micros("2026-04-08T10:00:00.001Z")});
  }
}
