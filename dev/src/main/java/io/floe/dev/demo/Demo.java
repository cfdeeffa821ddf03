package io.floe.dev.demo;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.CommitNotices;
import io.floe.app.service.FloeService;
import io.floe.app.views.ViewsFile;
import io.floe.dev.EmbeddedStack;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.Trades;
import io.floe.topology.refresh.Freshness;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.sql.ViewQueryParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * {@code floe demo}: Floe with everything embedded. An in-process Kafka broker (KRaft), an Iceberg
 * JDBC catalog on a SQLite file, a trades table that keeps receiving commits, a dimension of the
 * sector of each symbol that is corrected every few minutes, six views (one chained on another, one
 * joined to the dimension), the web UI, and a live log of refreshes. With {@code verify}, every
 * view is compared with the oracle at the end.
 */
public final class Demo {

  /** Marks a directory as the demo's own, so that a re-run may wipe it. */
  private static final String MARKER = ".floe-demo";

  private static final TableName TRADES = TableName.parse("lake.market.trades");

  /** Every how many seconds a symbol moves to another sector; the first move comes early. */
  private static final int SECTOR_EVERY = 180;

  private static final int FIRST_SECTOR_MOVE = 45;

  /** What the user asked for. */
  public record Options(
      Path dir, int port, Duration duration, boolean verify, int ratePerSecond, boolean verbose) {}

  private final Options options;
  private final PrintWriter out;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final CountDownLatch finished = new CountDownLatch(1);
  private Path dir;

  public Demo(Options options, PrintWriter out) {
    this.options = options;
    this.out = out;
  }

