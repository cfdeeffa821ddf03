package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Fixed-stride buckets bound to a real schema: column types, zone, target type. */
class ViewQueryBinderStrideTest {

  private static ViewPlan bind(String sql, ZoneId zone) throws InvalidViewException {
    return ViewQueryBinder.bind(ViewQueryParser.parse(sql), ViewQueryBinderTest.TRADES, zone);
  }

  private static long micros(String instant) {
    return BucketColumnType.TIMESTAMPTZ.fromInstant(Instant.parse(instant));
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          date_bin(INTERVAL '5' MINUTE, ts)                                  | ts       | TIMESTAMPTZ    | timestamptz
          date_bin(INTERVAL '5' MINUTE, local_ts)                            | local_ts | TIMESTAMP      | timestamp
          date_bin(INTERVAL '5' MINUTE, ts_ns)                               | ts_ns    | TIMESTAMP_NS   | timestamp
          date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE  | ts       | TIMESTAMPTZ    | timestamptz
          date_trunc('day', ts_ns) + (hour(ts_ns) / 6) * INTERVAL '6' HOUR   | ts_ns    | TIMESTAMP_NS   | timestamp
          """)
  void shouldBindAStrideOfEveryTimestampColumn(
      String bucket, String column, String columnType, String targetType)
      throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT symbol, "
                + bucket
                + " AS bar_ts, count(*) AS n FROM lake.market.trades GROUP BY 1, 2",
            ZoneOffset.UTC);

    assertThat(plan.bucketColumn()).isEqualTo(column);
    assertThat(plan.bucketing().columnType()).isEqualTo(BucketColumnType.valueOf(columnType));
    assertThat(plan.outputSchema().findField("bar_ts").type().toString()).isEqualTo(targetType);
    assertThat(plan.requiredColumns()).contains(column);
  }

  @Test
  void shouldReadTheOriginInTheViewsTimeZone() throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT date_bin(INTERVAL '6' HOUR, ts, TIMESTAMP '2024-01-01 00:00:00') AS bar_ts,"
                + " count(*) AS n FROM lake.market.trades GROUP BY 1",
            ZoneId.of("Europe/Paris"));

    // Midnight in Paris (CET) is 23:00 UTC: bins start at 23:00, 05:00, 11:00 and 17:00 UTC.
    assertThat(plan.bucketing().floor(micros("2026-07-01T06:00:00Z")))
        .isEqualTo(micros("2026-07-01T05:00:00Z"));
  }

  @Test
  void shouldRejectAStrideOfADateColumnAtTheColumn() {
    String sql =
        "SELECT date_bin(INTERVAL '1' DAY, trade_date) AS d, count(*) AS n"
            + " FROM lake.market.trades GROUP BY 1";

    assertThatThrownBy(() -> bind(sql, ZoneOffset.UTC))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> {
              assertThat(e.rule()).isEqualTo(ViewRule.BUCKET_COLUMN_TYPE);
              assertThat(List.of(e.line(), e.column())).containsExactly(1, 35);
              assertThat(e.getMessage())
                  .endsWith(
                      "date_bin(INTERVAL '1' DAY, trade_date) needs a timestamp column;"
                          + " trade_date is a date");
            });
  }

  @Test
  void shouldRejectAStrideOfANonTimestampColumn() {
    assertThatThrownBy(
            () ->
                bind(
                    "SELECT date_bin(INTERVAL '5' MINUTE, quantity) AS b, count(*) AS n"
                        + " FROM lake.market.trades GROUP BY 1",
                    ZoneOffset.UTC))
        .isInstanceOfSatisfying(
            InvalidViewException.class,
            e -> assertThat(e.rule()).isEqualTo(ViewRule.BUCKET_COLUMN_TYPE));
  }

  @Test
  void shouldKeepTheBucketExpressionOutOfTheTargetsTypesWhenItIsInWhereToo()
      throws InvalidViewException {
    ViewPlan plan =
        bind(
            "SELECT date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts, count(*) AS n"
                + " FROM lake.market.trades"
                + " WHERE date_bin(INTERVAL '5' MINUTE, ts) >= TIMESTAMP '2026-01-01 00:00:00'"
                + " GROUP BY 1",
            ZoneOffset.UTC);

    assertThat(plan.outputSchema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("bar_ts", "n");
  }
}
