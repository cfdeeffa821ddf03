package io.floe.dev;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code floe bench} runs its cheap scenarios and reports what they measured: this checks the
 * benchmark's plumbing and the figures that do not depend on the machine, not the timings.
 */
class BenchIT {

  @TempDir Path dir;

  @Test
  void shouldMeasureLateDataAndRefreshCostBesideTheirBaselines() throws Exception {
    Path report = dir.resolve("report.json");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));

    int exit =
        cli.execute(
            "bench",
            "--quick",
            "--scenario",
            "late-data,refresh-cost",
            "--dir",
            dir.resolve("work").toString(),
            "--out",
            report.toString());

    assertThat(exit).as(err.toString()).isZero();
    assertThat(out.toString())
        .contains("buckets recomputed per bucket touched")
        .contains("whole dirty bucket (iceberg-ivm)");
    JsonNode json = new ObjectMapper().readTree(report.toFile());
    JsonNode late = scenario(json, "late-data");
    // One late row and one fresh row in a day-partitioned table: exactly the two minutes.
    assertThat(figure(late, "day-partitioned").get("floe").asDouble()).isEqualTo(1.0);
    // iceberg-ivm's min..max range spans three days of minutes.
    assertThat(figure(late, "day-partitioned").get("baseline").asDouble())
        .isEqualTo((3 * 1440 + 1) / 2.0);
    JsonNode cost = scenario(json, "refresh-cost");
    assertThat(cost.get("notes").toString())
        .contains("weekly equals the oracle")
        .contains("weekly_avg equals the oracle")
        .doesNotContain("WRONG");
    JsonNode rowsVsFull = cost.get("figures").get(0);
    assertThat(rowsVsFull.get("baselineIs").asText()).isEqualTo("full refresh");
    // The full refresh reads all 14 days plus the append; the delta path only the append.
    assertThat(rowsVsFull.get("baseline").asDouble()).isEqualTo((14 * 50_000 + 1_000) / 1000.0);
    assertThat(rowsVsFull.get("floe").asDouble()).isEqualTo(1.0);
    // With avg the view is not decomposable: its partial states take the append, read alone.
    assertThat(figure(cost, "view with avg").get("floe").asDouble()).isEqualTo(1.0);
    // So do the OHLCV bars' min_by and max_by (issue 22's goal: at most 2).
    assertThat(figure(cost, "OHLCV view").get("floe").asDouble()).isEqualTo(1.0);
    assertThat(cost.get("notes").toString()).contains("weekly_bars equals the oracle");
    // OHLCV and VWAP over a day and a week (issue 22): each equals the oracle after an append, a
    // late row and a delete; the OHLCV bars fold the append (at most 2 rows read per row
    // appended), and no refresh reads more than a recompute of its whole dirty bucket.
    for (String view : List.of("ohlcv_day", "ohlcv_week", "vwap_day", "vwap_week")) {
      assertThat(cost.get("notes").toString())
          .contains(view + " equals the oracle after the three changes");
      for (String change :
          List.of(
              "rows read per row appended, ",
              "dirty hour after a late row, ",
              "dirty hour after a delete, ")) {
        JsonNode measured = figure(cost, change + view);
        assertThat(measured.get("floe").asDouble())
            .as(change + view)
            .isLessThanOrEqualTo(measured.get("baseline").asDouble());
      }
    }
    assertThat(figure(cost, "rows read per row appended, ohlcv_week").get("floe").asDouble())
        .isLessThanOrEqualTo(2.0);
    // The whole dirty week of 1 M rows over 14 days: half the rows and the append.
    assertThat(figure(cost, "rows read per row appended, ohlcv_week").get("baseline").asDouble())
        .isGreaterThan(400);
    // The 1-minute view over time-sorted day files: pruned to the pages of the dirty minutes.
    assertThat(cost.get("notes").toString()).contains("ohlcv_1m equals the oracle");
    JsonNode minute = figure(cost, "1-minute view");
    assertThat(minute.get("baseline").asDouble()).isGreaterThan(100);
    assertThat(minute.get("floe").asDouble())
        .as("rows read per row in the dirty minutes; issue 12's goal is 1.5 at most")
        .isLessThanOrEqualTo(1.5);
  }

  @Test
  void shouldMeasureAJoinedViewsRefreshAfterAFactAppendAndAfterADimensionChange() throws Exception {
    Path report = dir.resolve("report.json");
    StringWriter err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(new StringWriter()));
    cli.setErr(new PrintWriter(err));

    int exit =
        cli.execute(
            "bench",
            "--quick",
            "--scenario",
            "join",
            "--dir",
            dir.resolve("work").toString(),
            "--out",
            report.toString());

    assertThat(exit).as(err.toString()).isZero();
    JsonNode join = scenario(new ObjectMapper().readTree(report.toFile()), "join");
    assertThat(join.get("notes").toString())
        .contains("sectors_5m equals the oracle after the fact append")
        .contains("sectors_5m equals the oracle after the dimension change")
        .contains("sectors_5m_full equals the oracle after its full refresh")
        .doesNotContain("WRONG");
    // The append is folded in (sum and count): only the appended rows are read, fewer than the
    // dirty buckets hold; a full refresh reads every fact row.
    JsonNode append = figure(join, "after a fact append");
    assertThat(append.get("baselineIs").asText()).isEqualTo("full refresh");
    assertThat(append.get("floe").asDouble()).isLessThanOrEqualTo(1.0);
    assertThat(append.get("baseline").asDouble()).isGreaterThan(10);
    // A dimension change reads no more than a full refresh, and the affected buckets are a part.
    JsonNode dimension = figure(join, "after a dimension change of one key");
    assertThat(dimension.get("baseline").asDouble()).isGreaterThan(1.5);
    assertThat(dimension.get("floe").asDouble())
        .isLessThanOrEqualTo(dimension.get("baseline").asDouble());
  }

  @Test
  void shouldBringThreeViewsCurrentFromOneNoticeOfAFirstRun() throws Exception {
    Path report = dir.resolve("report.json");
    StringWriter err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(new StringWriter()));
    cli.setErr(new PrintWriter(err));

    int exit =
        cli.execute(
            "bench",
            "--quick",
            "--scenario",
            "first-run",
            "--dir",
            dir.resolve("work").toString(),
            "--out",
            report.toString());

    assertThat(exit).as(err.toString()).isZero();
    JsonNode firstRun = scenario(new ObjectMapper().readTree(report.toFile()), "first-run");
    assertThat(firstRun.get("notes").toString())
        .contains("ohlcv_1m equals the oracle")
        .contains("volume_1h equals the oracle")
        .contains("weekly equals the oracle")
        .doesNotContain("WRONG");
    assertThat(figure(firstRun, "every view is current").get("baseline").asDouble()).isPositive();
    for (String view : new String[] {"ohlcv_1m", "volume_1h", "weekly"}) {
      assertThat(figure(firstRun, "target commits (" + view + ")").get("floe").asDouble())
          .as("target commits of " + view + "; issue 12's goal is one per view")
          .isEqualTo(1.0);
    }
  }

  private static JsonNode scenario(JsonNode report, String name) {
    for (JsonNode s : report.get("scenarios")) {
      if (s.get("name").asText().equals(name)) {
        return s;
      }
    }
    throw new AssertionError("no scenario " + name + " in " + report);
  }

  private static JsonNode figure(JsonNode scenario, String metricPart) {
    for (JsonNode f : scenario.get("figures")) {
      if (f.get("metric").asText().contains(metricPart)) {
        return f;
      }
    }
    throw new AssertionError("no figure like " + metricPart + " in " + scenario);
  }
}
