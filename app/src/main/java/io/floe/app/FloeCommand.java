package io.floe.app;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The root of Floe's command line: {@code floe <command> [options]}. */
@Command(
    name = "floe",
    mixinStandardHelpOptions = true,
    versionProvider = FloeCommand.Version.class,
    description = {
      "Keeps aggregating materialized views over Apache Iceberg tables fresh, driven by table"
          + " commit events.",
      ""
    },
    subcommands = {
      RunCommand.class,
      DemoCommand.class,
      WatchCatalogCommand.class,
      BenchCommand.class,
      ValidateCommand.class,
      PublishCommitCommand.class,
      ConfigDocsCommand.class,
      CommandLine.HelpCommand.class
    })
public final class FloeCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** The command line with Floe's conventions: exit code 1 for user errors, 2 for usage. */
  public static CommandLine commandLine() {
    return new CommandLine(new FloeCommand())
        .setCaseInsensitiveEnumValuesAllowed(true)
        .setUsageHelpAutoWidth(true);
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The version from the jar manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = FloeCommand.class.getPackage().getImplementationVersion();
      return new String[] {"floe " + (version == null ? "dev" : version)};
    }
  }
}
