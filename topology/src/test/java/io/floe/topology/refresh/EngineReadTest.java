package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.floe.testing.IcebergFixture;
import io.floe.testing.Jdks;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.File;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Other engines read Floe's targets as the oracle does (issue 14), each in a JVM of its own over
 * the same JDBC catalog, for a merge-on-read target with live equality deletes on the bucket
 * column, a delta-path target with equality deletes on the group keys, and a compacted
 * copy-on-write target:
 *
 * <ul>
 *   <li>Spark SQL with Iceberg's Spark runtime (it brings its own Iceberg, Jackson and Hadoop): the
 *       {@code engines/spark} module's reader.
 *   <li>A real Trino, a standalone query runner with its Iceberg connector and local file system,
 *       which also reads the freshness keys Trino's connector reads from a materialized view's
 *       storage table: the {@code engines/trino} module's reader, whose source a Java 25 launcher
 *       runs (Trino needs Java 25; the build runs on 17). The JDK is {@code FLOE_JAVA25_HOME}, or
 *       else the newest one of 25 or later under {@code /usr/lib/jvm}.
 * </ul>
 *
 * Each engine's test is skipped when its module has not been built (a build of this module alone),
 * and Trino's when there is no Java 25.
 */
class EngineReadTest {

  private static final Path SPARK = Path.of("../engines/spark/target");
  private static final Path TRINO = Path.of("../engines/trino/target");
  private static final String OHLCV_1M = TradeViews.OHLCV_1M;
  private static final String VOLUME =
      """
      SELECT symbol, side, date_trunc('hour', ts) AS hour_ts, sum(quantity) AS volume,
             count(*) AS trades, min(price) AS low, max(price) AS high
      FROM lake.market.trades
      GROUP BY 1, 2, 3
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final Map<String, Long> watermarks = new HashMap<>();
  private final Random random = new Random(11);

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (lake != null) {
      lake.close();
    }
  }

  @Test
  void shouldBeReadBySparkAsTheOracleReadsIt() throws Exception {
    assumeTrue(
        Files.exists(SPARK.resolve("classpath.txt")),
        "engines/spark is not built: run the reactor build");
    // Given targets in both write modes, with live delete files and a compaction
    List<ViewDefinition> views = maintainTargets();

    // Then Spark reads each target exactly as the oracle does
    assertReadAsTheOracleReadsIt(views, readBySpark(views.stream().map(this::target).toList()));
  }

  @Test
  void shouldBeReadByTrinoAsTheOracleReadsIt() throws Exception {
    assumeTrue(
        Files.exists(TRINO.resolve("classpath.txt")),
        "engines/trino is not built: run the reactor build");
    Path java = Jdks.java25();
    assumeTrue(java != null, () -> "no Java 25 for Trino: " + Jdks.noJava25());
    // Given targets in both write modes, with live delete files and a compaction
    List<ViewDefinition> views = maintainTargets();

    // Then Trino reads each target exactly as the oracle does
    assertReadAsTheOracleReadsIt(
        views, readByTrino(java, views.stream().map(this::target).toList()));

    // And Trino reads the freshness keys of each target's current snapshot as Floe wrote them,
    // naming the source Trino finds at the snapshot the target reflects
    long source = trades.currentSnapshot().snapshotId();
    for (ViewDefinition view : views) {
      Table target = target(view);
      Map<String, String> summary = target.currentSnapshot().summary();
      Map<String, String> byTrino = new HashMap<>();
      for (String line :
          Files.readAllLines(
              dir.resolve("trino-out").resolve(unqualified(target) + ".freshness"),
              StandardCharsets.UTF_8)) {
        String[] entry = line.split("\t", 2);
        byTrino.put(entry[0], entry[1]);
      }
      String dependsOnTables = "market.trades=" + source;
      assertThat(summary).containsEntry(EngineMetadata.DEPENDS_ON_TABLES, dependsOnTables);
      assertThat(byTrino)
          .as(view.name())
          .containsEntry(EngineMetadata.DEPENDS_ON_TABLES, dependsOnTables)
          .containsEntry(
              EngineMetadata.TRINO_QUERY_START_TIME,
              summary.get(EngineMetadata.TRINO_QUERY_START_TIME))
          .containsEntry(dependsOnTables, "current");
      assertThat(Instant.parse(byTrino.get(EngineMetadata.TRINO_QUERY_START_TIME)))
          .isBeforeOrEqualTo(Instant.ofEpochMilli(target.currentSnapshot().timestampMillis()));
    }
  }

  /**
   * Targets in both write modes, with live delete files and a compaction: a merge-on-read target
   * with equality deletes on the bucket column, a delta-path one with equality deletes on the group
   * keys, and a compacted copy-on-write one, each maintained through source appends, deletes and
   * late rows.
   */
  private List<ViewDefinition> maintainTargets() throws Exception {
    ViewDefinition merged = view("ohlcv_mor", OHLCV_1M);
    ViewDefinition delta = view("volume_mor", VOLUME);
    ViewDefinition copied = view("ohlcv_cow", OHLCV_1M);
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    lake.append(trades, randomTrades(300, "2026-04-07", 8, 18));
    for (ViewDefinition view : List.of(merged, delta, copied)) {
      maintain(refresher, view);
    }
    for (ViewDefinition view : List.of(merged, delta)) {
      target(view)
          .updateProperties()
          .set("write.merge.mode", "merge-on-read")
          .set(TargetCompaction.MAX_DELETE_FILES, "100")
          .set(TargetCompaction.MIN_INPUT_FILES, "100")
          .commit();
    }
    target(copied).updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();

    // The source changes, deletes and late rows included, and each view refreshes
    lake.deleteByEquality(trades, List.of(3L, 30L, 60L));
    for (ViewDefinition view : List.of(merged, delta, copied)) {
      maintain(refresher, view);
    }
    for (int round = 0; round < 4; round++) {
      lake.append(trades, randomTrades(6, "2026-04-07", 9 + 2 * round, 10 + 2 * round));
      lake.append(trades, List.of(lake.trade("NULLSIDE", "2026-04-07T09:00:00Z", 1.0, 1L, null)));
      for (ViewDefinition view : List.of(merged, delta, copied)) {
        maintain(refresher, view);
      }
    }
    assertThat(deleteFiles(target(merged))).isPositive();
    assertThat(deleteFiles(target(delta))).isPositive();
    assertThat(target(copied).snapshots())
        .anyMatch(s -> org.apache.iceberg.DataOperations.REPLACE.equals(s.operation()));
    return List.of(merged, delta, copied);
  }

  /** Each target holds the view's rows, and the engine read exactly the rows the oracle reads. */
  private void assertReadAsTheOracleReadsIt(
      List<ViewDefinition> views, Map<String, List<String>> byEngine) {
    for (ViewDefinition view : views) {
      Table target = target(view);
      OracleAssertions.assertMatches(
          target, trades, trades.currentSnapshot().snapshotId(), view.query());
      assertThat(byEngine.get(target.name())).as(view.name()).isEqualTo(readByOracle(target));
    }
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private void maintain(ViewRefresher refresher, ViewDefinition view) throws InvalidViewException {
    trades.refresh();
    Snapshot current = trades.currentSnapshot();
    Long watermark = watermarks.get(view.name());
    DirtyBuckets dirty = ViewRefresherTest.detected(trades, watermark, current.snapshotId(), view);
    refresher.refresh(
        ViewRefresherTest.request(view, current.snapshotId(), watermark, dirty),
        ViewRefresher.ProgressListener.NONE);
    watermarks.put(view.name(), current.snapshotId());
  }

  private List<Record> randomTrades(int n, String day, int hourFrom, int hourTo) {
    return lake.randomTrades(random, n, day, hourFrom, hourTo);
  }

  private static long deleteFiles(Table table) throws IOException {
    table.refresh();
    long count = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        count += task.deletes().size();
      }
    }
    return count;
  }

  /** The target's rows through Iceberg's generic reader, as the Spark reader prints them. */
  private static List<String> readByOracle(Table target) {
    List<String> lines = new ArrayList<>();
    for (List<Object> row : Oracle.actual(target)) {
      List<String> values = new ArrayList<>();
      for (Object value : row) {
        values.add(
            value == null
                ? "null"
                : value instanceof BigDecimal d ? d.toPlainString() : value.toString());
      }
      lines.add(String.join("\t", values));
    }
    lines.sort(null);
    return lines;
  }

  /** The rows of each target through Spark SQL, in one JVM of its own, by table name. */
  private Map<String, List<String>> readBySpark(List<Table> targets)
      throws IOException, InterruptedException {
    String classpath =
        SPARK.resolve("classes").toAbsolutePath()
            + File.pathSeparator
            + Files.readString(SPARK.resolve("classpath.txt")).trim();
    Path tmp = Files.createDirectories(dir.resolve("spark-tmp"));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx1g");
    command.add("-Djava.io.tmpdir=" + tmp);
    for (String pkg :
        List.of(
            "java.lang",
            "java.lang.invoke",
            "java.lang.reflect",
            "java.io",
            "java.net",
            "java.nio",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "jdk.internal.ref",
            "sun.nio.ch",
            "sun.nio.cs",
            "sun.security.action",
            "sun.util.calendar")) {
      command.add("--add-opens=java.base/" + pkg + "=ALL-UNNAMED");
    }
    command.add("-Djdk.reflect.useDirectMethodHandle=false");
    command.add("-Dio.netty.tryReflectionSetAccessible=true");
    command.add("-cp");
    command.add(classpath);
    command.add("io.floe.engines.spark.SparkTableReader");
    return read("spark", command, targets);
  }

  /**
   * The rows of each target through a real Trino, in one Java 25 JVM of its own, by table name. The
   * reader's source is run as it is (the Java launcher compiles it): the build's Java 17 cannot
   * compile against Trino.
   */
  private Map<String, List<String>> readByTrino(Path java, List<Table> targets)
      throws IOException, InterruptedException {
    Path tmp = Files.createDirectories(dir.resolve("trino-tmp"));
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.add("-Xmx2g");
    // C1 only and the serial collector: the reader's queries are small, and both halve its start.
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-XX:+UseSerialGC");
    command.add("--add-modules=jdk.incubator.vector");
    command.add("-Djava.io.tmpdir=" + tmp);
    command.add("--enable-native-access=ALL-UNNAMED");
    command.add("--sun-misc-unsafe-memory-access=allow");
    command.add("-cp");
    command.add(Files.readString(TRINO.resolve("classpath.txt")).trim());
    command.add(
        TRINO
            .resolve("../src/main/trino/io/floe/engines/trino/TrinoTableReader.java")
            .toAbsolutePath()
            .normalize()
            .toString());
    return read("trino", command, targets);
  }

  /**
   * Runs an engine's reader ({@code command}, to which the catalog, an output directory and the
   * tables are added) and returns the rows it wrote for each target, sorted, by table name.
   */
  private Map<String, List<String>> read(String engine, List<String> command, List<Table> targets)
      throws IOException, InterruptedException {
    Path out = Files.createDirectories(dir.resolve(engine + "-out"));
    Map<String, String> catalog = lake.catalogProperties();
    List<String> arguments = new ArrayList<>(command);
    arguments.add(catalog.get("uri"));
    arguments.add(catalog.get("warehouse"));
    arguments.add(out.toString());
    for (Table target : targets) {
      arguments.add(unqualified(target));
    }
    Path log = dir.resolve(engine + ".log");
    Process reader =
        new ProcessBuilder(arguments)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean done = reader.waitFor(5, TimeUnit.MINUTES);
    if (!done) {
      reader.destroyForcibly();
    }
    assertThat(done && reader.exitValue() == 0)
        .as("%s read the targets: %s", engine, tail(log))
        .isTrue();
    Map<String, List<String>> rows = new HashMap<>();
    for (Table target : targets) {
      List<String> lines =
          new ArrayList<>(
              Files.readAllLines(
                  out.resolve(unqualified(target) + ".tsv"), StandardCharsets.UTF_8));
      lines.sort(null);
      rows.put(target.name(), lines);
    }
    return rows;
  }

  private static String unqualified(Table target) {
    return target.name().substring(target.name().indexOf('.') + 1);
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }
}
