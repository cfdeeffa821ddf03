package io.floe.dev.bench;

import io.floe.app.config.FloeConfig;
import io.floe.dev.EmbeddedStack;
import io.floe.testing.Jdks;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;

/**
 * Scenario: start-up. {@code floe run} in a JVM of its own, as the image runs it, against the
 * embedded broker, with one view over a small source: the time from the process's start until
 * {@code /health/ready} answers 200 and the CPU it used until then, then its resident memory, heap
 * and CPU while idle for {@value #IDLE_SECONDS} s. Run with Floe's default partitions in a plain
 * JVM (the baseline), with the class-data sharing archive a training run of the same command wrote,
 * and with 12 and 24 partitions, each on topics and an application id of its own (partitions are
 * fixed once topics exist). Where a Java 25 is found ({@link Jdks#java25}), also on it without and
 * with the ahead-of-time cache that {@link AotTraining} wrote for the bench's class path.
 */
final class StartupScenario {

  static final String NAME = "startup";

  private static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, max(price) AS high,"
          + " sum(quantity) AS volume, count(*) AS trades FROM lake.market.trades GROUP BY 1, 2";

  private static final int IDLE_SECONDS = 10;
  private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);
  private static final String HEAP = "-Xmx768m";
  private static final Pattern READY_LINE = Pattern.compile("Floe ready .*");
  private static final Pattern HEAP_USED =
      Pattern.compile("(?m)^jvm_memory_used_bytes\\{area=\"heap\"[^}]*} (\\S+)$");

  private StartupScenario() {}

  /** One start of the service: its partitions, its JVM and that JVM's options. */
  private record Variant(String name, int partitions, Path java, List<String> jvmOptions) {

    /** On the JVM the bench runs on. */
    Variant(String name, int partitions, List<String> jvmOptions) {
      this(name, partitions, ChildJvm.thisJava(), jvmOptions);
    }
  }

  /** What one start measured. */
  private record Start(
      double readySeconds,
      double readyCpuSeconds,
      double rssMiB,
      double heapMiB,
      double idleCpuPercent,
      String phases) {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "floe run in a JVM of its own with "
                    + HEAP
                    + " and one view, against the embedded broker (group.initial.rebalance.delay.ms"
                    + " 0; a real broker's default 3 s delays the first rebalance of a new group"
                    + " by that much): seconds until /health/ready answers 200, then RSS, heap and"
                    + " CPU over "
                    + IDLE_SECONDS
                    + " idle seconds, by partitions, with the class-data sharing archive and"
                    + " on Java 25 with the ahead-of-time cache.")
            .parameter("availableProcessors", Runtime.getRuntime().availableProcessors())
            .parameter("java", System.getProperty("java.version"))
            .parameter(
                "defaultPartitions",
                FloeConfig.DEFINITION.defaultValues().get(FloeConfig.TOPIC_PARTITIONS));
    Path dir = ctx.dir(NAME);
    Path archive = dir.resolve("floe-startup.jsa");
    Files.deleteIfExists(archive);
    try (EmbeddedStack stack = EmbeddedStack.start(dir);
        BenchLake lake = new BenchLake(dir)) {
      Table trades = lake.createTrades("trades", Trades.BY_DAY);
      Instant day = Instant.parse("2026-03-02T00:00:00Z");
      TableWrites.append(trades, new Trades(5).between(day, day.plus(Duration.ofHours(1)), 1_000));
      List<Variant> variants =
          List.of(
              // A training run, not reported: it writes the archive at its exit, and it is the
              // first start against this broker, which warms up too.
              new Variant("training", 6, List.of("-XX:ArchiveClassesAtExit=" + archive)),
              new Variant("plain", 6, List.of()),
              new Variant("cds", 6, List.of("-XX:SharedArchiveFile=" + archive)),
              new Variant("p12", 12, List.of()),
              new Variant("p24", 24, List.of()));
      Path java25 = Jdks.java25();
      Path cache = dir.resolve("floe-startup.aot");
      if (java25 != null) {
        ctx.progress(NAME, "training the ahead-of-time cache on " + java25);
        AotTraining.train(
            java25,
            System.getProperty("java.class.path"),
            cache,
            dir.resolve("aot-training"),
            List.of(HEAP));
        variants = new ArrayList<>(variants);
        variants.add(new Variant("plain25", 6, java25, List.of()));
        variants.add(new Variant("aot", 6, java25, List.of("-XX:AOTCache=" + cache)));
      } else {
        result.note("no Java 25 for the ahead-of-time cache: " + Jdks.noJava25());
      }
      Map<String, Start> starts = new HashMap<>();
      for (Variant variant : variants) {
        ctx.progress(NAME, "floe run, " + variant.partitions() + " partitions " + variant.name());
        Start start = start(stack, dir, variant);
        starts.put(variant.name(), start);
        result.note(variant.name() + ": " + start.phases());
      }
      Start plain = starts.get("plain");
      Start cds = starts.get("cds");
      result.figure(
          new Figure(
              "ready after start (CDS archive)",
              "s",
              cds.readySeconds(),
              plain.readySeconds(),
              "no archive",
              true));
      // The CPU a start used, which the machine's other load changes less than the wall clock.
      result.figure(
          new Figure(
              "CPU until ready (CDS archive)",
              "s",
              cds.readyCpuSeconds(),
              plain.readyCpuSeconds(),
              "no archive",
              true));
      Start aot = starts.get("aot");
      if (aot != null) {
        Start plain25 = starts.get("plain25");
        result
            .parameter("java25", java25.toString())
            .figure(
                new Figure(
                    "ready after start (AOT cache, Java 25)",
                    "s",
                    aot.readySeconds(),
                    plain25.readySeconds(),
                    "Java 25, no cache",
                    true))
            .figure(
                new Figure(
                    "CPU until ready (AOT cache, Java 25)",
                    "s",
                    aot.readyCpuSeconds(),
                    plain25.readyCpuSeconds(),
                    "Java 25, no cache",
                    true))
            .figure(
                new Figure(
                    "CPU until ready (AOT cache, Java 25)",
                    "s",
                    aot.readyCpuSeconds(),
                    cds.readyCpuSeconds(),
                    "CDS archive, Java " + Runtime.version().feature(),
                    true))
            .figure(
                new Figure(
                    "RSS when idle (AOT cache, Java 25)",
                    "MiB",
                    aot.rssMiB(),
                    cds.rssMiB(),
                    "CDS archive, Java " + Runtime.version().feature(),
                    true));
      }
      for (String name : List.of("p12", "p24")) {
        Start s = starts.get(name);
        String label = name.substring(1) + " partitions";
        result
            .figure(
                new Figure(
                    "ready after start, " + label,
                    "s",
                    s.readySeconds(),
                    plain.readySeconds(),
                    "6 partitions",
                    true))
            .figure(
                new Figure(
                    "RSS when idle, " + label,
                    "MiB",
                    s.rssMiB(),
                    plain.rssMiB(),
                    "6 partitions",
                    true))
            .figure(
                new Figure(
                    "heap used when idle, " + label,
                    "MiB",
                    s.heapMiB(),
                    plain.heapMiB(),
                    "6 partitions",
                    true))
            .figure(
                new Figure(
                    "idle CPU, " + label,
                    "% of a core",
                    s.idleCpuPercent(),
                    plain.idleCpuPercent(),
                    "6 partitions",
                    true));
      }
    }
    return result;
  }

  private static Start start(EmbeddedStack stack, Path dir, Variant variant) throws Exception {
    String id = "startup-" + variant.name();
    Path viewsFile = dir.resolve(id + ".yaml");
    Files.writeString(
        viewsFile,
        "views:\n"
            + BenchLake.yamlEntry(
                "ohlcv_" + variant.name(), QUERY, "lake.analytics.ohlcv_" + variant.name(), "{}"));
    int port = freePort();
    Map<String, String> settings = new HashMap<>();
    settings.put(FloeConfig.VIEWS_FILE, viewsFile.toString());
    settings.put(FloeConfig.HTTP_HOST, "127.0.0.1");
    settings.put(FloeConfig.HTTP_PORT, Integer.toString(port));
    settings.put(FloeConfig.TOPIC_PARTITIONS, Integer.toString(variant.partitions()));
    // The idle figures are those of an idle instance: the engine warm-up, which would run in the
    // idle window, is measured by the backfill scenario.
    settings.put(FloeConfig.WARM_UP_ROWS, "0");
    for (String topic : List.of("commits", "snapshots", "refreshes", "views", "requests", "dlq")) {
      settings.put("floe.topic." + topic, id + "." + topic);
    }
    stack.writeConfig(id, settings);
    Path config = dir.resolve(id + ".properties");
    Files.move(dir.resolve("floe.properties"), config);
    List<String> command = new ArrayList<>();
    command.add(variant.java().toString());
    command.add(HEAP);
    command.addAll(variant.jvmOptions());
    command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("io.floe.app.Main");
    command.addAll(List.of("run", "--config", config.toString()));
    Path log = dir.resolve(id + ".log");
    long begin = System.nanoTime();
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      HttpClient http = HttpClient.newHttpClient();
      double ready = -1;
      long readyCpu = -1;
      while (ready < 0) {
        if (!process.isAlive()) {
          throw new IllegalStateException("floe run exited; see " + log);
        }
        if (System.nanoTime() - begin > READY_TIMEOUT.toNanos()) {
          throw new IllegalStateException("floe run not ready within " + READY_TIMEOUT);
        }
        if (status(http, port, "/health/ready") == 200) {
          ready = (System.nanoTime() - begin) / 1e9;
          readyCpu = cpuTicks(process.pid());
        } else {
          TimeUnit.MILLISECONDS.sleep(20);
        }
      }
      long cpuBefore = readyCpu;
      long idleBegin = System.nanoTime();
      TimeUnit.SECONDS.sleep(IDLE_SECONDS);
      double idleSeconds = (System.nanoTime() - idleBegin) / 1e9;
      // Clock ticks are 1/100 s on Linux.
      double cpuPercent = (cpuTicks(process.pid()) - cpuBefore) / idleSeconds;
      double rss = rssKiB(process.pid()) / 1024.0;
      double heap = heapBytes(http, port) / 1048576.0;
      process.destroy();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
      Matcher line = READY_LINE.matcher(Files.readString(log));
      return new Start(
          ready,
          readyCpu / 100.0,
          rss,
          heap,
          cpuPercent,
          line.find() ? line.group() : "no ready line");
    } finally {
      if (process.isAlive()) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    // Fields after the command name in parentheses, which may hold spaces: utime is the 14th.
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }

  private static long rssKiB(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("\\D", ""));
      }
    }
    return -1;
  }

  private static double heapBytes(HttpClient http, int port) throws Exception {
    String metrics =
        http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    double sum = 0;
    Matcher m = HEAP_USED.matcher(metrics);
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  private static int status(HttpClient http, int port, String path) {
    try {
      return http.send(
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
}
