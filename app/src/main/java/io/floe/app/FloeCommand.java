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
      ValidateCommand.class,
      PublishCommitCommand.class,
      WatchCatalogCommand.class,
      ConfigDocsCommand.class
    })
public final class FloeCommand implements Runnable {

  /** Where the commands that are not the service's are; lines short enough not to wrap. */
  private static final String[] DEVELOPER_TOOL_NOTE = {
    "",
    "floe demo and floe bench are in Floe's developer tool, not in the service:",
    "run ./floe demo or ./floe bench from a checkout of Floe."
  };

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * The service's command line with Floe's conventions: exit code 1 for user errors, 2 for usage.
   * Its help says where demo and bench are.
   */
  public static CommandLine commandLine() {
    CommandLine cli = withCommands();
    cli.getCommandSpec().usageMessage().footer(DEVELOPER_TOOL_NOTE);
    return cli;
  }

  /**
   * The service's commands and {@code more} (picocli commands: the developer tool's demo and
   * bench), then {@code help}, with the same conventions.
   */
  public static CommandLine withCommands(Object... more) {
    CommandLine cli =
        new CommandLine(new FloeCommand())
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setUsageHelpAutoWidth(true);
    for (Object command : more) {
      cli.addSubcommand(command);
    }
    return cli.addSubcommand(new CommandLine.HelpCommand());
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
