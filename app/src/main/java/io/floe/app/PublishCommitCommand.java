package io.floe.app;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.CommitNotices;
import io.floe.topology.view.TableName;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe publish-commit}: announces a table commit, for pipelines and tests. */
@Command(
    name = "publish-commit",
    mixinStandardHelpOptions = true,
    description = {
      "Publish one commit notice (TableCommitted) for a table to the commits topic, as an"
          + " Airflow task or a dbt post-hook would after writing to it.",
      "When the table's catalog is configured, the notice carries the table's current snapshot"
          + " and metadata location unless they are given."
    })
final class PublishCommitCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFile.Required config;

  @Option(
      names = "--table",
      required = true,
      paramLabel = "CATALOG.NAMESPACE.TABLE",
      description = "The table that committed.")
  String table;

  @Option(
      names = "--snapshot-id",
      paramLabel = "ID",
      description = "The snapshot the commit created.")
  Long snapshotId;

  @Option(
      names = "--metadata-location",
      paramLabel = "URI",
      description = "The metadata.json the commit wrote.")
  String metadataLocation;

  @Option(
      names = "--producer",
      defaultValue = "floe-cli",
      paramLabel = "NAME",
      description = "Who publishes the notice (default: ${DEFAULT-VALUE}).")
  String producer;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    FloeConfig floeConfig;
    TableName name;
    try {
      floeConfig = config.load();
      name = TableName.parse(table);
    } catch (IOException e) {
      err.println(config.unreadable(e));
      return 1;
    } catch (ConfigException | IllegalArgumentException e) {
      err.println(e.getMessage());
      return 1;
    }
    try (CommitNotices notices = new CommitNotices(floeConfig, producer)) {
      CommitNotices.Published sent =
          notices.announce(
              floeConfig.catalogs(),
              name,
              snapshotId,
              metadataLocation,
              note -> err.println("Note: " + note));
      out.println(
          "Published a commit notice for "
              + name
              + (sent.snapshotId() == null ? "" : " (snapshot " + sent.snapshotId() + ")")
              + " to "
              + sent.topic()
              + "-"
              + sent.partition()
              + "@"
              + sent.offset());
    }
    return 0;
  }
}
