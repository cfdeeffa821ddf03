package io.floe.dev;

import io.floe.app.FloeCommand;
import io.floe.topology.iceberg.ManifestWork;
import picocli.CommandLine;

/**
 * The developer tool, what {@code ./floe} runs: every command of the service and {@code demo} and
 * {@code bench}, which need the embedded broker, the oracle and the workload generators that never
 * ship in the service. Like the service's Main, the only place here that ends the process.
 */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    ManifestWork.planOnCallingThreadByDefault();
    System.exit(commandLine().execute(args));
  }

  /** The service's command line with demo and bench added. */
  public static CommandLine commandLine() {
    return FloeCommand.withCommands(new DemoCommand(), new BenchCommand());
  }
}
