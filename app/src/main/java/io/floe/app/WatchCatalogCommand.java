package io.floe.app;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.CatalogWatcher;
import io.floe.topology.view.TableName;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe watch-catalog}: publish commit notices for catalogs that emit no events. */
@Command(
    name = "watch-catalog",
    mixinStandardHelpOptions = true,
    description = {
      "The fallback for catalogs that announce nothing: every interval, check the metadata"
          + " location of each source table of the registered views (and of --table) and publish a"
          + " commit notice to floe.commits when it moved. Off unless you run it: Floe is"
          + " event-driven, and a watcher adds up to one interval of lag and a catalog request per"
          + " table per interval.",
      "Exit code: 0 after a requested stop, 1 on invalid configuration."
    })
final class WatchCatalogCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFile.Required config;

  @Option(
      names = "--interval",
      defaultValue = "10s",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Time between checks (default: ${DEFAULT-VALUE}).")
  Duration interval;

  @Option(
      names = "--table",
      paramLabel = "CATALOG.NAMESPACE.TABLE",
      description = "Also watch this table (repeatable).")
  List<String> tables;

  @Option(names = "--once", description = "Check once and exit.")
  boolean once;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    FloeConfig floeConfig;
    Set<TableName> extra = new LinkedHashSet<>();
    try {
      floeConfig = config.load();
      for (String table : tables == null ? List.<String>of() : tables) {
        extra.add(TableName.parse(table));
      }
    } catch (IOException e) {
      err.println(config.unreadable(e));
      return 1;
    } catch (ConfigException | IllegalArgumentException e) {
      err.println(e.getMessage());
      return 1;
    }
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "floe-watch-stop"));
    try (CatalogWatcher watcher = new CatalogWatcher(floeConfig, extra)) {
      do {
        int published = watcher.check();
        if (once) {
          spec.commandLine().getOut().println("Published " + published + " commit notices");
        }
      } while (!once && !stop.await(interval.toMillis(), TimeUnit.MILLISECONDS));
    }
    return 0;
  }
}
