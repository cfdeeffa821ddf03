package io.floe.dev;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;

/** Adjusts the log for interactive commands. */
final class Logging {

  private Logging() {}

  /** Only warnings and errors: for commands whose own output is the interesting part. */
  static void quiet() {
    if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root) {
      root.setLevel(Level.WARN);
    }
    if (LoggerFactory.getLogger("io.floe") instanceof Logger floe) {
      floe.setLevel(Level.WARN);
    }
  }
}
