package io.floe.app.service;

import io.floe.topology.refresh.RefreshHooks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Crash points for fault tests: with {@code FLOE_FAILPOINT=files-written} (or {@code committed}),
 * optionally suffixed {@code :view}, the process halts at that step of the next refresh, as a power
 * cut would: no shutdown hook, no final Kafka commit. Does nothing when the variable is not set.
 */
final class FailPoints implements RefreshHooks {

  static final String VARIABLE = "FLOE_FAILPOINT";
  static final int EXIT_CODE = 86;

  private static final Logger LOG = LoggerFactory.getLogger(FailPoints.class);

  private final String point;
  private final String view;

  private FailPoints(String point, String view) {
    this.point = point;
    this.view = view;
  }

  static RefreshHooks fromEnvironment() {
    String value = System.getenv(VARIABLE);
    if (value == null || value.isBlank()) {
      return RefreshHooks.NONE;
    }
    String[] parts = value.split(":", 2);
    LOG.warn("Fail point armed: the process halts at '{}'", value);
    return new FailPoints(parts[0], parts.length > 1 ? parts[1] : null);
  }

  @Override
  public void filesWritten(String view, String chunkId) {
    maybeHalt("files-written", view, chunkId);
  }

  @Override
  public void committed(String view, String chunkId) {
    maybeHalt("committed", view, chunkId);
  }

  private void maybeHalt(String reached, String view, String chunkId) {
    if (reached.equals(point) && (this.view == null || this.view.equals(view))) {
      System.err.println("FAILPOINT " + reached + " " + chunkId + ": halting");
      System.err.flush();
      Runtime.getRuntime().halt(EXIT_CODE);
    }
  }
}
