package io.floe.dev.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code floe bench}: Floe's claims measured on the embedded stack, each figure beside its baseline
 * from the same run. Scenarios run one after the other, each in its own directory.
 */
public final class Bench {

  /** The scenarios, in the order they run. */
  public static final List<String> SCENARIOS =
      List.of(
          LateDataScenario.NAME,
          RefreshCostScenario.NAME,
          JoinScenario.NAME,
          BackfillScenario.NAME,
          FirstRunScenario.NAME,
          StartupScenario.NAME,
          FreshnessScenario.NAME,
          ManyViewsScenario.NAME,
          TargetWriteScenario.NAME,
          ReadersScenario.NAME,
          FailoverScenario.NAME,
          ObjectStoreScenario.NAME);

  /**
   * The scenarios that run only when named: they measure choices, or take minutes of processes
   * coming and going, not Floe's claims.
   */
  public static final Set<String> ON_REQUEST =
      Set.of(ReadersScenario.NAME, FailoverScenario.NAME, ObjectStoreScenario.NAME);

  /** What the user asked for. */
  public record Options(
      Path dir,
      boolean quick,
      Set<String> scenarios,
      List<Duration> commitIntervals,
      int tables,
      int viewsPerTable,
      int s3LatencyMs) {}

  private final Options options;
  private final PrintWriter log;

  /** A bench that reports its progress to {@code log}. */
  public Bench(Options options, PrintWriter log) {
    this.options = options;
    this.log = log;
  }

  /** Runs the chosen scenarios; a scenario that fails is reported and the others still run. */
  public List<ScenarioResult> run() throws Exception {
    BenchContext ctx = new BenchContext(options.dir(), options.quick(), log);
    List<ScenarioResult> results = new ArrayList<>();
    for (String scenario : SCENARIOS) {
      if (options.scenarios().isEmpty()
          ? ON_REQUEST.contains(scenario)
          : !options.scenarios().contains(scenario)) {
        continue;
      }
      log.println("== " + scenario);
      log.flush();
      long start = System.nanoTime();
      ScenarioResult result;
      try {
        result =
            switch (scenario) {
              case LateDataScenario.NAME -> LateDataScenario.run(ctx);
              case RefreshCostScenario.NAME -> RefreshCostScenario.run(ctx);
              case JoinScenario.NAME -> JoinScenario.run(ctx);
              case BackfillScenario.NAME -> BackfillScenario.run(ctx);
              case FirstRunScenario.NAME -> FirstRunScenario.run(ctx);
              case StartupScenario.NAME -> StartupScenario.run(ctx);
              case FreshnessScenario.NAME -> FreshnessScenario.run(ctx, options.commitIntervals());
              case TargetWriteScenario.NAME -> TargetWriteScenario.run(ctx);
              case ReadersScenario.NAME -> ReadersScenario.run(ctx);
              case FailoverScenario.NAME -> FailoverScenario.run(ctx);
              case ObjectStoreScenario.NAME -> ObjectStoreScenario.run(ctx, options.s3LatencyMs());
              case ManyViewsScenario.NAME ->
                  ManyViewsScenario.run(ctx, options.tables(), options.viewsPerTable());
              default -> throw new IllegalArgumentException(scenario);
            };
      } catch (Exception e) {
        result =
            new ScenarioResult(scenario, "failed")
                .note("FAILED: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        e.printStackTrace(log);
      }
      result.seconds((System.nanoTime() - start) / 1e9);
      results.add(result);
    }
    return results;
  }

  /** The results as a table a person reads. */
  public static void print(List<ScenarioResult> results, PrintWriter out) {
    String format = "%-13s %-52s %12s  %12s  %-34s %7s%n";
    out.printf(format, "scenario", "metric", "floe", "baseline", "baseline is", "ratio");
    for (ScenarioResult result : results) {
      for (Figure f : result.figures()) {
        out.printf(
            format,
            result.name(),
            f.metric(),
            value(f.floe(), f.unit()),
            f.baseline() == null ? "" : value(f.baseline(), f.unit()),
            f.baselineName() == null ? "" : f.baselineName(),
            f.ratio() == null ? "" : String.format(Locale.ROOT, "%.3g", f.ratio()));
      }
      for (String note : result.notes()) {
        out.println("  " + result.name() + ": " + note);
      }
    }
    out.println(
        "ratio = floe ÷ baseline, both measured in this run. For lags, times, rows and bytes lower"
            + " is better; for throughput higher is better.");
    out.flush();
  }

  private static String value(double v, String unit) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    String number =
        Math.abs(v) >= 1000
            ? String.format(Locale.ROOT, "%,.0f", v)
            : Math.abs(v) >= 10
                ? String.format(Locale.ROOT, "%.1f", v)
                : String.format(Locale.ROOT, "%.3f", v);
    return unit.isEmpty() ? number : number + " " + unit;
  }

  /** The results as JSON, for tooling and for comparing runs. */
  public static ObjectNode json(List<ScenarioResult> results, boolean quick) {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = mapper.createObjectNode();
    root.put("generatedAt", Instant.now().toString());
    root.put("quick", quick);
    ObjectNode machine = root.putObject("machine");
    machine.put("availableProcessors", Runtime.getRuntime().availableProcessors());
    machine.put("maxHeapMiB", Runtime.getRuntime().maxMemory() >> 20);
    machine.put("java", System.getProperty("java.version"));
    machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
    ArrayNode scenarios = root.putArray("scenarios");
    for (ScenarioResult result : results) {
      ObjectNode s = scenarios.addObject();
      s.put("name", result.name());
      s.put("description", result.description());
      s.put("seconds", result.seconds());
      s.set("parameters", mapper.valueToTree(result.parameters()));
      ArrayNode figures = s.putArray("figures");
      for (Figure f : result.figures()) {
        ObjectNode node = figures.addObject();
        node.put("metric", f.metric());
        node.put("unit", f.unit());
        putNumber(node, "floe", f.floe());
        if (f.baseline() != null) {
          putNumber(node, "baseline", f.baseline());
          node.put("baselineIs", f.baselineName());
          if (f.ratio() != null) {
            putNumber(node, "ratio", f.ratio());
          }
        }
        node.put("lowerIsBetter", f.lowerIsBetter());
      }
      s.set("notes", mapper.valueToTree(result.notes()));
    }
    return root;
  }

  private static void putNumber(ObjectNode node, String field, double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      node.putNull(field);
    } else {
      node.put(field, value);
    }
  }
}
