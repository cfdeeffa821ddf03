package io.floe.dev.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** What every scenario gets: its own directory, the size to run at, and a progress log. */
record BenchContext(Path dir, boolean quick, PrintWriter log) {

  /** A fresh directory for one scenario. */
  Path dir(String scenario) throws IOException {
    return Files.createDirectories(dir.resolve(scenario));
  }

  void progress(String scenario, String message) {
    log.println("[" + scenario + "] " + message);
    log.flush();
  }
}
