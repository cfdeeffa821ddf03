package io.floe.app.it;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.topology.refresh.ChunkId;
import io.floe.topology.refresh.RefreshHooks;
import java.nio.file.Path;

/**
 * {@code floe run} with a crash point armed, for {@link CrashRecoveryIT}: {@code FailPoints
 * files-written|committed[:view] CONFIG} runs the service on the configuration file and halts the
 * process at that step of the next refresh (of that view), as a power cut would: no shutdown hook,
 * no final Kafka commit. Test code only: the service has no way to arm it.
 */
final class FailPoints implements RefreshHooks {

  static final int EXIT_CODE = 86;

  private final String point;
  private final String view;

  private FailPoints(String point, String view) {
    this.point = point;
    this.view = view;
  }

  /** {@code files-written} or {@code committed}, optionally {@code :view}. */
  static FailPoints parse(String spec) {
    String[] parts = spec.split(":", 2);
    return new FailPoints(parts[0], parts.length > 1 ? parts[1] : null);
  }

  public static void main(String[] args) throws Exception {
    FloeService service = new FloeService(FloeConfig.load(Path.of(args[1])), parse(args[0]));
    service.start();
    System.exit(service.awaitTermination());
  }

  @Override
  public void filesWritten(String view, ChunkId chunk) {
    maybeHalt("files-written", view, chunk);
  }

  @Override
  public void committed(String view, ChunkId chunk) {
    maybeHalt("committed", view, chunk);
  }

  private void maybeHalt(String reached, String view, ChunkId chunk) {
    if (reached.equals(point) && (this.view == null || this.view.equals(view))) {
      System.err.println("FAILPOINT " + reached + " " + chunk + ": halting");
      System.err.flush();
      Runtime.getRuntime().halt(EXIT_CODE);
    }
  }
}
