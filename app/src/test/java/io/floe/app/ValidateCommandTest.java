package io.floe.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code floe validate} as a user runs it, against a real JDBC catalog on SQLite. */
class ValidateCommandTest {

  @TempDir Path dir;
  private Path config;

  private static final String VIEWS =
      """
      views:
        - name: ohlcv_1m
          query: |
            SELECT symbol, date_trunc('minute', ts) AS minute_ts,
                   min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
                   max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trade_count
            FROM lake.market.trades
            GROUP BY symbol, date_trunc('minute', ts)
          target: lake.analytics.ohlcv_1m
        - name: ohlcv_1h
          query: |
            SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts, max(high) AS high,
                   sum(volume) AS volume
            FROM lake.analytics.ohlcv_1m
            GROUP BY 1, 2
          target: lake.analytics.ohlcv_1h
      """;

  @BeforeEach
  void createCatalog() throws Exception {
    String uri = "jdbc:sqlite:" + dir.resolve("catalog.db");
    String warehouse = dir.resolve("warehouse").toUri().toString();
    config = dir.resolve("floe.properties");
    Files.writeString(
        config,
        "floe.catalog.lake.type=jdbc\n"
            + "floe.catalog.lake.uri="
            + uri
            + "\nfloe.catalog.lake.warehouse="
            + warehouse
            + "\n");
    Catalog catalog =
        CatalogUtil.buildIcebergCatalog(
            "lake",
            Map.of("type", "jdbc", "uri", uri, "warehouse", warehouse),
            new Configuration());
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("market"));
    catalog.createTable(
        TableIdentifier.of("market", "trades"),
        new Schema(
            Types.NestedField.required(1, "symbol", Types.StringType.get()),
            Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(3, "price", Types.DoubleType.get()),
            Types.NestedField.optional(4, "quantity", Types.LongType.get())),
        PartitionSpec.unpartitioned());
    ((AutoCloseable) catalog).close();
  }

  private record Run(int exitCode, String out, String err) {}

  private Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = FloeCommand.commandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int code = cli.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  private Path views(String yaml) throws Exception {
    return Files.writeString(dir.resolve("views-" + System.nanoTime() + ".yaml"), yaml);
  }

  @Test
  void shouldPrintTheDerivedPlanOfEachViewAgainstTheCatalog() throws Exception {
    Run run = run("validate", "--config", config.toString(), views(VIEWS).toString());

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("ohlcv_1m: valid")
        .contains("bucket       date_trunc('minute', ts) AS minute_ts in UTC")
        .contains("group keys   symbol")
        .contains("columns      symbol string, minute_ts timestamptz, open double")
        .contains("reads        symbol, ts, price, quantity")
        .contains("appends      recompute their buckets")
        .contains("ohlcv_1h: valid")
        .contains("appends      folded into the rows of their groups (delta path)")
        .contains("2 views, 0 invalid");
  }

  @Test
  void shouldSayThatAWeeklyVwapFoldsAppendsIntoItsPartialStates() throws Exception {
    // Given a weekly VWAP with a HAVING, an expression over mergeable aggregates
    Path views =
        views(
            """
            views:
              - name: weekly_vwap
                query: |
                  SELECT symbol, date_trunc('week', ts) AS week,
                         sum(price * quantity) / sum(quantity) AS vwap
                  FROM lake.market.trades
                  GROUP BY 1, 2
                  HAVING count(*) > 10
                target: lake.analytics.weekly_vwap
            """);

    // When it is validated, as text and as JSON
    Run text = run("validate", "--config", config.toString(), views.toString());
    Run json = run("validate", "--json", "--config", config.toString(), views.toString());

    // Then both say that appends take the delta path through its partial states
    assertThat(text.exitCode()).as(text.out() + text.err()).isZero();
    assertThat(text.out())
        .contains("appends      folded into the partial states of their groups (delta path)");
    assertThat(new ObjectMapper().readTree(json.out()).get(0).get("deltaPath").asBoolean())
        .isTrue();
  }

  @Test
  void shouldBuildTheCatalogFromValuesOfTheConfigProviders() throws Exception {
    // Given a config file whose catalog URI comes from a secrets file, as a password would
    Path secrets =
        Files.writeString(
            dir.resolve("secrets.properties"), "uri=jdbc:sqlite:" + dir.resolve("catalog.db"));
    Path viaProvider =
        Files.writeString(
            dir.resolve("floe-with-secrets.properties"),
            "config.providers=file\n"
                + "config.providers.file.class="
                + "org.apache.kafka.common.config.provider.FileConfigProvider\n"
                + "floe.catalog.lake.type=jdbc\n"
                + "floe.catalog.lake.uri=${file:"
                + secrets
                + ":uri}\n"
                + "floe.catalog.lake.warehouse="
                + dir.resolve("warehouse").toUri()
                + "\n");

    // When
    Run run = run("validate", "--config", viaProvider.toString(), views(VIEWS).toString());

    // Then the catalog was reached with the resolved URI
    assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).contains("ohlcv_1m: valid").contains("2 views, 0 invalid");
  }

  @Test
  void shouldPrintJsonWithTypes() throws Exception {
    Run run = run("validate", "--json", "--config", config.toString(), views(VIEWS).toString());

    assertThat(run.exitCode()).isZero();
    JsonNode json = new ObjectMapper().readTree(run.out());
    JsonNode first = json.get(0);
    assertThat(first.get("name").asText()).isEqualTo("ohlcv_1m");
    assertThat(first.get("valid").asBoolean()).isTrue();
    assertThat(first.get("error").isNull()).isTrue();
    assertThat(first.get("source").asText()).isEqualTo("lake.market.trades");
    assertThat(first.get("bucketColumn").asText()).isEqualTo("ts");
    assertThat(first.get("deltaPath").asBoolean()).isFalse();
    assertThat(json.get(1).get("deltaPath").asBoolean()).isTrue();
    assertThat(first.get("granularity").asText()).isEqualTo("minute");
    assertThat(first.get("timezone").asText()).isEqualTo("UTC");
    assertThat(first.get("groupKeys").get(0).asText()).isEqualTo("symbol");
    assertThat(first.get("columns").get(1).get("name").asText()).isEqualTo("minute_ts");
    assertThat(first.get("columns").get(1).get("type").asText()).isEqualTo("timestamptz");
    assertThat(json.get(1).get("bucketColumn").asText()).isEqualTo("minute_ts");
  }

  @Test
  void shouldAcceptSubqueriesAndWithChainsAndShowTheFlatQueryFloeMaintains() throws Exception {
    // Given a view over a filtered subquery and one over a WITH chain that renames the bucket
    Path file =
        views(
            """
            views:
              - name: buys_5m
                query: |
                  SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts, sum(notional) AS v
                  FROM (SELECT symbol, ts, price * quantity AS notional
                        FROM lake.market.trades WHERE price > 0) AS t
                  WHERE notional > 100
                  GROUP BY 1, 2
                target: lake.analytics.buys_5m
              - name: hourly
                query: |
                  WITH f AS (SELECT ts AS event_ts, symbol FROM lake.market.trades),
                       g AS (SELECT event_ts, upper(symbol) AS sym FROM f)
                  SELECT sym, date_trunc('hour', event_ts) AS hour_ts, count(*) AS n
                  FROM g GROUP BY 1, 2
                target: lake.analytics.hourly
            """);

    // When
    Run text = run("validate", "--config", config.toString(), file.toString());
    Run json = run("validate", "--json", "--config", config.toString(), file.toString());

    // Then both are valid, bucketed on the source column, with the one flat query Floe maintains
    assertThat(text.exitCode()).as(text.out()).isZero();
    assertThat(text.out())
        .contains("buys_5m: valid")
        .contains("bucket       date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts in UTC")
        .contains("reads        symbol, ts, price, quantity")
        .contains(
            "flat query   SELECT \"symbol\", date_bin(INTERVAL '5' MINUTE, \"ts\") AS \"bar_ts\"")
        .contains(
            "WHERE \"price\" > CAST(0 AS DOUBLE) AND \"price\" * \"quantity\" > CAST(100 AS DOUBLE)")
        .contains("hourly: valid")
        .contains("bucket       date_trunc('hour', ts) AS hour_ts in UTC")
        .contains("reads        symbol, ts" + System.lineSeparator())
        .contains("appends      folded into the rows of their groups (delta path)");
    JsonNode hourly = new ObjectMapper().readTree(json.out()).get(1);
    assertThat(hourly.get("bucketColumn").asText()).isEqualTo("ts");
    assertThat(hourly.get("groupKeys").get(0).asText()).isEqualTo("sym");
    assertThat(hourly.get("flatQuery").asText())
        .isEqualTo(
            """
            SELECT UPPER("symbol") AS "sym", DATE_TRUNC('hour', "ts") AS "hour_ts", COUNT(*) AS "n"
            FROM "lake"."market"."trades"
            GROUP BY UPPER("symbol"), DATE_TRUNC('hour', "ts")""");
  }

  @Test
  void shouldShowTheDimensionTablesAndJoinKeysOfAJoinView() throws Exception {
    // Given a dimension of sectors per symbol and a view that joins trades to it
    String uri = "jdbc:sqlite:" + dir.resolve("catalog.db");
    Catalog catalog =
        CatalogUtil.buildIcebergCatalog(
            "lake",
            Map.of(
                "type",
                "jdbc",
                "uri",
                uri,
                "warehouse",
                dir.resolve("warehouse").toUri().toString()),
            new Configuration());
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("ref"));
    catalog.createTable(
        TableIdentifier.of("ref", "symbols"),
        new Schema(
            Types.NestedField.optional(1, "ticker", Types.StringType.get()),
            Types.NestedField.optional(2, "sector", Types.StringType.get())),
        PartitionSpec.unpartitioned());
    ((AutoCloseable) catalog).close();
    Path file =
        views(
            """
            views:
              - name: by_sector
                query: |
                  SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume
                  FROM lake.market.trades t LEFT JOIN lake.ref.symbols s ON t.symbol = s.ticker
                  GROUP BY 1, 2
                target: lake.analytics.by_sector
            """);

    // When it is validated against the catalog
    Run text = run("validate", "--config", config.toString(), file.toString());
    Run json = run("validate", "--json", "--config", config.toString(), file.toString());

    // Then the dimension, the kind of join, its keys and the columns read of it are shown
    assertThat(text.exitCode()).as(text.out() + text.err()).isZero();
    assertThat(text.out())
        .contains("by_sector: valid")
        .contains("joins        LEFT lake.ref.symbols ON symbol = ticker, reading ticker, sector");
    JsonNode dimension = new ObjectMapper().readTree(json.out()).get(0).get("dimensions").get(0);
    assertThat(dimension.get("table").asText()).isEqualTo("lake.ref.symbols");
    assertThat(dimension.get("join").asText()).isEqualTo("LEFT");
    assertThat(dimension.get("factKeys").get(0).asText()).isEqualTo("symbol");
    assertThat(dimension.get("keys").get(0).asText()).isEqualTo("ticker");
    assertThat(dimension.get("columns")).hasSize(2);
  }

  @Test
  void shouldPrintAStrideAsTheQueryWritesIt() throws Exception {
    // Given a view of 5-minute bars and one of the n-minute idiom with a divisor of 7
    Path file =
        views(
            """
            views:
              - name: bars_5m
                query: |
                  SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts, count(*) AS n
                  FROM lake.market.trades GROUP BY 1, 2
                target: lake.analytics.bars_5m
              - name: bars_7m
                query: |
                  SELECT date_trunc('hour', ts) + (minute(ts) / 7) * INTERVAL '7' MINUTE AS bar,
                         count(*) AS n
                  FROM lake.market.trades GROUP BY 1
                target: lake.analytics.bars_7m
            """);

    // When
    Run text = run("validate", "--config", config.toString(), file.toString());
    Run json = run("validate", "--json", "--config", config.toString(), file.toString());

    // Then the stride is shown, and the divisor rejected with its reason and position
    assertThat(text.exitCode()).isEqualTo(1);
    assertThat(text.out())
        .contains("bars_5m: valid")
        .contains("bucket       date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts in UTC")
        .contains("bars_7m: INVALID")
        .contains("line 1, column 47")
        .contains("7 does not divide the hour (60 minutes)");
    assertThat(new ObjectMapper().readTree(json.out()).get(0).get("granularity").asText())
        .isEqualTo("5 minutes");
  }

  @Test
  void shouldExitOneAndNameTheUnknownColumn() throws Exception {
    Path file =
        views(
            """
            views:
              - name: broken
                query: |
                  SELECT symbol, date_trunc('day', ts) AS day_ts,
                         sum(qty) AS volume
                  FROM lake.market.trades GROUP BY 1, 2
                target: lake.analytics.broken
            """);

    Run run = run("validate", "--config", config.toString(), file.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out())
        .contains("broken: INVALID")
        .contains("Invalid view query at line 2, column 12: unknown column: qty");
  }

  @Test
  void shouldExitOneAndNameTheNestingLimitOfAQueryTooDeepToParse() throws Exception {
    // Given a view whose WHERE clause sits in 3,000 pairs of parentheses
    Path file =
        views(
            "views:\n  - name: deep\n    target: lake.analytics.deep\n    query: SELECT"
                + " date_trunc('day', ts) AS day_ts, count(*) AS n FROM lake.market.trades WHERE "
                + "(".repeat(3_000)
                + "quantity > 0"
                + ")".repeat(3_000)
                + " GROUP BY 1\n");

    // When it is validated
    Run run = run("validate", "--config", config.toString(), file.toString());

    // Then the limit is named, not a syntax error at line 0
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out())
        .contains("deep: INVALID")
        .contains("a view query may nest expressions at most 128 levels deep")
        .doesNotContain("syntax error");
  }

  @Test
  void shouldGiveTheRuleAndPositionOfAnInvalidQueryInJsonAsTheApiDoes() throws Exception {
    // Given a view whose query has no GROUP BY, on its second line
    Path file =
        views(
            """
            views:
              - name: flat
                query: |
                  SELECT symbol
                  FROM lake.market.trades
                target: lake.analytics.flat
            """);

    // When it is validated with --json
    Run run = run("validate", "--json", file.toString());

    // Then the object names the rule and where it is broken, as POST /api/validate answers
    assertThat(run.exitCode()).isEqualTo(1);
    JsonNode flat = new ObjectMapper().readTree(run.out()).get(0);
    assertThat(flat.get("valid").asBoolean()).isFalse();
    assertThat(flat.get("rule").asText()).isEqualTo("NO_GROUP_BY");
    assertThat(flat.get("line").asInt()).isEqualTo(1);
    assertThat(flat.get("column").asInt()).isPositive();
    assertThat(flat.get("target").asText()).isEqualTo("lake.analytics.flat");
  }

  @Test
  void shouldCheckStructureOnlyWithoutConfigAndSaySo() throws Exception {
    Run run = run("validate", "--json", views(VIEWS).toString());

    assertThat(run.exitCode()).isZero();
    JsonNode first = new ObjectMapper().readTree(run.out()).get(0);
    assertThat(first.get("checked").asText()).isEqualTo("structure");
    assertThat(first.get("columns").get(0).get("type").isNull()).isTrue();
    assertThat(run("validate", views(VIEWS).toString()).out())
        .startsWith("No --config given: checked query structure only");
  }

  @Test
  void shouldReportAnUnknownCatalogAsAnInvalidView() throws Exception {
    Path file =
        views(
            """
            views:
              - name: elsewhere
                query: SELECT date_trunc('day', ts) AS d, count(*) AS n FROM warehouse.m.t GROUP BY 1
                target: lake.analytics.elsewhere
            """);

    Run run = run("validate", "--config", config.toString(), file.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("unknown catalog 'warehouse' (configured: lake)");
  }

  @Test
  void shouldExitOneWithoutAStackTraceOnAMalformedFile() throws Exception {
    Path file = views("views:\n  - name: v\n    query: [oops\n");

    Run run = run("validate", file.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).startsWith(file + ":4:1: malformed YAML").doesNotContain("Exception");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void shouldExitOneOnAMissingConfigFile() throws Exception {
    Run run =
        run(
            "validate",
            "--config",
            dir.resolve("nope.properties").toString(),
            views(VIEWS).toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).contains("nope.properties: cannot read config file");
  }

  @Test
  void shouldShowUsageWhenNoFileIsGiven() {
    Run run = run("validate");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Missing required parameter: 'FILE'");
  }

  @Test
  void shouldRefuseViewsOfTheFileThatShareATargetOrWriteTheirSource() throws Exception {
    Path file =
        views(
            VIEWS
                + """
                  - name: copy
                    query: SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.market.trades GROUP BY 1
                    target: lake.analytics.ohlcv_1h
                  - name: loop
                    query: SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.market.trades GROUP BY 1
                    target: lake.market.trades
                """);

    Run run = run("validate", "--config", config.toString(), file.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out())
        .contains("ohlcv_1m: valid")
        .contains(
            "error        View 'copy' cannot write lake.analytics.ohlcv_1h: it is the target of"
                + " view 'ohlcv_1h'")
        .contains("error        View 'loop' cannot write lake.market.trades: it is its source");
  }
}
