package io.floe.app;

import io.floe.app.config.ConfigDocs;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code floe config-docs}: prints the configuration reference. */
@Command(
    name = "config-docs",
    mixinStandardHelpOptions = true,
    description = "Print the reference of every floe.* configuration key as a Markdown table.")
final class ConfigDocsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().getOut().print(ConfigDocs.markdownTable());
    spec.commandLine().getOut().flush();
    return 0;
  }
}
