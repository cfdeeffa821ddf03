package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.JoinKind;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * View queries that join their bucketed fact table to dimension tables (DESIGN §3.10), through the
 * parser's dimension-join entry and the binder: what the compiled plan knows of each dimension, and
 * every shape that stays out, rejected with its position.
 */
class DimensionJoinQueryTest {

  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final TableName SYMBOLS = TableName.parse("lake.ref.symbols");
  private static final TableName VENUES = TableName.parse("lake.ref.venues");

  /** A dimension of symbols: a sector per symbol, and a timestamp a bucket must not read. */
  private static final Schema SYMBOLS_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()),
          Types.NestedField.optional(3, "lot", Types.LongType.get()),
          Types.NestedField.optional(4, "listed_at", Types.TimestampType.withZone()),
          Types.NestedField.optional(5, "region_id", Types.IntegerType.get()));

  private static final Schema VENUES_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "venue_id", Types.IntegerType.get()),
          Types.NestedField.optional(2, "venue", Types.StringType.get()),
          Types.NestedField.optional(3, "region_id", Types.IntegerType.get()));

  private static final Map<TableName, Schema> DIMENSIONS =
      Map.of(SYMBOLS, SYMBOLS_SCHEMA, VENUES, VENUES_SCHEMA);

  private static ViewPlan bind(String sql) throws InvalidViewException {
    return ViewQueryBinder.bind(
        ViewQueryParser.parse(sql), ViewQueryBinderTest.TRADES, DIMENSIONS, ZoneOffset.UTC);
  }

  @Test
  void shouldDescribeTheFactTableAndEachDimensionOfAStarJoin() throws InvalidViewException {
    // Given a view joining trades to symbols (inner) and venues (left)
    String sql =
        """
        SELECT s.sector, v.venue, date_trunc('minute', t.ts) AS minute_ts,
               sum(t.quantity * s.lot) AS lots, count(*) AS trades
        FROM lake.market.trades t
        JOIN lake.ref.symbols s ON t.symbol = s.symbol
        LEFT JOIN lake.ref.venues v ON v.venue_id = t.venue_id
        GROUP BY s.sector, v.venue, date_trunc('minute', t.ts)
        """;

    // When it is bound
    ViewPlan plan = bind(sql);

    // Then the source is the fact table, read for its keys and measures, and each dimension says
    // its table, kind, keys and the columns it contributes
    assertThat(plan.source()).isEqualTo(TRADES);
    assertThat(plan.bucketColumn()).isEqualTo("ts");
    assertThat(plan.requiredColumns()).containsExactly("symbol", "ts", "quantity", "venue_id");
    assertThat(plan.dimensions())
        .extracting(
            ViewPlan.Dimension::table,
            ViewPlan.Dimension::kind,
            ViewPlan.Dimension::factKeys,
            ViewPlan.Dimension::keys,
            ViewPlan.Dimension::columns)
        .containsExactly(
            tuple(
                SYMBOLS,
                JoinKind.INNER,
                List.of("symbol"),
                List.of("symbol"),
                List.of("sector", "lot")),
            tuple(
                VENUES, JoinKind.LEFT, List.of("venue_id"), List.of("venue_id"), List.of("venue")));
    assertThat(plan.dimensions().get(0).requiredColumns())
        .containsExactly("symbol", "sector", "lot");
    assertThat(plan.outputSchema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("sector", "venue", "minute_ts", "lots", "trades");
  }

  @Test
  void shouldJoinOnTheColumnsOfAUsingList() throws InvalidViewException {
    // Given a USING join, its common column also a group key
    String sql =
        """
        SELECT symbol, s.sector, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume
        FROM lake.market.trades LEFT JOIN lake.ref.symbols s USING (symbol)
        GROUP BY symbol, s.sector, date_trunc('hour', ts)
        """;

    // When it is bound
    ViewPlan plan = bind(sql);

    // Then the key pairs the fact's symbol with the dimension's
    ViewPlan.Dimension symbols = plan.dimensions().get(0);
    assertThat(symbols.kind()).isEqualTo(JoinKind.LEFT);
    assertThat(symbols.factKeys()).containsExactly("symbol");
    assertThat(symbols.keys()).containsExactly("symbol");
    assertThat(symbols.columns()).contains("sector");
  }

  @Test
  void shouldJoinOnSeveralKeys() throws InvalidViewException {
    String sql =
        """
        SELECT s.sector, date_trunc('day', t.ts) AS day, count(*) AS n
        FROM lake.market.trades t
        JOIN lake.ref.symbols s ON t.symbol = s.symbol AND s.region_id = t.venue_id
        GROUP BY s.sector, date_trunc('day', t.ts)
        """;

    ViewPlan plan = bind(sql);

    assertThat(plan.dimensions().get(0).factKeys()).containsExactly("symbol", "venue_id");
    assertThat(plan.dimensions().get(0).keys()).containsExactly("symbol", "region_id");
  }

  @Test
  void shouldCompileADimensionJoinOnTheServicePath() throws InvalidViewException {
    // Given a valid dimension join
    String sql =
        "SELECT s.sector, date_trunc('day', t.ts) AS day, count(*) AS n FROM lake.market.trades t"
            + " JOIN lake.ref.symbols s ON t.symbol = s.symbol GROUP BY 1, 2";

    // When the index of views in force compiles it, then it reads the fact table and joins the
    // dimension, whose commits drive it too
    ViewIndex index = new ViewIndex();
    index.put(ViewDefinition.of("by_sector", sql, TableName.parse("lake.analytics.by_sector")), 0);
    assertThat(index.view("by_sector")).isPresent();
    assertThat(index.readingTable(TableName.parse("lake.market.trades"))).hasSize(1);
    assertThat(index.joiningTable(SYMBOLS)).hasSize(1);
    assertThat(index.readingTable(SYMBOLS)).isEmpty();
    assertThat(index.isWatched(SYMBOLS)).isTrue();
    assertThat(index.sources()).contains(SYMBOLS, TableName.parse("lake.market.trades"));
    assertThat(index.dependingOn(SYMBOLS)).hasSize(1);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          right join   | FROM lake.market.trades t RIGHT JOIN lake.ref.symbols s ON t.symbol = s.symbol | 1 | 96  | RIGHT join
          full join    | FROM lake.market.trades t FULL JOIN lake.ref.symbols s ON t.symbol = s.symbol  | 1 | 95  | FULL join
          cross join   | FROM lake.market.trades t CROSS JOIN lake.ref.symbols s                         | 1 | 96  | CROSS join
          comma join   | FROM lake.market.trades t, lake.ref.symbols s                                   | 1 | 89  | COMMA join
          natural join | FROM lake.market.trades t NATURAL JOIN lake.ref.symbols s                       | 1 | 90  | NATURAL joins
          inequality   | FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol < s.symbol        | 1 | 117 | is not an equality
          or           | FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol OR s.lot = 1 | 1 | 117 | is not an equality
          filter in on | FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol AND s.lot = 1 | 1 | 141 | is not an equality
          self join    | FROM lake.market.trades t JOIN lake.market.trades s ON t.symbol = s.symbol     | 1 | 95  | is the fact table
          twice        | FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol JOIN lake.ref.symbols s2 ON t.symbol = s2.symbol | 1 | 142 | is joined twice
          subquery dim | FROM lake.market.trades t JOIN (SELECT * FROM lake.ref.symbols) s ON t.symbol = s.symbol | 1 | 96 | must be a table
          nested right | FROM lake.market.trades t JOIN (lake.ref.symbols s JOIN lake.ref.venues v ON s.region_id = v.region_id) ON t.symbol = s.symbol | 1 | 115 | must be a table
          """)
  void shouldRejectWhatIsNotADimensionJoinWithItsPosition(
      String name, String from, int line, int column, String detail) {
    // Given the outer query of a view over one of the shapes that stay out
    String sql =
        "SELECT s.sector, date_trunc('day', t.ts) AS day, count(*) AS n " + from + " GROUP BY 1, 2";

    // When it is parsed and bound, then it is rejected where the shape goes wrong
    assertRejectedAt(sql, line, column, detail);
  }

  @Test
  void shouldRejectABucketOverADimensionColumn() {
    // Given a view bucketing by when the symbol was listed, a dimension column
    String sql =
        """
        SELECT t.symbol, date_trunc('day', s.listed_at) AS day, count(*) AS n
        FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol
        GROUP BY 1, 2
        """;

    // Then it is rejected at the bucket's column: dirty buckets come from the fact files
    assertRejectedAt(sql, 1, 36, "listed_at is a column of dimension lake.ref.symbols");
  }

  @Test
  void shouldRejectADimensionKeyedOnAnotherDimension() {
    // Given a snowflake: venues joined on a column of symbols
    String sql =
        """
        SELECT v.venue, date_trunc('day', t.ts) AS day, count(*) AS n
        FROM lake.market.trades t
        JOIN lake.ref.symbols s ON t.symbol = s.symbol
        JOIN lake.ref.venues v ON v.region_id = s.region_id
        GROUP BY 1, 2
        """;

    // Then the second dimension is rejected at its name
    assertRejectedAt(sql, 4, 6, "lake.ref.venues", "another dimension");
  }

  @Test
  void shouldRejectKeysOfDifferentTypes() {
    // Given a string joined to an integer (the validator casts one side)
    String sql =
        """
        SELECT s.sector, date_trunc('day', t.ts) AS day, count(*) AS n
        FROM lake.market.trades t JOIN lake.ref.symbols s ON t.venue_id = s.lot
        GROUP BY 1, 2
        """;

    assertRejectedAt(sql, 2, 32, "of the same type", "compares a computed or cast value");
  }

  @Test
  void shouldRejectAJoinInsideASubquery() {
    // Given a join in a subquery that aggregates, and one in a subquery that only projects
    String aggregating =
        """
        SELECT sector, date_trunc('day', ts) AS day, sum(n) AS n
        FROM (SELECT s.sector, t.ts, count(*) AS n FROM lake.market.trades t
              JOIN lake.ref.symbols s ON t.symbol = s.symbol GROUP BY 1, 2)
        GROUP BY 1, 2
        """;
    String projecting =
        """
        SELECT sector, date_trunc('day', ts) AS day, count(*) AS n
        FROM (SELECT s.sector, t.ts FROM lake.market.trades t
              JOIN lake.ref.symbols s ON t.symbol = s.symbol)
        GROUP BY 1, 2
        """;

    // Then both are rejected with a position inside the subquery
    assertThatThrownBy(() -> bind(aggregating))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.NESTED_AGGREGATE);
              assertThat(e.line()).isEqualTo(3);
            });
    assertThatThrownBy(() -> bind(projecting))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.DIMENSION_JOIN);
              assertThat(e.detail()).contains("in the outer query's FROM");
              assertThat(e.line()).isEqualTo(3);
            });
  }

  /**
   * Asserts that binding {@code sql} is rejected as a dimension join Floe does not take, at {@code
   * line} and {@code column}, with a detail containing each of {@code details}.
   */
  private static void assertRejectedAt(String sql, int line, int column, String... details) {
    assertThatThrownBy(() -> bind(sql))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.DIMENSION_JOIN);
              assertThat(e.detail()).contains(details);
              assertThat(List.of(e.line(), e.column())).containsExactly(line, column);
            });
  }
}
