package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.dev.EmbeddedStack;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The training run of Floe's ahead-of-time cache (Java 25: JEP 483's loaded and linked classes, JEP
 * 515's method profiles, written in one step by JEP 514's {@code -XX:AOTCacheOutput}): {@code floe
 * run} on the given JVM and class path, against an embedded broker and a catalog of its own, does
 * what a production start does (configuration, views file and SQL front end, topics, HTTP server,
 * topology, Kafka Streams' group and stores), then the first refresh of a view over a small source
 * and the engine warm-up ({@code floe.warm-up.rows} at its default), and is stopped with SIGTERM as
 * a pod is; the JVM writes the cache as it exits. A later JVM started with {@code -XX:AOTCache} on
 * the same JDK and class path maps those classes instead of loading, verifying and linking them,
 * and its JIT starts from the trained profiles.
 *
 * <p>The image's build runs it ({@link #main}) on its own JRE and class path; the startup and
 * backfill scenarios of the bench run it on the bench's class path.
 */
public final class AotTraining {

  /** The view the training run refreshes: the backfill's OHLCV view, over a source of its own. */
  private static final String QUERY = BackfillScenario.QUERY;

  private static final int SOURCE_ROWS = 20_000;
  private static final Duration TIMEOUT = Duration.ofMinutes(10);

  private AotTraining() {}

  /**
   * {@code java class-path cache dir [jvm-option...]}: trains {@code cache} with {@code java} on
   * {@code class-path}, working in {@code dir}.
   */
  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      throw new IllegalArgumentException(
          "Usage: AotTraining <java> <class-path> <cache> <dir> [jvm-option...]");
    }
    train(
        Path.of(args[0]),
        args[1],
        Path.of(args[2]),
        Path.of(args[3]),
        List.of(args).subList(4, args.length));
  }

  /**
   * Runs the training and returns once {@code cache} is written.
   *
   * @param java the launcher of a JDK 25 or later, the one that is to use the cache
   * @param classPath the class path that the runs using the cache will have
   * @param jvmOptions options of the training JVM beside the cache's, such as its heap
   * @throws IllegalStateException when the run failed or wrote no cache, with its log's last lines
   */
  static void train(Path java, String classPath, Path cache, Path dir, List<String> jvmOptions)
      throws Exception {
    Files.createDirectories(dir);
    Files.deleteIfExists(cache);
    Path log = dir.resolve("aot-training.log");
    try (EmbeddedStack stack = EmbeddedStack.start(dir);
        BenchLake lake = new BenchLake(dir)) {
      Table trades = lake.createTrades("trades", Trades.BY_DAY);
      Instant day = Instant.parse("2026-03-02T00:00:00Z");
      TableWrites.append(
          trades, new Trades(7).between(day, day.plus(Duration.ofHours(6)), SOURCE_ROWS));
      Path viewsFile = dir.resolve("training.yaml");
      Files.writeString(
          viewsFile,
          "views:\n" + BenchLake.yamlEntry("training", QUERY, "lake.analytics.training", "{}"));
      int port;
      try (ServerSocket socket = new ServerSocket(0)) {
        port = socket.getLocalPort();
      }
      stack.writeConfig(
          "aot-training",
          Map.of(
              FloeConfig.VIEWS_FILE,
              viewsFile.toString(),
              FloeConfig.HTTP_HOST,
              "127.0.0.1",
              FloeConfig.HTTP_PORT,
              Integer.toString(port)));
      List<String> command = new ArrayList<>();
      command.add(java.toString());
      command.addAll(jvmOptions);
      command.add("-XX:AOTCacheOutput=" + cache);
      command.add("-Djava.io.tmpdir=" + dir);
      command.add("-cp");
      command.add(classPath);
      command.add(io.floe.app.Main.class.getName());
      command.addAll(List.of("run", "--config", stack.configFile().toString()));
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      try {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        TableIdentifier target = TableIdentifier.of("analytics", "training");
        while (!(refreshed(lake, target) && Files.readString(log).contains("Engine warmed up"))) {
          if (!process.isAlive()) {
            throw failed("floe run exited before its first refresh and warm-up", log);
          }
          if (System.nanoTime() > deadline) {
            throw failed("no first refresh and warm-up within " + TIMEOUT, log);
          }
          TimeUnit.MILLISECONDS.sleep(200);
        }
        // SIGTERM: the service closes, and the JVM assembles the cache in a child JVM as it exits.
        process.destroy();
        if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          throw failed("the training JVM did not exit within " + TIMEOUT + " of SIGTERM", log);
        }
      } finally {
        if (process.isAlive()) {
          process.destroyForcibly().waitFor();
        }
      }
    }
    if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
      throw failed("the training JVM wrote no cache " + cache, log);
    }
  }

  private static boolean refreshed(BenchLake lake, TableIdentifier target) {
    return lake.catalog().tableExists(target)
        && lake.catalog().loadTable(target).currentSnapshot() != null;
  }

  private static IllegalStateException failed(String what, Path log) throws IOException {
    List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
    return new IllegalStateException(
        "AOT training: "
            + what
            + "; last lines of "
            + log
            + ":\n"
            + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
  }
}
