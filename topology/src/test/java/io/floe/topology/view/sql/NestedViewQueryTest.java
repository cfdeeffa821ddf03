package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.calcite.plan.RelOptUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Subqueries in FROM and WITH chains over the one source: each accepted form binds to the plan of
 * its flat equivalent (the relation the engine evaluates, the bucket, the keys, the columns read),
 * and each form Floe cannot maintain is rejected with its rule and position.
 */
class NestedViewQueryTest {

  private static ViewPlan bind(String sql) throws InvalidViewException {
    return ViewQueryBinder.bind(
        ViewQueryParser.parse(sql), ViewQueryBinderTest.TRADES, ZoneOffset.UTC);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          filtered subquery | SELECT symbol, date_trunc('hour', ts) AS h, sum(quantity) AS v FROM (SELECT ts, symbol, quantity FROM lake.m.trades WHERE price > 0) t GROUP BY symbol, date_trunc('hour', ts) | SELECT symbol, date_trunc('hour', ts) AS h, sum(quantity) AS v FROM lake.m.trades WHERE price > 0 GROUP BY symbol, date_trunc('hour', ts)
          renamed bucket column | SELECT sym, date_trunc('hour', event_ts) AS h, count(*) AS n FROM (SELECT ts AS event_ts, symbol AS sym FROM lake.m.trades) t GROUP BY 1, 2 | SELECT symbol AS sym, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.trades GROUP BY 1, 2
          qualified columns and star | SELECT t.symbol, date_bin(INTERVAL '5' MINUTE, t.ts) AS bar, max(t.price) AS high FROM (SELECT * FROM lake.m.trades WHERE status = 'settled') AS t GROUP BY 1, 2 | SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar, max(price) AS high FROM lake.m.trades WHERE status = 'settled' GROUP BY 1, 2
          filters on both levels | SELECT symbol, date_trunc('day', ts) AS d, sum(notional) AS v FROM (SELECT symbol, ts, price * quantity AS notional FROM lake.m.trades WHERE side = 'B') t WHERE notional > 100 GROUP BY 1, 2 HAVING count(*) > 1 | SELECT symbol, date_trunc('day', ts) AS d, sum(price * quantity) AS v FROM lake.m.trades WHERE side = 'B' AND price * quantity > 100 GROUP BY 1, 2 HAVING count(*) > 1
          nested subqueries | SELECT upper_sym, date_trunc('minute', ts) AS m, sum(q2) AS v FROM (SELECT upper(sym) AS upper_sym, ts, q2 FROM (SELECT symbol AS sym, ts, quantity * 2 AS q2 FROM lake.m.trades WHERE quantity > 0) a WHERE sym <> 'X') b GROUP BY 1, 2 | SELECT upper(symbol) AS upper_sym, date_trunc('minute', ts) AS m, sum(quantity * 2) AS v FROM lake.m.trades WHERE quantity > 0 AND symbol <> 'X' GROUP BY 1, 2
          WITH chain | WITH f AS (SELECT ts, symbol, price, quantity FROM lake.m.trades WHERE status = 'settled'), g AS (SELECT ts AS trade_ts, symbol, price * quantity AS notional FROM f WHERE price > 0) SELECT symbol, date_trunc('hour', trade_ts) AS h, sum(notional) AS v, count(*) AS n FROM g GROUP BY symbol, date_trunc('hour', trade_ts) | SELECT symbol, date_trunc('hour', ts) AS h, sum(price * quantity) AS v, count(*) AS n FROM lake.m.trades WHERE status = 'settled' AND price > 0 GROUP BY symbol, date_trunc('hour', ts)
          WITH column list | WITH f (s, t, q) AS (SELECT symbol, ts, quantity FROM lake.m.trades) SELECT s, date_trunc('hour', t) AS h, sum(q) AS v FROM f GROUP BY 1, 2 | SELECT symbol AS s, date_trunc('hour', ts) AS h, sum(quantity) AS v FROM lake.m.trades GROUP BY 1, 2
          subquery column list | SELECT a, date_trunc('hour', b) AS h, count(*) AS n FROM (SELECT symbol, ts FROM lake.m.trades) AS t (a, b) GROUP BY 1, 2 | SELECT symbol AS a, date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.trades GROUP BY 1, 2
          README example | WITH settled AS (SELECT ts, symbol, price, quantity FROM lake.market.trades WHERE status = 'settled'), priced AS (SELECT ts AS event_ts, upper(symbol) AS sym, price * quantity AS notional FROM settled) SELECT sym, date_trunc('hour', event_ts) AS hour_ts, sum(notional) AS notional, count(*) AS n FROM priced GROUP BY sym, date_trunc('hour', event_ts) | SELECT upper(symbol) AS sym, date_trunc('hour', ts) AS hour_ts, sum(price * quantity) AS notional, count(*) AS n FROM lake.market.trades WHERE status = 'settled' GROUP BY 1, 2
          n-minute idiom over a subquery | SELECT symbol, date_trunc('hour', x) + (minute(x) / 15) * INTERVAL '15' MINUTE AS bar, count(*) AS n FROM (SELECT symbol, ts AS x FROM lake.m.trades) t GROUP BY 1, 2 | SELECT symbol, date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1, 2
          """)
  void shouldBindToThePlanOfTheFlatQuery(String form, String nested, String flat)
      throws InvalidViewException {
    // Given a nested view query and the flat query it stands for
    ParsedViewQuery parsed = ViewQueryParser.parse(nested);
    ParsedViewQuery parsedFlat = ViewQueryParser.parse(flat);

    // When both are bound to the source schema
    ViewPlan plan = bind(nested);
    ViewPlan flatPlan = bind(flat);

    // Then they are one plan: the same source, bucket, keys, relation and columns read
    assertThat(parsed.source()).isEqualTo(parsedFlat.source());
    assertThat(parsed.bucketColumn()).isEqualTo(parsedFlat.bucketColumn());
    assertThat(parsed.granularity()).isEqualTo(parsedFlat.granularity());
    assertThat(parsed.bucketOutput()).isEqualTo(parsedFlat.bucketOutput());
    assertThat(parsed.outputColumns()).isEqualTo(parsedFlat.outputColumns());
    assertThat(parsed.groupKeys()).isEqualTo(parsedFlat.groupKeys());
    assertThat(plan.bucketColumn()).isEqualTo(flatPlan.bucketColumn());
    assertThat(plan.bucketing()).usingRecursiveComparison().isEqualTo(flatPlan.bucketing());
    assertThat(plan.outputSchema().asStruct()).isEqualTo(flatPlan.outputSchema().asStruct());
    assertThat(plan.requiredColumns()).isEqualTo(flatPlan.requiredColumns());
    // Field names of the nodes below the output are labels; deepEquals compares all else.
    assertThat(plan.relation().deepEquals(flatPlan.relation()))
        .as(
            "nested plan%n%s equals flat plan%n%s",
            RelOptUtil.toString(plan.relation()), RelOptUtil.toString(flatPlan.relation()))
        .isTrue();
  }

  @Test
  void shouldTellAPlanThatFiltersOtherwiseFromTheFlatOne() throws InvalidViewException {
    // Given a subquery whose filter differs from the flat query's in one constant
    ViewPlan plan =
        bind(
            "SELECT date_trunc('hour', ts) AS h, count(*) AS n"
                + " FROM (SELECT ts FROM lake.m.trades WHERE price > 1) t GROUP BY 1");

    // When it is compared with the flat query's plan
    ViewPlan flat =
        bind(
            "SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.trades"
                + " WHERE price > 0 GROUP BY 1");

    // Then the comparison the tests above rely on tells them apart
    assertThat(plan.relation().deepEquals(flat.relation())).isFalse();
  }

  @Test
  void shouldReadTheBucketsSourceColumnFromThePlanItself() throws InvalidViewException {
    // Given a subquery that gives the source's local_ts the name of its other timestamp, ts
    ViewPlan plan =
        bind(
            "SELECT date_trunc('hour', ts) AS h, max(t2) AS m"
                + " FROM (SELECT local_ts AS ts, ts AS t2 FROM lake.m.trades) t GROUP BY 1");

    // Then the plan's bucketed key reads local_ts, and so does the bucket Floe detects on
    assertThat(FlatRelation.bucketedSourceColumns(plan.relation(), ViewQueryBinderTest.TRADES))
        .containsExactly("local_ts");
    assertThat(plan.bucketColumn()).isEqualTo("local_ts");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          NESTED_AGGREGATE  | SELECT date_trunc('day', ts) AS d, sum(n) AS n FROM (SELECT ts, count(*) AS n FROM lake.m.trades GROUP BY ts) t GROUP BY 1 | 1 | 107 | GROUP BY
          NESTED_AGGREGATE  | SELECT date_trunc('day', ts) AS d, sum(m) AS n FROM (SELECT max(ts) AS ts, max(price) AS m FROM lake.m.trades) t GROUP BY 1 | 1 | 61 | max
          NESTED_AGGREGATE  | WITH f AS (SELECT ts FROM lake.m.trades GROUP BY ts HAVING count(*) > 1) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM f GROUP BY 1 | 1 | 50 | GROUP BY
          SET_OPERATION     | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT ts FROM lake.m.a UNION ALL SELECT ts FROM lake.m.b) t GROUP BY 1 | 1 | 56 | UNION
          SET_OPERATION     | WITH f AS (SELECT ts FROM lake.m.a EXCEPT SELECT ts FROM lake.m.b) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM f GROUP BY 1 | 1 | 12 | EXCEPT
          WINDOW_FUNCTION   | SELECT date_trunc('day', ts) AS d, sum(r) AS n FROM (SELECT ts, rank() OVER (ORDER BY ts) AS r FROM lake.m.trades) t GROUP BY 1 | 1 | 65 | RANK()
          DISTINCT          | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT DISTINCT ts, symbol FROM lake.m.trades) t GROUP BY 1 | 1 | 63 |
          ORDER_BY          | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT ts FROM lake.m.trades ORDER BY ts) t GROUP BY 1 | 1 | 94 | subquery
          LIMIT             | WITH f AS (SELECT ts FROM lake.m.trades LIMIT 10) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM f GROUP BY 1 | 1 | 47 | subquery
          DIMENSION_JOIN    | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT t.ts FROM lake.m.trades t JOIN lake.m.symbols s ON t.symbol = s.ticker) x GROUP BY 1 | 1 | 89 | join the dimension tables in the outer query's FROM, not inside a subquery
          CTE               | WITH f AS (SELECT ts, symbol FROM lake.m.trades), g AS (SELECT ts FROM f), h AS (SELECT ts FROM f) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM g GROUP BY 1 | 1 | 97 | f is read 2 times
          CTE               | WITH f AS (SELECT ts FROM lake.m.trades), g AS (SELECT ts FROM lake.m.trades) SELECT date_trunc('day', ts) AS d, count(*) AS n FROM f GROUP BY 1 | 1 | 43 | g is never read
          COMPUTED_BUCKET   | SELECT date_trunc('hour', shifted) AS h, count(*) AS n FROM (SELECT ts + INTERVAL '1' HOUR AS shifted FROM lake.m.trades) t GROUP BY 1 | 1 | 69 | shifted
          COMPUTED_BUCKET   | SELECT h, count(*) AS n FROM (SELECT date_trunc('hour', ts) AS h FROM lake.m.trades) t GROUP BY h | 1 | 38 | date_trunc
          COMPUTED_BUCKET   | WITH f AS (SELECT CAST(ts AS date) AS d FROM lake.m.trades) SELECT date_trunc('month', d) AS m, count(*) AS n FROM f GROUP BY 1 | 1 | 19 | d
          UNKNOWN_COLUMN    | SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM (SELECT symbol FROM lake.m.trades) t GROUP BY 1 | 1 | 27 | ts
          SELECT_STAR       | SELECT * FROM (SELECT ts FROM lake.m.trades) t GROUP BY date_trunc('day', ts) | 1 | 8 |
          SUBQUERY          | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT ts FROM lake.m.trades WHERE symbol IN (SELECT ticker FROM lake.m.symbols)) t GROUP BY 1 | 1 | 102 |
          SOURCE_TABLE      | SELECT date_trunc('day', ts) AS d, count(*) AS n FROM (SELECT ts FROM trades) t GROUP BY 1 | 1 | 71 |
          CTE               | WITH f AS (SELECT ts AS t, local_ts AS i FROM lake.m.trades), g AS (SELECT t, i FROM f) SELECT date_trunc('hour', t) AS h, count(*) AS n, max(i) AS m FROM (WITH f AS (SELECT local_ts AS t, ts AS i FROM lake.m.trades) SELECT t, i FROM g) x GROUP BY 1 | 1 | 162 | f is declared twice
          SOURCE_TABLE      | SELECT date_trunc('hour', ts) AS h, min_by(symbol, ts) AS s, max(local_ts) AS m FROM lake.m.trades AS e(symbol, local_ts, ts) GROUP BY 1 | 1 | 105 | a column list on the source table
          SOURCE_TABLE      | SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM (SELECT t.local_ts AS ts FROM lake.m.trades AS t(symbol, local_ts, ts)) x GROUP BY 1 | 1 | 105 | a column list on the source table
          """)
  void shouldRejectWithTheRuleAndItsPosition(
      String rule, String sql, int line, int column, String detail) {
    assertThatThrownBy(() -> ViewQueryParser.parse(sql))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.valueOf(rule));
              assertThat(List.of(e.line(), e.column())).containsExactly(line, column);
              assertThat(e.getMessage())
                  .startsWith("Invalid view query at line " + line + ", column " + column + ": ")
                  .contains(ViewRule.valueOf(rule).description())
                  .contains(detail == null ? "" : detail);
            });
  }
}
