package io.floe.topology.view;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.view.sql.ViewQueryBinderTest;
import io.floe.topology.view.sql.ViewQueryParserTest;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.junit.jupiter.api.Test;

class ViewValidatorTest {

  private static final TableName TRADES = TableName.parse("lake.market.trades");

  private static ViewDefinition view(String name, String query, String target) {
    return ViewDefinition.of(name, query, TableName.parse(target));
  }

  private static final ViewDefinition ONE_MINUTE =
      view(
          "ohlcv_1m",
          "SELECT symbol, date_trunc('minute', ts) AS minute_ts, max(price) AS high,"
              + " sum(quantity) AS volume FROM lake.market.trades GROUP BY 1, 2",
          "lake.analytics.ohlcv_1m");

  private static final ViewDefinition ONE_HOUR =
      view(
          "ohlcv_1h",
          "SELECT symbol, date_trunc('hour', minute_ts) AS hour_ts, max(high) AS high,"
              + " sum(volume) AS volume FROM lake.analytics.ohlcv_1m GROUP BY 1, 2",
          "lake.analytics.ohlcv_1h");

  private static ViewValidator.SchemaLookup only(Map<TableName, Schema> tables) {
    return table -> {
      if (!table.catalog().equals("lake")) {
        throw new IllegalArgumentException("unknown catalog '" + table.catalog() + "'");
      }
      return Optional.ofNullable(tables.get(table));
    };
  }

  @Test
  void shouldCheckAChainedViewAgainstItsUpstreamOutputBeforeTheTargetExists() {
    List<ValidatedView> results =
        ViewValidator.validate(
            List.of(ONE_HOUR, ONE_MINUTE), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)));

    assertThat(results).allMatch(ValidatedView::isValid);
    ViewPlan hourly = results.get(0).plan();
    assertThat(hourly.bucketColumn()).isEqualTo("minute_ts");
    assertThat(hourly.bucketing().columnType()).isEqualTo(BucketColumnType.TIMESTAMPTZ);
    assertThat(hourly.outputSchema().findField("volume").type().toString()).isEqualTo("long");
  }

  @Test
  void shouldReportAQueryTooDeepToBindAsInvalidInsteadOfFailing() {
    // Given 800 OR terms, short enough for the length limit; Calcite's conversion of such a
    // tree used to overflow the stack and escape as a RuntimeException
    ViewDefinition deep = view("deep", ViewQueryParserTest.withOrTerms(800), "lake.analytics.deep");

    // When it is checked against its source schema
    ValidatedView result =
        ViewValidator.validate(List.of(deep), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)))
            .get(0);

    // Then it is invalid, with the limit it passed
    assertThat(result.isValid()).isFalse();
    assertThat(result.invalidQuery().rule()).isEqualTo(ViewRule.TOO_DEEPLY_NESTED);
    assertThat(result.error())
        .contains("a view query may nest expressions at most 128 levels deep");
  }

  @Test
  void shouldReportAMissingSourceTable() {
    List<ValidatedView> results = ViewValidator.validate(List.of(ONE_MINUTE), only(Map.of()));

    assertThat(results.get(0).error()).isEqualTo("source table lake.market.trades does not exist");
    assertThat(results.get(0).query()).isNotNull();
  }

  @Test
  void shouldReportAnUnknownCatalog() {
    ViewDefinition elsewhere =
        view(
            "v",
            "SELECT date_trunc('day', ts) AS d, count(*) AS n FROM other.m.t GROUP BY 1",
            "lake.a.v");

    List<ValidatedView> results =
        ViewValidator.validate(
            List.of(elsewhere), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)));

    assertThat(results.get(0).error()).isEqualTo("unknown catalog 'other'");
  }

  @Test
  void shouldKeepValidatingTheOthersWhenOneViewIsInvalid() {
    ViewDefinition broken =
        view("broken", "SELECT symbol FROM lake.market.trades", "lake.analytics.broken");

    List<ValidatedView> results =
        ViewValidator.validate(
            List.of(broken, ONE_MINUTE), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)));

    assertThat(results.get(0).isValid()).isFalse();
    assertThat(results.get(0).error()).contains("a view must GROUP BY a date_trunc bucket");
    assertThat(results.get(1).isValid()).isTrue();
  }

  @Test
  void shouldFailAChainedViewWhoseUpstreamIsInvalid() {
    ViewDefinition brokenUpstream =
        view(
            "ohlcv_1m",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts FROM lake.market.trades",
            "lake.analytics.ohlcv_1m");

    List<ValidatedView> results =
        ViewValidator.validate(
            List.of(ONE_HOUR, brokenUpstream), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)));

    assertThat(results.get(0).error())
        .isEqualTo(
            "source table lake.analytics.ohlcv_1m is the target of view 'ohlcv_1m', which is"
                + " invalid");
  }

  @Test
  void shouldCheckPartitioningColumnsAndTransforms() {
    ViewDefinition unknownColumn =
        new ViewDefinition(
            "a",
            ONE_MINUTE.query(),
            TableName.parse("lake.a.a"),
            List.of(TargetPartitionField.parse("day(minute)")),
            ZoneOffset.UTC,
            null);
    ViewDefinition wrongType =
        new ViewDefinition(
            "b",
            ONE_MINUTE.query(),
            TableName.parse("lake.a.b"),
            List.of(TargetPartitionField.parse("day(symbol)")),
            ZoneOffset.UTC,
            null);

    List<ValidatedView> results =
        ViewValidator.validate(
            List.of(unknownColumn, wrongType), only(Map.of(TRADES, ViewQueryBinderTest.TRADES)));

    assertThat(results.get(0).error())
        .isEqualTo(
            "target_partitioning: day(minute) names no output column (outputs: symbol, minute_ts,"
                + " high, volume)");
    assertThat(results.get(1).error()).startsWith("target_partitioning: ").contains("symbol");
  }

  @Test
  void shouldCheckStructureOnlyWithoutALookup() {
    List<ValidatedView> results = ViewValidator.validateStructure(List.of(ONE_MINUTE));

    assertThat(results.get(0).isValid()).isTrue();
    assertThat(results.get(0).isSchemaChecked()).isFalse();
    assertThat(results.get(0).query().groupKeys()).containsExactly("symbol");
  }
}
