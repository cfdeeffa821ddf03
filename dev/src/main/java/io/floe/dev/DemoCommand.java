package io.floe.dev;

import io.floe.app.DurationConverter;
import io.floe.dev.demo.Demo;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe demo}: everything embedded, nothing to install. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Run Floe with everything embedded: a Kafka broker (KRaft), an Iceberg JDBC catalog on a"
          + " SQLite file, a trades table that keeps receiving commits (appends every second, late"
          + " trades, corrections, cancellations, compactions), a dimension of the sector of each"
          + " symbol that is corrected every 3 minutes, and six views over them, one chained on"
          + " another, one joined to the dimension. Prints a live log of refreshes and serves the"
          + " web UI.",
      "Exit code: 0, or 1 when --verify finds a view that differs from the oracle."
    })
final class DemoCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--dir",
      defaultValue = "floe-demo",
      paramLabel = "DIR",
      description =
          "Where the broker, catalog, warehouse, views file and state live; wiped on each run"
              + " (default: ${DEFAULT-VALUE}).")
  Path dir;

  @Option(
      names = "--port",
      defaultValue = "8080",
      paramLabel = "PORT",
      description = "Port of the web UI and HTTP API (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--for",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Stop by itself after this long (60s, 5m, 1h); default: until Ctrl-C.")
  Duration duration;

  @Option(
      names = "--verify",
      description =
          "At the end, wait for the views to catch up and compare each with its query evaluated"
              + " from scratch by the oracle (DuckDB); exit 1 on any difference.")
  boolean verify;

  @Option(
      names = "--rate",
      defaultValue = "20",
      paramLabel = "TRADES",
      description = "Trades appended each second (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(names = "--verbose", description = "Show Floe's own log, not only the refresh log.")
  boolean verbose;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (!verbose) {
      Logging.quiet();
    }
    Demo demo = new Demo(new Demo.Options(dir, port, duration, verify, rate, verbose), out);
    Thread hook = new Thread(demo::stop, "floe-demo-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return demo.run();
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println(e.getMessage());
      return 1;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // shutting down already
      }
    }
  }
}
