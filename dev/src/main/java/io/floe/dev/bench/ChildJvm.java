package io.floe.dev.bench;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A measurement run in a JVM of its own, with the bench's class path and JVM options of its own:
 * its main class takes its arguments and then the file to write what it measured to, as properties
 * ({@link #write}).
 */
final class ChildJvm {

  private ChildJvm() {}

  /**
   * Runs {@code main} in a new JVM and returns what it measured.
   *
   * @param what the measurement, for errors ({@code Floe's side of the backfill})
   * @param dir where its properties file and its log ({@code name.log}) go
   * @param name the name of those files
   * @param jvmOptions options of the new JVM, such as its heap
   * @param timeout longer than the measurement takes on a slow machine
   */
  static Properties run(
      String what,
      Class<?> main,
      Path dir,
      String name,
      List<String> jvmOptions,
      Duration timeout,
      String... args)
      throws IOException, InterruptedException {
    return run(what, thisJava(), main, dir, name, jvmOptions, timeout, args);
  }

  /** As {@link #run(String, Class, Path, String, List, Duration, String...)}, on {@code java}. */
  static Properties run(
      String what,
      Path java,
      Class<?> main,
      Path dir,
      String name,
      List<String> jvmOptions,
      Duration timeout,
      String... args)
      throws IOException, InterruptedException {
    Path out = dir.resolve(name + ".properties");
    Path log = dir.resolve(name + ".log");
    Files.deleteIfExists(out);
    List<String> command = command(java, main, jvmOptions, args);
    command.add(out.toString());
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException(what + " did not finish within " + timeout + "; see " + log);
    }
    if (process.exitValue() != 0 || !Files.exists(out)) {
      throw new IllegalStateException(
          what
              + " failed in a JVM with "
              + String.join(" ", jvmOptions)
              + ", exit code "
              + process.exitValue()
              + " (3 is an OutOfMemoryError under -XX:+ExitOnOutOfMemoryError); last lines of "
              + log
              + ":\n"
              + tail(log, 20));
    }
    Properties measured = new Properties();
    try (Reader reader = Files.newBufferedReader(out)) {
      measured.load(reader);
    }
    return measured;
  }

  /**
   * The command line of a JVM with the bench's class path and temporary directory that runs {@code
   * main} with {@code args}; a list the caller may add to.
   */
  static List<String> command(Class<?> main, List<String> jvmOptions, String... args) {
    return command(thisJava(), main, jvmOptions, args);
  }

  /** As {@link #command(Class, List, String...)}, on {@code java}. */
  static List<String> command(Path java, Class<?> main, List<String> jvmOptions, String... args) {
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.addAll(jvmOptions);
    command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    command.addAll(List.of(args));
    return command;
  }

  /** The launcher of the JVM the bench runs on. */
  static Path thisJava() {
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  /** What a child measured, written to the file named by its last argument. */
  static void write(Properties measured, String file, String comment) throws IOException {
    try (Writer writer = Files.newBufferedWriter(Path.of(file))) {
      measured.store(writer, comment);
    }
  }

  private static String tail(Path file, int lines) throws IOException {
    List<String> all = Files.readAllLines(file);
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }
}
