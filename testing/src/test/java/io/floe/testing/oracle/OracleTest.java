package io.floe.testing.oracle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.floe.testing.IcebergFixture;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The oracle on its own: a view evaluated by DuckDB from every row of a source snapshot. */
class OracleTest {

  private static final String DAILY_VOLUME =
      """
      SELECT symbol, date_trunc('day', ts) AS day, sum(quantity) AS volume,
             arbitrary(side) AS any_side, approx_distinct(side) AS sides
      FROM lake.m.trades
      GROUP BY symbol, date_trunc('day', ts)
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("m", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReadTheSourceUnderTheNameTheQueryGivesIt() {
    assertThat(Oracle.forDuckDb(DAILY_VOLUME, "lake.m.trades"))
        .contains("FROM src")
        .doesNotContain("lake.m.trades")
        .contains("min(side) AS any_side")
        .contains("count(DISTINCT side) AS sides");
  }

  @Test
  void shouldKeepTrinosMeaningOfNanosecondLiteralsAndCountIf() {
    String view =
        "SELECT date_trunc('day', ts) AS day, count_if(ts > TIMESTAMP '2026-04-08 10:00:00.000000500')"
            + " AS late, count_if(ts > TIMESTAMP '2026-04-08 10:00:00.000500') AS later"
            + " FROM lake.m.trades GROUP BY 1";

    String duck = Oracle.forDuckDb(view, "lake.m.trades");

    // A literal of nanoseconds stays one (DuckDB's TIMESTAMP literal stops at microseconds), and
    // count_if counts true conditions, 0 for a group of nulls (DuckDB's count_if is null there).
    assertThat(duck)
        .contains(
            "count(*) FILTER (WHERE ts > TIMESTAMP_NS '2026-04-08 10:00:00.000000500') AS late")
        .contains("count(*) FILTER (WHERE ts > TIMESTAMP '2026-04-08 10:00:00.000500') AS later");
  }

  @Test
  void shouldKeepTrinosMeaningOfMinByMaxByAndDateTruncOfADate() {
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            org.apache.iceberg.types.Types.NestedField.optional(
                1, "dt", org.apache.iceberg.types.Types.DateType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(
                2, "x", org.apache.iceberg.types.Types.DoubleType.get()));
    String view =
        "SELECT date_trunc('month', dt) AS m, min_by(x, dt) AS first, max_by(x, dt) AS last"
            + " FROM lake.m.t GROUP BY 1";

    String duck = Oracle.forDuckDb(view, "lake.m.t", schema);

    // Trino's min_by returns the value of the smallest key even when it is null (DuckDB's skips
    // it), and its date_trunc of a date is a date (DuckDB's a timestamp).
    assertThat(duck)
        .contains("CAST(date_trunc('month', dt) AS DATE) AS m")
        .contains("arg_min_null(x, dt) AS first")
        .contains("arg_max_null(x, dt) AS last");
  }

  @Test
  void shouldEvaluateTheViewOnTheRowsOfTheGivenSnapshot() {
    // Given two snapshots, the second deleting a trade
    long first =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T11:00:00Z", 11.0, 3L, "S"),
                lake.trade("MSFT", "2026-04-09T09:00:00Z", 99.0, 7L, "B")));
    long second = lake.deleteByPosition(trades, r -> "S".equals(r.getField("side")));

    // When the oracle evaluates the view at each
    List<List<Object>> before = Oracle.expected(trades, "lake.m.trades", first, DAILY_VOLUME);
    List<List<Object>> after = Oracle.expected(trades, "lake.m.trades", second, DAILY_VOLUME);

    // Then each reflects exactly the rows of its snapshot, normalized
    assertThat(before)
        .extracting(row -> row.get(0), row -> row.get(2), row -> row.get(4))
        .containsExactly(
            tuple("AAPL", BigDecimal.valueOf(8), BigDecimal.valueOf(2)),
            tuple("MSFT", BigDecimal.valueOf(7), BigDecimal.valueOf(1)));
    assertThat(after)
        .extracting(row -> row.get(0), row -> row.get(2))
        .containsExactly(
            tuple("AAPL", BigDecimal.valueOf(5)), tuple("MSFT", BigDecimal.valueOf(7)));
  }

  @Test
  void shouldBinATimestampWithTimeZoneOfAJoinedFactFromTheUnixEpoch() {
    // Given trades of two symbols in two 5-minute bins (timestamptz), and a dimension of sectors
    org.apache.iceberg.Schema sectors =
        new org.apache.iceberg.Schema(
            org.apache.iceberg.types.Types.NestedField.optional(
                1, "symbol", org.apache.iceberg.types.Types.StringType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(
                2, "sector", org.apache.iceberg.types.Types.StringType.get()));
    Table symbols =
        lake.createTable("m", "symbols", sectors, org.apache.iceberg.PartitionSpec.unpartitioned());
    org.apache.iceberg.data.GenericRecord tech =
        org.apache.iceberg.data.GenericRecord.create(sectors);
    tech.setField("symbol", "AAPL");
    tech.setField("sector", "tech");
    long dimension = lake.append(symbols, List.of(tech));
    long fact =
        lake.append(
            trades,
            List.of(
                lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
                lake.trade("AAPL", "2026-04-08T10:04:59Z", 11.0, 3L, "S"),
                lake.trade("AAPL", "2026-04-08T10:05:00Z", 12.0, 2L, "B"),
                lake.trade("MSFT", "2026-04-08T10:01:00Z", 99.0, 7L, "B")));
    String view =
        "SELECT s.sector, date_bin(INTERVAL '5' MINUTE, t.ts) AS bar_ts, sum(t.quantity) AS volume"
            + " FROM lake.m.trades t JOIN lake.m.symbols s ON t.symbol = s.symbol"
            + " GROUP BY s.sector, date_bin(INTERVAL '5' MINUTE, t.ts)";

    // When the oracle evaluates the view
    List<List<Object>> rows =
        Oracle.expected(
            new Oracle.Source(trades, "lake.m.trades", fact),
            List.of(new Oracle.Source(symbols, "lake.m.symbols", dimension)),
            view);

    // Then each trade of a joined symbol lands in its bin from the Unix epoch
    assertThat(rows)
        .extracting(row -> row.get(0), row -> row.get(2))
        .containsExactly(
            tuple("tech", BigDecimal.valueOf(8)), tuple("tech", BigDecimal.valueOf(2)));
    assertThat(rows.get(0).get(1))
        .isEqualTo(Oracle.normalize(java.time.OffsetDateTime.parse("2026-04-08T10:00:00Z")));
  }
}
