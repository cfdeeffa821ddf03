package io.floe.topology.view.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.ViewRule;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Fixed-stride buckets in view queries: {@code date_bin} and Trino's n-minute idiom. */
class ViewQueryParserStrideTest {

  @Test
  void shouldDeriveAFiveMinuteStrideFromDateBin() throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts) AS bar_ts, count(*) AS n"
                + " FROM lake.market.trades GROUP BY symbol, date_bin(INTERVAL '5' MINUTE, ts)");

    assertThat(query.granularity().unit()).isEqualTo("5 minutes");
    assertThat(query.bucketColumn()).isEqualTo("ts");
    assertThat(query.bucketOutput()).isEqualTo("bar_ts");
    assertThat(query.groupKeys()).containsExactly("symbol");
    assertThat(List.of(query.bucketLine(), query.bucketColumnPosition())).containsExactly(1, 146);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          date_bin(INTERVAL '90' MINUTE, ts)                                      | 90 minutes
          date_bin(INTERVAL '1:30' HOUR TO MINUTE, ts)                            | 90 minutes
          date_bin(INTERVAL '6' HOUR, ts)                                         | 6 hours
          date_bin(INTERVAL '1' DAY, ts)                                          | 1 day
          date_bin(INTERVAL '6' HOUR, ts, TIMESTAMP '2024-01-01 03:00:00')        | 6 hours from 2024-01-01 03:00:00
          date_bin(INTERVAL '5' MINUTE, ts, TIMESTAMP '2024-01-01 00:02:30.5')    | 5 minutes from 2024-01-01 00:02:30.5
          date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE       | 15 minutes
          INTERVAL '15' MINUTE * (minute(ts) / 15) + date_trunc('hour', ts)       | 15 minutes
          date_trunc('day', ts) + (hour(ts) / 6) * INTERVAL '6' HOUR              | 6 hours
          """)
  void shouldDeriveTheStrideOfEachAcceptedForm(String bucket, String stride)
      throws InvalidViewException {
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT " + bucket + " AS bar_ts, count(*) AS n FROM lake.market.trades GROUP BY 1");

    assertThat(query.granularity().unit()).isEqualTo(stride);
    assertThat(query.bucketColumn()).isEqualTo("ts");
    assertThat(query.bucketOutput()).isEqualTo("bar_ts");
  }

  @Test
  void shouldAcceptTheIdiomAsOneBucketInGroupByHavingAndWhere() throws InvalidViewException {
    String bar = "date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE";
    ParsedViewQuery query =
        ViewQueryParser.parse(
            "SELECT symbol, "
                + bar
                + " AS bar_ts, count(*) AS n FROM lake.market.trades WHERE "
                + bar
                + " >= TIMESTAMP '2026-01-01 00:00:00' GROUP BY symbol, bar_ts");

    assertThat(query.granularity().unit()).isEqualTo("15 minutes");
    assertThat(query.groupKeys()).containsExactly("symbol");
  }

  @ParameterizedTest(name = "{0} at {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          UNSUPPORTED_STRIDE     | SELECT date_trunc('hour', ts) + (minute(ts) / 7) * INTERVAL '7' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 47
          WRAPPED_BUCKET         | SELECT date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '5' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 53
          WRAPPED_BUCKET         | SELECT date_trunc('hour', ts) + (hour(ts) / 15) * INTERVAL '15' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 33
          WRAPPED_BUCKET         | SELECT date_trunc('hour', ts) + (minute(created) / 15) * INTERVAL '15' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 34
          WRAPPED_BUCKET         | SELECT date_trunc('minute', ts) + (minute(ts) / 5) * INTERVAL '5' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          WRAPPED_BUCKET         | SELECT date_trunc('hour', ts) + (minute(ts) % 15) * INTERVAL '15' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 33
          WRAPPED_BUCKET         | SELECT date_trunc('hour', ts) + INTERVAL '5' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          WRAPPED_BUCKET         | SELECT date_bin(INTERVAL '5' MINUTE, ts) - INTERVAL '1' MINUTE AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          UNSUPPORTED_STRIDE     | SELECT date_bin(INTERVAL '30' SECOND, ts) AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 17
          UNSUPPORTED_STRIDE     | SELECT date_bin(INTERVAL '1' MONTH, ts) AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 17
          UNSUPPORTED_STRIDE     | SELECT date_bin(300, ts) AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 17
          INVALID_ARGUMENT       | SELECT date_bin(INTERVAL '5' MINUTE, ts, '2024-01-01') AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 42
          INVALID_ARGUMENT       | SELECT date_bin(INTERVAL '5' MINUTE) AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 8
          BUCKET_ARGUMENT        | SELECT date_bin(INTERVAL '5' MINUTE, ts + INTERVAL '1' HOUR) AS bar, count(*) AS n FROM lake.m.trades GROUP BY 1 | 1 | 38
          MULTIPLE_GRANULARITIES | SELECT date_bin(INTERVAL '5' MINUTE, ts) AS bar, date_trunc('minute', ts) AS m, count(*) AS n FROM lake.m.trades GROUP BY 1, 2 | 1 | 50
          MULTIPLE_GRANULARITIES | SELECT date_bin(INTERVAL '15' MINUTE, ts) AS bar, count(*) AS n FROM lake.m.trades WHERE date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '15' MINUTE > TIMESTAMP '2026-01-01 00:00:00' GROUP BY 1 | 1 | 90
          BUCKET_NOT_SELECTED    | SELECT symbol, count(*) AS n FROM lake.m.trades GROUP BY symbol, date_bin(INTERVAL '5' MINUTE, ts) | 1 | 66
          """)
  void shouldRejectOtherArithmeticOnABucketWithTheRuleAndItsPosition(
      String rule, String sql, int line, int column) {
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
  void shouldSayWhyADivisorThatDoesNotDivideTheHourIsRejected() {
    assertThatThrownBy(
            () ->
                ViewQueryParser.parse(
                    "SELECT date_trunc('hour', ts) + (minute(ts) / 7) * INTERVAL '7' MINUTE AS bar,"
                        + " count(*) AS n FROM lake.m.trades GROUP BY 1"))
        .isInstanceOf(InvalidViewException.class)
        .hasMessageContaining("7 does not divide the hour (60 minutes)")
        .hasMessageContaining("date_bin(INTERVAL '7' MINUTE, ts)");
  }

  @Test
  void shouldSayWhatTheIdiomsIntervalMustBe() {
    assertThatThrownBy(
            () ->
                ViewQueryParser.parse(
                    "SELECT date_trunc('hour', ts) + (minute(ts) / 15) * INTERVAL '5' MINUTE AS"
                        + " bar, count(*) AS n FROM lake.m.trades GROUP BY 1"))
        .isInstanceOf(InvalidViewException.class)
        .hasMessageContaining("must be the divisor's 15 minutes, INTERVAL '15' MINUTE")
        .hasMessageContaining(
            "write date_trunc('hour', ts) + (minute(ts) / N) * INTERVAL 'N' MINUTE");
  }

  @Test
  void shouldNameBothBucketsWhenAStrideMeetsAnotherGranularity() {
    assertThatThrownBy(
            () ->
                ViewQueryParser.parse(
                    "SELECT date_bin(INTERVAL '5' MINUTE, ts) AS bar, date_trunc('minute', ts) AS"
                        + " m, count(*) AS n FROM lake.m.trades GROUP BY 1, 2"))
        .isInstanceOf(InvalidViewException.class)
        .hasMessageEndingWith("date_bin(INTERVAL '5' MINUTE, ts) and date_trunc('minute', ts)");
  }
}
