package io.floe.app;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The {@code --config FILE} option, a picocli mixin of the commands that read Floe's properties
 * file: {@link Required} where the command cannot run without it, {@link Optional} where it only
 * adds catalogs. Reading the file and the message when it cannot be read live here once.
 */
abstract class ConfigFile {

  /** The file given, or null when an optional one was not. */
  abstract Path path();

  /** The file's settings. */
  FloeConfig load() throws IOException {
    return FloeConfig.load(path());
  }

  /** The catalogs the file declares. */
  CatalogConfig loadCatalogs() throws IOException {
    return FloeConfig.loadCatalogs(path());
  }

  /** What a command prints when the file cannot be read. */
  String unreadable(IOException e) {
    return path() + ": cannot read config file: " + e.getMessage();
  }

  @Override
  public String toString() {
    return String.valueOf(path());
  }

  /** {@code --config}, which the command needs. */
  static final class Required extends ConfigFile {

    @Option(
        names = "--config",
        required = true,
        paramLabel = "FILE",
        description =
            "Properties file: floe.* settings, floe.catalog.<name>.* Iceberg catalogs, and Kafka"
                + " settings (bootstrap.servers, ...).")
    Path path;

    @Override
    Path path() {
      return path;
    }
  }

  /** {@code --config} for {@code floe validate}, whose checks only gain catalogs from it. */
  static final class Optional extends ConfigFile {

    @Option(
        names = "--config",
        paramLabel = "FILE",
        description =
            "Floe properties file; its floe.catalog.<name>.* keys give the catalogs that source"
                + " schemas are read from.")
    Path path;

    @Override
    Path path() {
      return path;
    }
  }
}
