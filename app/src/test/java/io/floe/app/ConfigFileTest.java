package io.floe.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** The {@code --config} option that the commands reading Floe's properties file share. */
class ConfigFileTest {

  @TempDir Path dir;

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine command =
        FloeCommand.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
    int code = command.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"run", "watch-catalog", "publish-commit --table lake.m.t"})
  void shouldRequireTheConfigOfACommandThatCannotRunWithoutIt(String command) {
    Run run = run(command.split(" "));

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).contains("Missing required option: '--config=FILE'");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"run", "watch-catalog", "publish-commit --table lake.m.t", "validate views.yaml"})
  void shouldSayTheSameOfAnUnreadableConfigInEveryCommand(String command) throws Exception {
    Files.writeString(dir.resolve("views.yaml"), "views: []\n");
    Path missing = dir.resolve("missing.properties");
    String[] args =
        (command.replace("views.yaml", dir.resolve("views.yaml").toString())
                + " --config "
                + missing)
            .split(" ");

    Run run = run(args);

    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err()).startsWith(missing + ": cannot read config file: ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"run", "watch-catalog", "publish-commit", "validate"})
  void shouldDescribeTheConfigInTheHelpOfEveryCommand(String command) {
    Run run = run(command, "--help");

    assertThat(run.code()).isZero();
    assertThat(run.out()).contains("--config=FILE").containsIgnoringCase("properties file");
  }
}
