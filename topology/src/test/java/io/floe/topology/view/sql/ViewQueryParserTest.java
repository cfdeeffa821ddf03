package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewRule;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Structural rules of view queries: what the parser derives and what it rejects, and where. */
public class ViewQueryParserTest {

  private static final String OHLCV = TradeViews.OHLCV_1M;

  @Test
  void shouldDeriveSourceBucketAndKeysOfTheOhlcvView() throws InvalidViewException {
    ParsedViewQuery query = ViewQueryParser.parse(OHLCV);

    assertThat(query.source()).isEqualTo(TableName.parse("lake.market.trades"));
    assertThat(query.bucketColumn()).isEqualTo("ts");
    assertThat(query.granularity()).isEqualTo(Granularity.MINUTE);
    assertThat(query.bucketOutput()).isEqualTo("minute_ts");
    assertThat(query.groupKeys()).containsExactly("symbol");
    assertThat(query.outputColumns())
        .containsExactly(
            "symbol", "minute_ts", "open", "high", "low", "close", "volume", "trade_count");
  }

  @Test
  void shouldResolvePositionalGroupByToOutputColumns() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT symbol, date_trunc('week', ts) AS week, sum(quantity) AS volume"
                + " FROM lake.market.trades GROUP BY 1, 2");

    assertThat(query.granularity()).isEqualTo(Granularity.WEEK);
    assertThat(query.bucketOutput()).isEqualTo("week");
    assertThat(query.groupKeys()).containsExactly("symbol");
  }

  @Test
  void shouldResolveGroupByOutputNames() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT lower(symbol) AS sym, date_trunc('hour', ts) AS hour_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY sym, hour_ts");

    assertThat(query.bucketOutput()).isEqualTo("hour_ts");
    assertThat(query.groupKeys()).containsExactly("sym");
  }

  @Test
  void shouldResolveRepeatedExpressionsToOutputColumns() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT upper(side) AS side_u, symbol, date_trunc('day', ts) AS day_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY date_trunc('day', ts), upper(side), symbol");

    assertThat(query.groupKeys()).containsExactly("side_u", "symbol");
  }

  @Test
  void shouldAcceptMultiLevelNamespacesAndQuotedNames() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT date_trunc('MONTH', \"Ts\") AS \"month\", count(*) AS \"open\""
                + " FROM lake.market.eu.trades GROUP BY 1");

    assertThat(query.source().namespace()).containsExactly("market", "eu");
    assertThat(query.granularity()).isEqualTo(Granularity.MONTH);
    assertThat(query.bucketColumn()).isEqualTo("Ts");
    assertThat(query.outputColumns()).containsExactly("month", "open");
  }

  @Test
  void shouldAllowHavingAndWhereOnTheSameBucket() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            """
            SELECT symbol, date_trunc('day', ts) AS day_ts, sum(quantity) AS volume
            FROM lake.market.trades
            WHERE status = 'settled' AND date_trunc('day', ts) >= DATE '2026-01-01'
            GROUP BY 1, 2
            HAVING sum(quantity) > 100
            """);

    assertThat(query.groupKeys()).containsExactly("symbol");
  }

  @Test
  void shouldAcceptDateTruncInsideAnAggregate() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT date_trunc('hour', ts) AS h, count(DISTINCT date_trunc('hour', ts)) AS n"
                + " FROM lake.market.trades GROUP BY 1");

    assertThat(query.granularity()).isEqualTo(Granularity.HOUR);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          DIMENSION_JOIN        | SELECT date_trunc('day', t.ts) AS d, count(*) AS n FROM lake.m.trades t RIGHT JOIN lake.m.symbols s ON t.symbol = s.ticker GROUP BY 1 | 1 | 79
          CTE                   | WITH f AS (SELECT ts FROM lake.m.trades), g AS (SELECT ts FROM lake.m.trades) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM f GROUP BY 1 | 1 | 43
          NESTED_AGGREGATE      | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT ts FROM lake.m.trades GROUP BY ts) s GROUP BY 1 | 1 | 94
          SUBQUERY              | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE symbol IN (SELECT ticker FROM lake.m.symbols) GROUP BY 1 | 1 | 86
          SUBQUERY              | SELECT date_trunc('day', ts) AS d, (SELECT max(x) FROM lake.m.other) AS m FROM lake.m.trades GROUP BY 1 | 1 | 36
          SUBQUERY              | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE EXISTS (SELECT 1 FROM lake.m.symbols) GROUP BY 1 | 1 | 82
          SET_OPERATION         | SELECT date_trunc('day', ts) AS d FROM lake.m.trades_us UNION ALL SELECT date_trunc('day', ts) AS d FROM lake.m.trades_eu | 1 | 1
          NO_GROUP_BY           | SELECT symbol, price FROM lake.m.trades | 1 | 1
          NO_BUCKET             | SELECT symbol, count(*) AS n FROM lake.m.trades GROUP BY symbol | 1 | 58
          BUCKET_ONLY_IN_WHERE  | SELECT count(*) AS n FROM lake.m.trades WHERE date_trunc('day', ts) = DATE '2026-01-01' | 1 | 47
          BUCKET_ONLY_IN_WHERE  | SELECT symbol, count(*) AS n FROM lake.m.trades WHERE date_trunc('day', ts) > DATE '2026-01-01' GROUP BY symbol | 1 | 55
          WRAPPED_BUCKET        | SELECT date_trunc('minute', ts) - (extract(minute FROM ts) % 5) * INTERVAL '1' MINUTE AS bar FROM lake.m.trades GROUP BY 1 | 1 | 8
          WRAPPED_BUCKET        | SELECT CAST(date_trunc('day', ts) AS date) AS d, count(*) AS n FROM lake.m.trades GROUP BY CAST(date_trunc('day', ts) AS date) | 1 | 8
          WRAPPED_BUCKET        | SELECT format(date_trunc('day', ts)) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          MULTIPLE_GRANULARITIES | SELECT date_trunc('day', ts) AS d, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.trades GROUP BY 1, 2 | 1 | 36
          MULTIPLE_GRANULARITIES | SELECT date_trunc('day', ts) AS d, date_trunc('day', created) AS c, count(*) AS n FROM lake.m.trades GROUP BY 1, 2 | 1 | 36
          UNALIASED_COLUMN      | SELECT date_trunc('day', ts), count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          UNALIASED_COLUMN      | SELECT date_trunc('day', ts) AS d, count(*) FROM lake.m.trades GROUP BY 1 | 1 | 36
          DUPLICATE_COLUMN      | SELECT date_trunc('day', ts) AS d, count(*) AS D FROM lake.m.trades GROUP BY 1 | 1 | 36
          SELECT_STAR           | SELECT * FROM lake.m.trades GROUP BY date_trunc('day', ts) | 1 | 8
          ORDER_BY              | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 ORDER BY 1 | 1 | 89
          LIMIT                 | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 LIMIT 10 | 1 | 86
          OFFSET                | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 OFFSET 5 | 1 | 87
          WINDOW_FUNCTION       | SELECT date_trunc('day', ts) AS d, rank() OVER (ORDER BY ts) AS r FROM lake.m.trades GROUP BY 1 | 1 | 36
          NON_DETERMINISTIC     | SELECT date_trunc('day', ts) AS d, now() AS t FROM lake.m.trades GROUP BY 1 | 1 | 36
          NON_DETERMINISTIC     | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE random() < 0.5 GROUP BY 1 | 1 | 75
          NON_DETERMINISTIC     | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades WHERE ts < current_timestamp GROUP BY 1 | 1 | 80
          UNSUPPORTED_GRANULARITY | SELECT date_trunc('second', ts) AS s, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 19
          BUCKET_ARGUMENT       | SELECT date_trunc('day', ts + INTERVAL '1' HOUR) AS d, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 26
          BUCKET_NOT_SELECTED   | SELECT symbol, count(*) AS n FROM lake.m.trades GROUP BY symbol, date_trunc('day', ts) | 1 | 66
          GROUPING_SETS         | SELECT symbol, date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.trades GROUP BY ROLLUP(symbol, date_trunc('day', ts)) | 1 | 86
          SOURCE_TABLE          | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM trades GROUP BY 1 | 1 | 55
          SYNTAX                | SELECT date_trunc('day', ts) AS d, count(* AS n FROM lake.m.trades GROUP BY 1 | 1 | 44
          NOT_A_QUERY           | INSERT INTO lake.m.t SELECT 1 | 1 | 1
          """)
  void shouldRejectWithTheRuleAndItsPosition(String rule, String sql, int line, int column) {
    assertThatThrownBy(() -> ViewQueryParser.parse(sql))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.valueOf(rule));
              assertThat(List.of(e.line(), e.column())).containsExactly(line, column);
              assertThat(e.getMessage())
                  .startsWith("Invalid view query at line " + line + ", column " + column + ": ")
                  .contains(ViewRule.valueOf(rule).description());
            });
  }

  @Test
  void shouldPointAtTheJoinOnItsOwnLine() {
    String sql =
        """
        SELECT date_trunc('day', t.ts) AS d, count(*) AS n
        FROM lake.m.trades t
          RIGHT JOIN lake.m.symbols s ON t.symbol = s.ticker
        GROUP BY 1
        """;

    assertRejected(() -> ViewQueryParser.parse(sql))
        .hasMessageStartingWith("Invalid view query at line 3, column 9: ")
        .hasMessageContaining("RIGHT join");
  }

  @Test
  void shouldNameBothGranularitiesWhenThereAreTwo() {
    assertRejected(
            () ->
                ViewQueryParser.parse(
                    "SELECT date_trunc('day', ts) AS d, date_trunc('hour', ts) AS h, count(*) AS n"
                        + " FROM lake.m.trades GROUP BY 1, 2"))
        .hasMessageEndingWith("date_trunc('day', ts) and date_trunc('hour', ts)");
  }

  @Test
  void shouldListTheSupportedUnits() {
    assertRejected(
            () ->
                ViewQueryParser.parse(
                    "SELECT date_trunc('fortnight', ts) AS f, count(*) AS n"
                        + " FROM lake.m.trades GROUP BY 1"))
        .hasMessageEndingWith(
            "'fortnight'; supported: minute, hour, day, week, month, quarter, year");
  }

  @Test
  void shouldShortenCalciteSyntaxErrors() {
    assertRejected(() -> ViewQueryParser.parse("SELEC 1"))
        .hasMessageStartingWith("Invalid view query at line 1, column 1: syntax error: ")
        .hasMessageNotContaining("Was expecting");
  }

  /** A valid view whose WHERE clause is {@code terms} equality tests joined by OR. */
  public static String withOrTerms(int terms) {
    StringBuilder where = new StringBuilder();
    for (int i = 0; i < terms; i++) {
      where.append(i == 0 ? "" : " OR ").append("quantity = ").append(i);
    }
    return "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
        + " FROM lake.market.trades WHERE "
        + where
        + " GROUP BY 1, 2";
  }

  /** A valid view whose WHERE clause sits inside {@code depth} pairs of parentheses. */
  public static String withParentheses(int depth) {
    return "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
        + " FROM lake.market.trades WHERE "
        + "(".repeat(depth)
        + "quantity = 1"
        + ")".repeat(depth)
        + " GROUP BY 1, 2";
  }

  @Test
  void shouldRejectAQueryOverTheLengthLimitBeforeParsingIt() {
    // Given a valid query of 5,000 OR terms, 93,990 characters
    String sql = withOrTerms(5_000);

    // When it is parsed, then it is refused for its length, not for its syntax
    assertRejected(() -> ViewQueryParser.parse(sql))
        .hasMessage(
            "Invalid view query: a view query may be at most 16384 characters long: this one has "
                + sql.length());
  }

  @Test
  void shouldRejectParenthesesNestedPastTheLimitWhereTheyPassIt() {
    // Given 3,000 nested parentheses, past what Calcite's recursive parser can take
    String sql = withParentheses(3_000);
    int column = sql.indexOf("WHERE (") + "WHERE ".length() + 128 + 1;

    // When it is parsed, then the error names the depth limit and the parenthesis that passed it
    assertRejected(() -> ViewQueryParser.parse(sql))
        .hasMessage(
            "Invalid view query at line 1, column "
                + column
                + ": a view query may nest expressions at most 128 levels deep (parentheses, or"
                + " operators chained without them): parentheses nested deeper");
  }

  @Test
  void shouldRejectAnOperatorChainPastTheDepthLimit() {
    // Given 300 OR terms: short, no parentheses, but a tree 300 levels deep for Calcite
    String sql = withOrTerms(300);

    // When it is parsed, then it is refused for its depth
    assertRejected(() -> ViewQueryParser.parse(sql))
        .hasMessageStartingWith("Invalid view query at line 1, column ")
        .hasMessageContaining(": a view query may nest expressions at most 128 levels deep")
        .hasMessageEndingWith(": an expression nested deeper");
  }

  @Test
  void shouldReportAParserStackOverflowAsTooDeepNotAsASyntaxError() {
    // Given a chain of 8,000 additions that fits the length limit but not Calcite's parser's stack
    String sql =
        "SELECT date_trunc('minute', ts) AS minute_ts, sum("
            + "1+".repeat(8_000)
            + "quantity) AS n FROM lake.market.trades GROUP BY 1";

    // When it is parsed, then it is called too deep
    assertRejected(() -> ViewQueryParser.parse(sql))
        .hasMessageContaining("a view query may nest expressions at most 128 levels deep")
        .hasMessageNotContaining("syntax error");
  }

  @Test
  void shouldAcceptQueriesJustInsideTheLimits() throws InvalidViewException {
    assertThat(ViewQueryParser.parse(withOrTerms(100)).source())
        .isEqualTo(TableName.parse("lake.market.trades"));
    assertThat(ViewQueryParser.parse(withParentheses(120)).groupKeys()).containsExactly("symbol");
  }

  private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable>
      assertRejected(ThrowingCallable call) {
    return assertThatThrownBy(call).isInstanceOf(InvalidViewException.class);
  }
}
