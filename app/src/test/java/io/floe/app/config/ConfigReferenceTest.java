package io.floe.app.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

class ConfigReferenceTest {

  @Test
  void shouldDocumentEveryKey() {
    for (ConfigDef.ConfigKey key : FloeConfig.DEFINITION.configKeys().values()) {
      assertThat(key.documentation).as(key.name).isNotBlank();
      assertThat(key.name).startsWith("floe.");
    }
  }

  @Test
  void shouldKeepTheReadmeReferenceEqualToTheDeclarations() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    int begin = readme.indexOf(ConfigDocs.BEGIN);
    int end = readme.indexOf(ConfigDocs.END);
    assertThat(begin).as("README has the config reference markers").isNotNegative();
    String inReadme = readme.substring(begin + ConfigDocs.BEGIN.length(), end).strip();

    assertThat(inReadme)
        .as("README's configuration reference; regenerate it with: ./floe config-docs")
        .isEqualTo(ConfigDocs.markdownTable().strip());
  }
}
