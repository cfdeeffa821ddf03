package io.floe.dev.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One Floe instance as a pod runs it: {@code floe run} in a JVM of its own on the bench's class
 * path, with its own configuration file, state directory and HTTP port, its output appended to
 * {@code <name>.log} across restarts. It stops as Kubernetes stops a pod (SIGTERM, then the JVM's
 * shutdown hook closes the service) or dies as a lost node does (SIGKILL).
 */
final class FloeProcess implements AutoCloseable {

  /** The service's heap, fixed so that two instances and the bench fit the machine. */
  static final List<String> JVM_OPTIONS = List.of("-Xmx512m", "-XX:+ExitOnOutOfMemoryError");

  /**
   * How the JVM of an instance is started: its launcher and options beside {@link #JVM_OPTIONS},
   * such as the ahead-of-time cache the service image starts from.
   */
  record Launch(Path java, List<String> options, String description) {

    /** The bench's own JVM, nothing beside the heap. */
    static Launch plain() {
      return new Launch(ChildJvm.thisJava(), List.of(), "the bench's JVM, no class cache");
    }
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

  private final String name;
  private final Path config;
  private final Path stateDir;
  private final Path log;
  private final int httpPort;
  private final Launch launch;
  private Process process;
  private boolean stopped;

  FloeProcess(String name, Path config, Path stateDir, Path log, int httpPort, Launch launch) {
    this.name = name;
    this.launch = launch;
    this.config = config;
    this.stateDir = stateDir;
    this.log = log;
    this.httpPort = httpPort;
  }

  String name() {
    return name;
  }

  Path log() {
    return log;
  }

  /** Starts the JVM; returns the wall-clock time just before it was started. */
  long start() throws IOException {
    if (isAlive()) {
      throw new IllegalStateException(name + " is already running");
    }
    List<String> options = new ArrayList<>(JVM_OPTIONS);
    options.addAll(launch.options());
    List<String> command =
        ChildJvm.command(
            launch.java(), io.floe.app.Main.class, options, "run", "--config", config.toString());
    long at = System.currentTimeMillis();
    stopped = false;
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(Redirect.appendTo(log.toFile()))
            .start();
    return at;
  }

  /** SIGTERM, as a pod is stopped, and waits for the service to close and the JVM to exit. */
  void stop() throws InterruptedException {
    stopped = true;
    process.destroy();
    // Longer than the service's own close timeout (30 s), as terminationGracePeriodSeconds is.
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException(name + " did not stop within 60 s of SIGTERM; see " + log);
    }
  }

  /** SIGKILL ({@code kill -9}): no shutdown hook, no final commit, no leaving the group. */
  void kill() throws InterruptedException {
    stopped = true;
    process.destroyForcibly().waitFor();
  }

  boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** Whether the process ended without the bench stopping or killing it: Floe failed. */
  boolean hasEnded() {
    return process != null && !process.isAlive() && !stopped;
  }

  /** Whether its readiness probe ({@code /health/ready}) answers 200, as Kubernetes asks it. */
  boolean isReady() {
    if (!isAlive()) {
      return false;
    }
    try {
      HttpResponse<Void> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/health/ready"))
                  .timeout(Duration.ofSeconds(1))
                  .build(),
              HttpResponse.BodyHandlers.discarding());
      return response.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Deletes its state directory, as a pod rescheduled without its volume has none. */
  void deleteState() {
    if (isAlive()) {
      throw new IllegalStateException(name + " is running");
    }
    if (!Files.exists(stateDir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(stateDir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete the state directory " + stateDir, e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (isAlive()) {
      kill();
    }
  }
}
