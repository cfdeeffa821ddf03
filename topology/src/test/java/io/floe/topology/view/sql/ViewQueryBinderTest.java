package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** View queries checked against a real Iceberg schema: types, unknown names, derived plan. */
public class ViewQueryBinderTest {

  /** A source schema with a column of every type the view language reads. */
  public static final Schema TRADES =
      new Schema(
          Types.NestedField.required(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "price", Types.DoubleType.get()),
          Types.NestedField.optional(4, "quantity", Types.LongType.get()),
          Types.NestedField.optional(5, "status", Types.StringType.get()),
          Types.NestedField.optional(6, "trade_date", Types.DateType.get()),
          Types.NestedField.optional(7, "side", Types.StringType.get()),
          Types.NestedField.optional(8, "local_ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(9, "ts_ns", Types.TimestampNanoType.withoutZone()),
          Types.NestedField.optional(10, "amount", Types.DecimalType.of(18, 4)),
          Types.NestedField.optional(11, "is_buy", Types.BooleanType.get()),
          Types.NestedField.optional(12, "venue_id", Types.IntegerType.get()),
          Types.NestedField.optional(13, "unused", Types.StringType.get()));

  private static ViewPlan bind(String sql) throws InvalidViewException {
    return bind(sql, ZoneOffset.UTC);
  }

  private static ViewPlan bind(String sql, ZoneId zone) throws InvalidViewException {
    return ViewQueryBinder.bind(ViewQueryParser.parse(sql), TRADES, zone);
  }

  private static Map<String, String> types(ViewPlan plan) {
    return plan.outputSchema().columns().stream()
        .collect(
            Collectors.toMap(
                Types.NestedField::name,
                f -> f.type().toString(),
                (a, b) -> a,
                java.util.LinkedHashMap::new));
  }

  @Test
  void shouldDeriveTheTargetSchemaOfTheOhlcvView() throws InvalidViewException {
    ViewPlan plan =
        bind(
            """
            SELECT symbol, date_trunc('minute', ts) AS minute_ts,
                   min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
                   max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trade_count
            FROM lake.market.trades
            GROUP BY symbol, date_trunc('minute', ts)
            """);

    assertThat(types(plan))
        .containsExactly(
            Map.entry("symbol", "string"),
            Map.entry("minute_ts", "timestamptz"),
            Map.entry("open", "double"),
            Map.entry("high", "double"),
            Map.entry("low", "double"),
            Map.entry("close", "double"),
            Map.entry("volume", "long"),
            Map.entry("trade_count", "long"));
    assertThat(plan.bucketColumn()).isEqualTo("ts");
    assertThat(plan.bucketing().columnType()).isEqualTo(BucketColumnType.TIMESTAMPTZ);
    assertThat(plan.requiredColumns()).containsExactly("symbol", "ts", "price", "quantity");
    assertThat(plan.outputSchema().columns()).allMatch(Types.NestedField::isOptional);
  }

  @Test
  void shouldTypeEveryTrinoAggregate() throws InvalidViewException {
    ViewPlan plan =
        bind(
            """
            SELECT date_trunc('hour', ts) AS hour_ts,
                   count(*) AS n, count(side) AS n_side, count(DISTINCT symbol) AS symbols,
                   sum(quantity) AS volume, sum(amount) AS notional, avg(quantity) AS avg_qty,
                   avg(price) AS avg_price, min(ts) AS first_ts, max(symbol) AS last_symbol,
                   min_by(price, ts) AS open, max_by(price, ts) AS close,
                   count_if(is_buy) AS buys, bool_and(is_buy) AS all_buys,
                   bool_or(is_buy) AS any_buy, arbitrary(venue_id) AS some_venue,
                   approx_distinct(symbol) AS approx_symbols,
                   approx_percentile(price, 0.5) AS median_price,
                   approx_percentile(price, quantity, 0.9) AS p90_weighted,
                   stddev(price) AS sd, variance(quantity) AS var,
                   sum(price * quantity) / sum(quantity) AS vwap
            FROM lake.market.trades
            GROUP BY 1
            """);

    assertThat(types(plan))
        .containsEntry("n", "long")
        .containsEntry("n_side", "long")
        .containsEntry("symbols", "long")
        .containsEntry("volume", "long")
        .containsEntry("notional", "decimal(38, 4)")
        .containsEntry("avg_qty", "double")
        .containsEntry("avg_price", "double")
        .containsEntry("first_ts", "timestamptz")
        .containsEntry("last_symbol", "string")
        .containsEntry("open", "double")
        .containsEntry("buys", "long")
        .containsEntry("all_buys", "boolean")
        .containsEntry("any_buy", "boolean")
        .containsEntry("some_venue", "int")
        .containsEntry("approx_symbols", "long")
        .containsEntry("median_price", "double")
        .containsEntry("p90_weighted", "double")
        .containsEntry("sd", "double")
        .containsEntry("var", "double")
        .containsEntry("vwap", "double");
  }

  @Test
  void shouldAcceptScalarExpressionsInProjectionsAndWhere() throws InvalidViewException {
    ViewPlan plan =
        bind(
            """
            SELECT lower(symbol) AS sym,
                   CASE WHEN side = 'B' THEN 'buy' ELSE 'sell' END AS direction,
                   date_trunc('day', ts) AS day_ts,
                   sum(CAST(quantity AS double) * coalesce(price, 0)) AS notional,
                   max(length(status) + 1) AS max_len,
                   max(concat(symbol, '-', side)) AS tag,
                   max(substr(symbol, 1, 2)) AS prefix,
                   count_if(if(is_buy, price > 10, false)) AS big_buys,
                   max(year(ts)) AS yr, max(day_of_week(ts)) AS dow,
                   max(extract(hour FROM ts)) AS hr, max(date(local_ts)) AS d,
                   max(symbol || '!') AS shout, max(abs(price) + round(price, 2)) AS rounded
            FROM lake.market.trades
            WHERE status IN ('settled', 'open') AND price BETWEEN 1 AND 1000
              AND upper(side) <> 'X' AND symbol LIKE 'A%' AND quantity IS NOT NULL
            GROUP BY 1, 2, 3
            HAVING count(*) > 1
            """);

    assertThat(plan.groupKeys()).containsExactly("sym", "direction");
    assertThat(types(plan))
        .containsEntry("sym", "string")
        .containsEntry("notional", "double")
        .containsEntry("max_len", "int")
        .containsEntry("d", "date");
    assertThat(plan.requiredColumns())
        .containsExactly(
            "symbol", "ts", "price", "quantity", "status", "side", "local_ts", "is_buy");
  }

  @Test
  void shouldMatchColumnNamesCaseInsensitively() throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT SYMBOL, DATE_TRUNC('Day', Ts) AS Day_Ts, SUM(Quantity) AS Volume"
                + " FROM LAKE.MARKET.TRADES GROUP BY 1, 2");