  /** Asks a running demo to stop (Ctrl-C) and waits a while for it to close cleanly. */
  public void stop() {
    stop.countDown();
    try {
      finished.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs the demo until its duration passes or {@link #stop()}; returns the exit code. */
  public int run() throws Exception {
    try {
      return runEmbedded();
    } finally {
      finished.countDown();
    }
  }

  private int runEmbedded() throws Exception {
    dir = prepare(options.dir().toAbsolutePath().normalize());
    out.println("Floe demo in " + dir + " (a fresh start: the directory is wiped on each run)");
    out.flush();
    try (EmbeddedStack stack = EmbeddedStack.start(dir)) {
      copyResource("/demo/views.yaml", dir.resolve("views.yaml"));
      FloeConfig config =
          stack.writeConfig(
              "floe-demo",
              Map.of(
                  FloeConfig.VIEWS_FILE, "views.yaml",
                  FloeConfig.VIEWS_RELOAD_INTERVAL_MS, "1000",
                  FloeConfig.HTTP_PORT, String.valueOf(options.port()),
                  // The demo's API has no token: it listens on loopback only.
                  FloeConfig.HTTP_HOST, "127.0.0.1",
                  FloeConfig.TOPIC_PARTITIONS, "2"));
      Path configFile = dir.resolve("floe.properties");
      try (var catalogs = config.catalogs();
          CommitNotices notices = new CommitNotices(config, "floe-demo");
          RefreshLog log = new RefreshLog(config, out)) {
        Catalog catalog = catalogs.catalog(TRADES.catalog());
        Table trades = createTrades(catalog);
        Symbols symbols = Symbols.create(catalog);
        Market market = new Market(trades, options.ratePerSecond());
        for (Market.Commit commit : market.seed(Instant.now(), 3, 20_000)) {
          log.source(commit.kind(), commit.description());
        }
        Market.Commit sectors = symbols.seed();
        log.source(sectors.kind(), sectors.description());
        try (FloeService floe = new FloeService(config)) {
          floe.start();
          announce(notices, TRADES, trades);
          announce(notices, Symbols.NAME, symbols.table());
          log.start();
          out.printf(
              "%nWeb UI: http://localhost:%d    views: %s    config: %s%n"
                  + "The source gets %d trades a second, late trades, corrections, cancellations"
                  + " and compactions; a symbol moves to another sector every %d s.%n%s%n%n",
              floe.httpPort(),
              dir.resolve("views.yaml"),
              configFile,
              options.ratePerSecond(),
              SECTOR_EVERY,
              options.duration() == null
                  ? "Press Ctrl-C to stop."
                  : "Stopping after " + options.duration().toSeconds() + " s.");
          out.flush();
          drive(market, trades, symbols, notices, log);
          return options.verify() ? verify(catalogs::catalog, log) : 0;
        }
      }
    }
  }

  /**
   * Commits to the source every second, and to the dimension every {@value #SECTOR_EVERY} s,
   * announcing each commit, until it is time to stop.
   */
  private void drive(
      Market market, Table trades, Symbols symbols, CommitNotices notices, RefreshLog log)
      throws InterruptedException {
    long ticks = options.duration() == null ? Long.MAX_VALUE : options.duration().toSeconds();
    long appended = 0;
    long start = System.nanoTime();
    long second = TimeUnit.SECONDS.toNanos(1);
    for (long tick = 1; tick <= ticks; tick++) {
      // A tick a second, whatever the commits cost.
      long wait = start + tick * second - System.nanoTime();
      if (stop.await(Math.max(0, wait), TimeUnit.NANOSECONDS)) {
        return;
      }
      List<Market.Commit> commits;
      try {
        commits = market.tick(Instant.now());
      } catch (RuntimeException e) {
        log.source("append", "FAILED: " + e.getMessage());
        continue;
      }
      if (tick % SECTOR_EVERY == FIRST_SECTOR_MOVE) {
        try {
          Market.Commit moved = symbols.correct();
          announce(notices, Symbols.NAME, symbols.table());
          log.source(moved.kind(), moved.description());
        } catch (RuntimeException e) {
          log.source("sector", "FAILED: " + e.getMessage());
        }
      }
      for (Market.Commit commit : commits) {
        announce(notices, TRADES, trades);
        if (commit.kind().equals("append")) {
          appended++;
        } else {
          log.source(commit.kind(), commit.description());
        }
      }
      if (tick % 10 == 0) {
        log.source("appends", appended + " commits in the last 10 s");
        appended = 0;
      }
    }
  }

  private static void announce(CommitNotices notices, TableName name, Table table)
      throws InterruptedException {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    String metadata =
        table instanceof HasTableOperations ops
            ? ops.operations().current().metadataFileLocation()
            : null;
    notices.publish(name, current == null ? null : current.snapshotId(), metadata);
  }

  /**
   * Waits until every view has caught up with its source, then compares each with the view
   * evaluated from scratch by the oracle. Returns 0 when all are equal.
   */
  private int verify(java.util.function.Function<String, Catalog> catalogs, RefreshLog log)
      throws Exception {
    List<ViewDefinition> views = ViewsFile.load(dir.resolve("views.yaml"));
    out.println();
    out.println("Verifying: waiting for every view to catch up with its source...");
    out.flush();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    List<String> behind = behind(views, catalogs);
    while (!behind.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(500);
      behind = behind(views, catalogs);
    }
    if (!behind.isEmpty()) {
      out.println("FAILED: still behind their sources after 180 s: " + behind);
      out.flush();
      return 1;
    }
    int failures = 0;
    for (ViewDefinition view : views) {
      ParsedViewQuery query = parse(view);
      Table source = table(catalogs, query.source());
      Table target = table(catalogs, view.target());
      long snapshot = Freshness.latestDataChange(source).orElseThrow().snapshotId();
      List<Oracle.Source> dimensions = new ArrayList<>();
      for (ParsedViewQuery.JoinedTable joined : query.dimensions()) {
        Table dimension = table(catalogs, joined.table());
        dimensions.add(
            new Oracle.Source(
                dimension, joined.table().toString(), dimension.currentSnapshot().snapshotId()));
      }
      Optional<String> difference =
          Oracle.difference(
              "view " + target.name(),
              snapshot,
              Oracle.expected(
                  new Oracle.Source(source, query.source().toString(), snapshot),
                  dimensions,
                  view.query()),
              Oracle.actual(target));
      if (difference.isPresent()) {
        failures++;
        out.println("  DIFFERS  " + view.name() + ": " + difference.get());
      } else {
        out.printf(
            "  equal    %-22s %6d rows, as the oracle computes them from source snapshot %d%n",
            view.name(), Oracle.actual(target).size(), snapshot);
      }
    }
    out.println(
        failures == 0
            ? "Verified: every view equals its query evaluated from scratch ("
                + log.refreshes()
                + " refreshes)."
            : "FAILED: " + failures + " of " + views.size() + " views differ from the oracle.");
    out.flush();
    return failures == 0 ? 0 : 1;
  }

  private static List<String> behind(
      List<ViewDefinition> views, java.util.function.Function<String, Catalog> catalogs) {
    List<String> behind = new ArrayList<>();
    for (ViewDefinition view : views) {
      try {
        ParsedViewQuery query = parse(view);
        Table source = table(catalogs, query.source());
        Table target = table(catalogs, view.target());
        List<Table> dimensions =
            query.dimensions().stream().map(d -> table(catalogs, d.table())).toList();
        if (!Freshness.isCurrent(target, source, dimensions, view.version())) {
          behind.add(view.name());
        }
      } catch (NoSuchTableException e) {
        behind.add(view.name());
      }
    }
    return behind;
  }

  private static ParsedViewQuery parse(ViewDefinition view) {
    try {
      return ViewQueryParser.parse(view.query());
    } catch (InvalidViewException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Table table(
      java.util.function.Function<String, Catalog> catalogs, TableName name) {
    return catalogs.apply(name.catalog()).loadTable(name.identifier());
  }

  private static Table createTrades(Catalog catalog) {
    TableIdentifier id = TRADES.identifier();
    EmbeddedStack.createNamespaces(catalog, id.namespace(), Namespace.of("analytics"));
    return catalog
        .buildTable(id, Trades.SCHEMA)
        .withPartitionSpec(Trades.BY_DAY)
        .withProperty("format-version", "2")
        .create();
  }

  /** Creates the directory, or wipes one an earlier demo made; refuses any other directory. */
  private static Path prepare(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      boolean empty;
      try (Stream<Path> entries = Files.list(dir)) {
        empty = entries.findAny().isEmpty();
      }
      if (!empty && !Files.exists(dir.resolve(MARKER))) {
        throw new IllegalArgumentException(
            dir + " exists and was not made by floe demo; choose another --dir");
      }
      try (Stream<Path> all = Files.walk(dir)) {
        for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
          if (!p.equals(dir)) {
            Files.delete(p);
          }
        }
      }
    }
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(MARKER), "floe demo directory; wiped by each floe demo run\n");
    return dir;
  }

  private static void copyResource(String resource, Path to) throws IOException {
    try (InputStream in = Demo.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UncheckedIOException(new IOException("missing resource " + resource));
      }
      Files.copy(in, to);
    }
  }
}
