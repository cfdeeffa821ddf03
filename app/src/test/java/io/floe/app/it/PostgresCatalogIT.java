package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe on Iceberg's JDBC catalog in a real PostgreSQL server, the catalog most JDBC deployments
 * run: a PostgreSQL 15 started by this test in a temporary directory (zonky's embedded binaries,
 * linux x86_64), reached with a password through the driver the service bundles in {@code lib/}.
 * Each test gets a database of its own; after every step each view equals the oracle.
 */
class PostgresCatalogIT {

  private static final String USER = "floe";
  private static final String PASSWORD = "floe-catalog-secret";
  private static final AtomicInteger DATABASES = new AtomicInteger();

  private static EmbeddedPostgres server;
  private static String unavailable;

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private final Random random = new Random(23);

  @BeforeAll
  static void startServer(@TempDir Path serverDir) throws Exception {
    try {
      server =
          EmbeddedPostgres.builder()
              .setDataDirectory(serverDir.resolve("data"))
              // Durability is not under test; the catalog's compare-and-swap commits are.
              .setServerConfig("fsync", "off")
              .setServerConfig("synchronous_commit", "off")
              .setServerConfig("full_page_writes", "off")
              .setDataDirectoryCustomizer(PostgresCatalogIT::requirePasswords)
              .start();
    } catch (IOException | IllegalStateException e) {
      // No binaries for this platform, or a server that would not start (the launcher's two
      // ways of failing); anything else is a failure of the test.
      unavailable =
          String.format(
              "no PostgreSQL server can start here (embedded PostgreSQL binaries are for linux"
                  + " x86_64; this is %s %s): %s",
              System.getProperty("os.name"), System.getProperty("os.arch"), e);
      return;
    }
    try (Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + USER + " LOGIN PASSWORD '" + PASSWORD + "'");
    }
  }

  /**
   * Floe's role must give its password, as in production; the launcher's own superuser connects
   * without one (its readiness probe knows no password).
   */
  private static void requirePasswords(java.io.File dataDir) {
    try {
      Files.writeString(
          dataDir.toPath().resolve("pg_hba.conf"),
          String.join(
              "\n",
              "local all all trust",
              "host all postgres 127.0.0.1/32 trust",
              "host all postgres ::1/128 trust",
              "host all all 127.0.0.1/32 scram-sha-256",
              "host all all ::1/128 scram-sha-256",
              ""));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @AfterAll
  static void stopServer() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    // Skipped, not passed, where no server starts: the reports and .ci/skipped-tests say why.
    Assumptions.assumeTrue(unavailable == null, () -> unavailable);
    String database = "floe_" + DATABASES.incrementAndGet();
    try (Connection c = server.getPostgresDatabase().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + database + " OWNER " + USER);
    }
    Map<String, String> catalog = new HashMap<>();
    catalog.put("type", "jdbc");
    catalog.put("uri", "jdbc:postgresql://localhost:" + server.getPort() + "/" + database);
    catalog.put("jdbc.user", USER);
    catalog.put("jdbc.password", PASSWORD);
    catalog.put("jdbc.schema-version", "V1");
    catalog.put("warehouse", dir.resolve("warehouse").toUri().toString());
    floe = new FloeHarness(dir, IcebergFixture.create(catalog));
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (floe != null) {
      floe.close();
    }
  }

  @Test
  void shouldFollowAStreamWithDeletesAndACompactionOnAPostgresCatalog() throws Exception {
    // Given a source with data before Floe first runs
    ViewDefinition minute = FloeHarness.view("ohlcv_1m", FloeServiceIT.OHLCV_1M);
    ViewDefinition weekly = FloeHarness.view("weekly", FloeServiceIT.WEEKLY);
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-06", 8, 18));
    lake.append(trades, lake.randomTrades(random, 100, "2026-04-07", 8, 18));

    // When Floe runs for the first time, then follows a stream of commits
    floe.start("a");
    floe.define(minute);
    floe.define(weekly);
    floe.announce("lake.market.trades");
    awaitOracle(minute, weekly);
    assertThat(tableNames()).as("the catalog's rows in PostgreSQL").contains("trades", "ohlcv_1m");
    for (int hour = 18; hour < 21; hour++) {
      lake.append(trades, lake.randomTrades(random, 20, "2026-04-07", hour, hour + 1));
      floe.announce("lake.market.trades");
      awaitOracle(minute, weekly);
    }

    // Then deletes by position and by equality, and a compaction, are followed too
    lake.deleteByPosition(trades, r -> "MSFT".equals(r.getField("symbol")));
    floe.announce("lake.market.trades");
    awaitOracle(minute, weekly);
    lake.deleteByEquality(trades, List.of(1L, 2L, 3L, 150L));
    floe.announce("lake.market.trades");
    awaitOracle(minute, weekly);
    lake.compact(trades);
    lake.append(trades, lake.randomTrades(random, 5, "2026-04-08", 9, 10));
    floe.announce("lake.market.trades");
    awaitOracle(minute, weekly);
    floe.assertEachRefreshAppliedAndReportedOnce(List.of(minute, weekly));
  }

  @Test
  void shouldCatchUpAfterARestartOnAPostgresCatalog() throws Exception {
    // Given a view Floe refreshed, and Floe stopped
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    lake.append(trades, lake.randomTrades(random, 50, "2026-04-08", 9, 11));
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    floe.stopServices();

    // When the source changes while Floe is down, and Floe starts again on its state directory
    lake.append(trades, lake.randomTrades(random, 20, "2026-04-08", 10, 12));
    lake.deleteByPosition(trades, r -> "IBM".equals(r.getField("symbol")));
    floe.announce("lake.market.trades");
    floe.start("a");

    // Then it follows from where it stopped, and from there on, applying nothing twice
    floe.awaitOracle(view, trades);
    lake.append(trades, lake.randomTrades(random, 10, "2026-04-08", 11, 12));
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    floe.assertEachRefreshAppliedAndReportedOnce(List.of(view));
  }

  @Test
  void shouldSeeEveryCommitOfTwoConcurrentWritersOnAPostgresCatalog() throws Exception {
    // Given a view Floe maintains, and two writers that commit to its source at the same time
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    lake.append(trades, lake.randomTrades(random, 50, "2026-04-08", 9, 10));
    trades.updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "50").commit();
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    int commitsPerWriter = 10;
    List<List<List<Record>>> batches = new ArrayList<>();
    for (int writer = 0; writer < 2; writer++) {
      List<List<Record>> ofWriter = new ArrayList<>();
      for (int i = 0; i < commitsPerWriter; i++) {
        ofWriter.add(lake.randomTrades(random, 5, "2026-04-08", 9 + writer, 10 + writer));
      }
      batches.add(ofWriter);
    }

    // When both write while Floe refreshes the view (its own target commits go to the same
    // catalog)
    ExecutorService writers = Executors.newFixedThreadPool(2);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (List<List<Record>> ofWriter : batches) {
        done.add(
            writers.submit(
                () -> {
                  Table table = lake.load("market", "trades");
                  for (List<Record> batch : ofWriter) {
                    lake.append(table, batch);
                    floe.announce("lake.market.trades");
                  }
                  return null;
                }));
      }
      for (Future<?> writer : done) {
        writer.get(120, TimeUnit.SECONDS);
      }
    } finally {
      writers.shutdownNow();
    }

    // Then the catalog kept every commit, and the view reflects them all
    trades.refresh();
    List<Snapshot> appends = new ArrayList<>();
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(trades)) {
      if (DataOperations.APPEND.equals(snapshot.operation())) {
        appends.add(snapshot);
      }
    }
    assertThat(appends).as("appends on the source's history").hasSize(1 + 2 * commitsPerWriter);
    floe.awaitOracle(view, trades);
    floe.assertEachRefreshAppliedAndReportedOnce(List.of(view));
  }

  private void awaitOracle(ViewDefinition... views) {
    for (ViewDefinition view : views) {
      floe.awaitOracle(view, trades);
    }
  }

  /** The table names the JDBC catalog keeps in its PostgreSQL database. */
  private List<String> tableNames() throws Exception {
    String uri = lake.catalogProperties().get("uri");
    List<String> names = new ArrayList<>();
    try (Connection c = java.sql.DriverManager.getConnection(uri, USER, PASSWORD);
        Statement s = c.createStatement();
        ResultSet rows = s.executeQuery("SELECT table_name FROM iceberg_tables")) {
      while (rows.next()) {
        names.add(rows.getString(1));
      }
    }
    return names;
  }
}
