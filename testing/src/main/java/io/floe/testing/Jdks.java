package io.floe.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The JDKs other than the build's that tests and the bench run children on: Trino needs Java 25,
 * and the service image runs on a Java 25 JRE for its ahead-of-time cache. One rule finds it, the
 * one {@code .ci/run} follows too: {@code FLOE_JAVA25_HOME}, or else the newest JDK of 25 or later
 * under {@code /usr/lib/jvm}, in reverse name order.
 */
public final class Jdks {

  /** The variable that names the Java 25 explicitly. */
  public static final String JAVA25_HOME = "FLOE_JAVA25_HOME";

  private Jdks() {}

  /** The {@code java} launcher of a Java 25 or later; null when there is none. */
  public static Path java25() throws IOException {
    List<Path> homes = new ArrayList<>();
    String configured = System.getenv(JAVA25_HOME);
    if (configured != null && !configured.isBlank()) {
      homes.add(Path.of(configured));
    } else if (Files.isDirectory(Path.of("/usr/lib/jvm"))) {
      try (Stream<Path> jdks = Files.list(Path.of("/usr/lib/jvm"))) {
        jdks.sorted(Comparator.reverseOrder()).forEach(homes::add);
      }
    }
    for (Path home : homes) {
      Path java = home.resolve("bin").resolve("java");
      Path release = home.resolve("release");
      if (Files.isExecutable(java) && Files.exists(release) && featureVersion(release) >= 25) {
        return java;
      }
    }
    return null;
  }

  /** Why {@link #java25} found none, for a test's assumption. */
  public static String noJava25() {
    String configured = System.getenv(JAVA25_HOME);
    return configured == null
        ? JAVA25_HOME + " is not set and no JDK 25 or later is under /usr/lib/jvm"
        : JAVA25_HOME + "=" + configured + " is not a JDK 25 or later";
  }

  /** The feature version a JDK's {@code release} file gives ({@code JAVA_VERSION="25.0.1"}). */
  private static int featureVersion(Path release) throws IOException {
    for (String line : Files.readAllLines(release, StandardCharsets.UTF_8)) {
      if (line.startsWith("JAVA_VERSION=")) {
        String version = line.substring("JAVA_VERSION=".length()).replace("\"", "");
        String feature = version.split("[.+-]", 2)[0];
        try {
          return Integer.parseInt(feature);
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }
}