    assertThat(plan.bucketColumn()).isEqualTo("ts");
    assertThat(types(plan)).containsKeys("SYMBOL", "Day_Ts", "Volume");
  }

  @Test
  void shouldBucketDateAndNanosecondColumns() throws InvalidViewException {
    ViewPlan weekly =
        bind(
            "SELECT date_trunc('week', trade_date) AS week, count(*) AS n"
                + " FROM lake.market.trades GROUP BY 1");
    ViewPlan minutely =
        bind(
            "SELECT date_trunc('minute', ts_ns) AS minute_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY 1");

    assertThat(weekly.bucketing().columnType()).isEqualTo(BucketColumnType.DATE);
    assertThat(types(weekly)).containsEntry("week", "date");
    assertThat(minutely.bucketing().columnType()).isEqualTo(BucketColumnType.TIMESTAMP_NS);
    assertThat(types(minutely)).containsEntry("minute_ts", "timestamp");
  }

  @Test
  void shouldUseTheViewTimeZoneForBuckets() throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT date_trunc('day', ts) AS day_ts, count(*) AS n FROM lake.market.trades"
                + " GROUP BY 1",
            ZoneId.of("Europe/Paris"));

    assertThat(plan.bucketing().zone()).isEqualTo(ZoneId.of("Europe/Paris"));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          UNKNOWN_COLUMN     | SELECT date_trunc('day', ts) AS d, sum(qty) AS v FROM lake.m.trades GROUP BY 1 | 1 | 40 | qty
          UNKNOWN_COLUMN     | SELECT date_trunc('day', tss) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 26 | tss
          UNKNOWN_COLUMN     | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE colour = 'red' GROUP BY 1 | 1 | 75 | colour
          UNKNOWN_FUNCTION   | SELECT date_trunc('day', ts) AS d, median(price) AS m FROM lake.m.trades GROUP BY 1 | 1 | 36 | median
          UNKNOWN_FUNCTION   | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE frobnicate(symbol) GROUP BY 1 | 1 | 75 | frobnicate
          INVALID_ARGUMENT   | SELECT date_trunc('day', ts) AS d, sum(symbol) AS s FROM lake.m.trades GROUP BY 1 | 1 | 36 | SUM
          INVALID_ARGUMENT   | SELECT date_trunc('day', ts) AS d, approx_percentile(price, 1.5) AS p FROM lake.m.trades GROUP BY 1 | 1 | 61 | between 0 and 1
          BUCKET_COLUMN_TYPE | SELECT date_trunc('day', symbol) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 26 | symbol is string
          BUCKET_COLUMN_TYPE | SELECT date_trunc('day', price) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 26 | price is double
          BUCKET_COLUMN_TYPE | SELECT date_trunc('hour', trade_date) AS h, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 27 | trade_date is a date
          INVALID_QUERY      | SELECT date_trunc('day', ts) AS d, price AS p FROM lake.m.trades GROUP BY 1 | 1 | 36 | not being grouped
          UNSUPPORTED_TYPE   | SELECT date_trunc('day', ts) AS d, INTERVAL '1' DAY AS span FROM lake.m.trades GROUP BY 1 | 1 | 36 | span
          """)
  void shouldRejectWithTheRuleAndItsPosition(
      String rule, String sql, int line, int column, String detail) {
    assertThatThrownBy(() -> bind(sql))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.valueOf(rule));
              assertThat(List.of(e.line(), e.column())).containsExactly(line, column);
              assertThat(e.getMessage()).contains(detail);
            });
  }

  @Test
  void shouldNameTheUnknownColumnInTheMessage() {
    assertThatThrownBy(
            () ->
                bind(
                    """
                    SELECT symbol, date_trunc('day', ts) AS day_ts,
                           sum(qty) AS volume
                    FROM lake.m.trades
                    GROUP BY 1, 2
                    """))
        .isInstanceOf(InvalidViewException.class)
        .hasMessage("Invalid view query at line 2, column 12: unknown column: qty");
  }

  @Test
  void shouldListOutputColumnsInSelectOrder() throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT count(*) AS n, date_trunc('day', ts) AS d, symbol FROM lake.m.trades"
                + " GROUP BY 2, 3");

    assertThat(
            plan.outputSchema().columns().stream()
                .map(Types.NestedField::name)
                .collect(Collectors.toList()))
        .containsExactly("n", "d", "symbol");
    assertThat(
            plan.outputSchema().columns().stream()
                .collect(Collectors.toMap(Types.NestedField::name, Function.identity()))
                .get("d")
                .fieldId())
        .isEqualTo(2);
  }

  /** Every scalar function the README lists validates under its Trino name. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiterString = "=>",
      textBlock =
          """
          max(CASE WHEN price > 1 THEN 1 ELSE 0 END) => int
          max(coalesce(price, 0.0)) => double
          max(nullif(quantity, 0)) => long
          max(if(is_buy, 1, 0)) => int
          max(CAST(price AS bigint)) => long
          max(try_cast(symbol AS integer)) => int
          max(greatest(price, 1.0)) => double
          max(least(quantity, 5)) => long
          max(lower(symbol)) => string
          max(upper(symbol)) => string
          max(length(symbol)) => int
          max(substr(symbol, 2)) => string
          max(substring(symbol FROM 1 FOR 2)) => string
          max(concat(symbol, side)) => string
          max(concat_ws('-', symbol, side)) => string
          max(symbol || side) => string
          max(trim(symbol)) => string
          max(ltrim(symbol)) => string
          max(rtrim(symbol)) => string
          max(lpad(symbol, 5, 'x')) => string
          max(rpad(symbol, 5, 'x')) => string
          max(replace(symbol, 'A', 'B')) => string
          max(reverse(symbol)) => string
          max(strpos(symbol, 'A')) => int
          max(position('A' IN symbol)) => int
          max(split_part(symbol, '.', 1)) => string
          count_if(starts_with(symbol, 'A')) => long
          count_if(regexp_like(symbol, '^A')) => long
          count_if(symbol LIKE 'A%' AND price BETWEEN 1 AND 2 AND side IN ('B', 'S')) => long
          max(abs(price)) => double
          max(round(price, 2)) => double
          max(floor(price)) => double
          max(ceil(price)) => double
          max(truncate(price)) => double
          max(mod(quantity, 7)) => int
          max(quantity % 7) => int
          max(power(price, 2)) => double
          max(sqrt(price)) => double
          max(cbrt(price)) => double
          max(exp(price)) => double
          max(ln(price)) => double
          max(log2(price)) => double
          max(log10(price)) => double
          max(sign(price)) => double
          max(extract(hour FROM ts)) => long
          max(year(ts)) => long
          max(quarter(ts)) => long
          max(month(ts)) => long
          max(week(ts)) => long
          max(week_of_year(ts)) => long
          max(day(ts)) => long
          max(day_of_month(ts)) => long
          max(day_of_week(ts)) => long
          max(dow(ts)) => long
          max(day_of_year(ts)) => long
          max(doy(ts)) => long
          max(year_of_week(ts)) => long
          max(hour(ts)) => long
          max(minute(ts)) => long
          max(second(ts)) => long
          max(millisecond(ts)) => long
          max(date(ts)) => date
          count(*) FILTER (WHERE price > 1) => long
          sum(DISTINCT quantity) => long
          max(price) - min(price) => double
          stddev_samp(price) => double
          stddev_pop(price) => double
          var_samp(price) => double
          var_pop(price) => double
          """)
  void shouldAcceptTheListedFunction(String expression, String type) throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT date_trunc('day', ts) AS d, "
                + expression
                + " AS x FROM lake.market.trades GROUP BY 1");

    assertThat(plan.outputSchema().findField("x").type().toString()).isEqualTo(type);
  }
}
