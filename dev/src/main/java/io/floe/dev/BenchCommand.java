package io.floe.dev;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.DurationConverter;
import io.floe.dev.bench.Bench;
import io.floe.dev.bench.ScenarioResult;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe bench}: measure Floe beside its baselines, in one run. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Measure Floe on the embedded stack (in-process broker, JDBC/SQLite catalog, local files),"
          + " each figure beside its baseline from the same run: freshness against a 30 s poller,"
          + " refresh cost against a full refresh and a whole-bucket recompute, the refresh cost"
          + " of a dimension join after a fact append and after a dimension change of one key"
          + " against a full refresh, backfill"
          + " throughput and a first run of three views against DuckDB, late data, many views"
          + " and target writes.",
      "Prints a table on stdout, progress on stderr, and writes JSON to --out.",
      "Exit code: 0, or 1 when a scenario failed."
    })
final class BenchCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--quick",
      description = "Smaller sizes and shorter windows: finishes in about 5 minutes on 2 cores.")
  boolean quick;

  @Option(
      names = "--out",
      defaultValue = "bench-report.json",
      paramLabel = "FILE",
      description = "Where to write the JSON report (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(
      names = "--scenario",
      split = ",",
      paramLabel = "NAME",
      description =
          "Run only these scenarios: late-data, refresh-cost, join, backfill, first-run, startup,"
              + " freshness, many-views, target-write, readers, failover, object-store (default:"
              + " all but readers, which compares Parquet readers and engines for a full refresh,"
              + " failover, which restarts and kills Floe instances for a few minutes, and"
              + " object-store, which runs the freshness stream and the first run on local files"
              + " and on S3 behind a delaying proxy; these run only when named).")
  List<String> scenarios;

  @Option(
      names = "--dir",
      paramLabel = "DIR",
      description =
          "Working directory for the scenarios' tables and broker (default: a temporary"
              + " directory, deleted afterwards).")
  Path dir;

  @Option(
      names = "--commit-interval",
      defaultValue = "1s,200ms",
      split = ",",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Times between source commits in the freshness scenario, one run each (default:"
              + " ${DEFAULT-VALUE}).")
  List<Duration> commitIntervals;

  @Option(
      names = "--tables",
      paramLabel = "N",
      description = "Source tables in the many-views scenario (default: 20; 10 with --quick).")
  Integer tables;

  @Option(
      names = "--views-per-table",
      defaultValue = "10",
      paramLabel = "N",
      description = "Views per table in the many-views scenario (default: ${DEFAULT-VALUE}).")
  int viewsPerTable;

  @Option(
      names = "--s3-latency-ms",
      defaultValue = "25",
      paramLabel = "MS",
      description =
          "How long the object-store scenario's proxy holds each S3 request, in milliseconds; it"
              + " runs at 0 ms too (default: ${DEFAULT-VALUE}).")
  int s3LatencyMs;

  @Override
  public Integer call() throws Exception {
    PrintWriter stdout = spec.commandLine().getOut();
    PrintWriter stderr = spec.commandLine().getErr();
    Set<String> chosen = new LinkedHashSet<>(scenarios == null ? List.of() : scenarios);
    for (String name : chosen) {
      if (!Bench.SCENARIOS.contains(name)) {
        stderr.println("Unknown scenario '" + name + "'; choose from " + Bench.SCENARIOS);
        return 2;
      }
    }
    Logging.quiet();
    boolean temporary = dir == null;
    // Absolute: the scenarios' configuration files name paths, which floe run resolves against
    // the file's own directory.
    Path workDir =
        temporary ? Files.createTempDirectory("floe-bench") : dir.toAbsolutePath().normalize();
    List<ScenarioResult> results;
    try {
      results =
          new Bench(
                  new Bench.Options(
                      workDir,
                      quick,
                      chosen,
                      commitIntervals,
                      tables != null ? tables : quick ? 10 : 20,
                      viewsPerTable,
                      s3LatencyMs),
                  stderr)
              .run();
    } finally {
      if (temporary) {
        delete(workDir);
      }
    }
    Bench.print(results, stdout);
    new ObjectMapper()
        .writerWithDefaultPrettyPrinter()
        .writeValue(out.toFile(), Bench.json(results, quick));
    stdout.println("Report written to " + out.toAbsolutePath());
    boolean failed =
        results.stream()
            .anyMatch(
                r ->
                    r.notes().stream()
                        .anyMatch(n -> n.startsWith("FAILED") || n.startsWith("WRONG RESULT")));
    return failed ? 1 : 0;
  }

  private static void delete(Path root) {
    try (Stream<Path> all = Files.walk(root)) {
      all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException e) {
      // a temporary directory; the OS cleans it eventually
    }
  }
}
