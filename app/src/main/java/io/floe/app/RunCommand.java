package io.floe.app;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.app.views.ViewsFileException;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code floe run}: the long-running service. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Run the Floe service: resolve commit notices, detect dirty buckets, refresh views and"
          + " publish refresh events, until stopped.",
      "Exit code: 0 after a requested stop, 1 on invalid configuration or an unrecoverable error."
    })
final class RunCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFile.Required config;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    FloeConfig floeConfig;
    FloeService service;
    try {
      floeConfig = config.load();
      service = new FloeService(floeConfig);
    } catch (IOException e) {
      err.println(config.unreadable(e));
      return 1;
    } catch (ConfigException e) {
      err.println(config + ": invalid configuration: " + e.getMessage());
      return 1;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(service::close, "floe-shutdown"));
    try {
      service.start();
    } catch (ViewsFileException e) {
      err.println(e.getMessage());
      service.close();
      return 1;
    }
    return service.awaitTermination();
  }
}
