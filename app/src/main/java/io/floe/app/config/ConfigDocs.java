package io.floe.app.config;

import java.util.List;
import org.apache.kafka.common.config.ConfigDef;

/**
 * The configuration reference of the README, generated from {@link FloeConfig#DEFINITION} so that
 * it cannot drift from the code ({@code ConfigReferenceTest} checks the README holds it).
 */
public final class ConfigDocs {

  /** Marks the start of the generated table in README.md. */
  public static final String BEGIN = "<!-- config-reference:begin -->";

  /** Marks its end. */
  public static final String END = "<!-- config-reference:end -->";

  private ConfigDocs() {}

  /** A Markdown table of every Floe key: name, type, default, valid values, meaning. */
  public static String markdownTable() {
    StringBuilder table = new StringBuilder();
    table.append("| key | type | default | valid values | description |\n");
    table.append("|---|---|---|---|---|\n");
    List<ConfigDef.ConfigKey> keys =
        FloeConfig.DEFINITION.configKeys().values().stream()
            .sorted((a, b) -> a.name.compareTo(b.name))
            .toList();
    for (ConfigDef.ConfigKey key : keys) {
      table
          .append("| `")
          .append(key.name)
          .append("` | ")
          .append(key.type.name().toLowerCase(java.util.Locale.ROOT))
          .append(" | ")
          .append(defaultOf(key))
          .append(" | ")
          .append(key.validator == null ? "" : key.validator.toString().replace("|", "\\|"))
          .append(" | ")
          .append(key.documentation.replace("|", "\\|"))
          .append(" |\n");
    }
    return table.toString();
  }

  private static String defaultOf(ConfigDef.ConfigKey key) {
    if (!key.hasDefault()) {
      return "(required)";
    }
    return key.defaultValue == null ? "(none)" : "`" + key.defaultValue + "`";
  }
}
