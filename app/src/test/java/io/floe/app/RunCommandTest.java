package io.floe.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code floe run} refuses configurations that would serve the HTTP API to anyone without being
 * asked to, before it touches Kafka or a catalog (the broker named here does not exist).
 */
class RunCommandTest {

  @TempDir Path dir;

  private String run(String properties) throws Exception {
    Path config = dir.resolve("floe.properties");
    Files.writeString(
        config,
        "bootstrap.servers=127.0.0.1:1\n"
            + "floe.catalog.lake.type=jdbc\n"
            + "floe.catalog.lake.uri=jdbc:sqlite:"
            + dir.resolve("catalog.db")
            + "\n"
            + properties);
    StringWriter err = new StringWriter();
    CommandLine command = FloeCommand.commandLine().setErr(new PrintWriter(err));
    int code = command.execute("run", "--config", config.toString());
    assertThat(code).as(err.toString()).isEqualTo(1);
    return err.toString();
  }

  @Test
  void shouldRefuseToStartWithoutATokenOnAnAddressOtherThanLoopbackSayingHowToSetOne()
      throws Exception {
    String error = run("");

    assertThat(error)
        .contains("invalid configuration: floe.http.token is not set")
        .contains("would listen on 0.0.0.0")
        .contains("floe.http.token=${env:FLOE_HTTP_TOKEN} with config.providers=env")
        .contains("floe.http.host=127.0.0.1")
        .contains("floe.http.auth=none");
  }

  @Test
  void shouldRefuseATokenWhoseConfigProviderDidNotResolveIt() throws Exception {
    String error =
        run(
            "config.providers=env\n"
                + "config.providers.env.class="
                + "org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
                + "floe.http.token=${env:FLOE_TEST_VARIABLE_THAT_IS_NOT_SET}\n");

    assertThat(error)
        .contains(
            "floe.http.token still reads ${env:FLOE_TEST_VARIABLE_THAT_IS_NOT_SET} after config"
                + " providers ran");
  }

  @Test
  void shouldRefuseAnEmptyToken() throws Exception {
    assertThat(run("floe.http.token=\n")).contains("floe.http.token is empty");
  }

  @Test
  void shouldRefuseATokenWithTheApiOpenedExplicitly() throws Exception {
    assertThat(run("floe.http.auth=none\nfloe.http.token=abc\n"))
        .contains("Cannot set both floe.http.auth=none and floe.http.token");
  }
}
