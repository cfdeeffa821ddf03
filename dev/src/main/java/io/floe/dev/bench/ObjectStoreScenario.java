package io.floe.dev.bench;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.dev.EmbeddedStack;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.iceberg.HadoopConfigurations;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/**
 * Scenario {@code object-store} (issue 21): the {@code freshness} stream (a commit every 200 ms,
 * the three freshness views on Floe's defaults) and the {@code first-run} backfill (30 days, a day
 * per commit, one notice) with the lake on local files, then on the in-process S3 server behind a
 * {@link DelayingProxy} that holds each request for {@code --s3-latency-ms} (and for 0 ms). The
 * writer reaches S3 directly, so that only Floe's requests wait; lags come from the tables' commit
 * times, requests from Floe's own counts ({@link RequestTally}, behind {@code
 * floe_object_store_requests_total}) and from the proxy.
 */
final class ObjectStoreScenario {

  static final String NAME = "object-store";
  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final Duration COMMIT_INTERVAL = Duration.ofMillis(200);
  private static final int DAYS = 30;
  private static final int ROWS_PER_DAY = 5_040;
  private static final Instant FIRST_DAY = Instant.parse("2026-03-02T00:00:00Z");
  private static final String BUCKET = "bench";
  private static final String KEY = "floe";
  private static final String SECRET = "floe-secret";

  /** The stages of a refresh, whose requests the views' target commits are charged with. */
  private static final RequestStage[] REFRESH_STAGES = {
    RequestStage.PLAN,
    RequestStage.READ,
    RequestStage.WRITE,
    RequestStage.COMMIT,
    RequestStage.MAINTAIN
  };

  private ObjectStoreScenario() {}

  /** Where the lake lives in one run. */
  private record Storage(String label, Integer latencyMs) {
    boolean isS3() {
      return latencyMs != null;
    }
  }

  /** What one run measured. */
  private record Measured(
      List<Long> lags,
      int sourceCommits,
      int refreshes,
      RequestCounts requests,
      long proxied,
      double firstRunSeconds,
      int firstRunRefreshes,
      RequestCounts firstRunRequests,
      long firstRunProxied) {}

  static ScenarioResult run(BenchContext ctx, int latencyMs) throws Exception {
    Duration window = ctx.quick() ? Duration.ofSeconds(20) : Duration.ofSeconds(60);
    List<Storage> storages = new ArrayList<>();
    storages.add(new Storage("local files", null));
    storages.add(new Storage("S3 " + latencyMs + " ms", latencyMs));
    if (latencyMs != 0 && !ctx.quick()) {
      storages.add(new Storage("S3 0 ms", 0));
    }
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "The freshness stream (a commit every 200 ms for "
                    + window.toSeconds()
                    + " s, three views, Floe's defaults) and the first-run backfill ("
                    + DAYS
                    + " days, a day per commit, one notice) on "
                    + storages.stream().map(Storage::label).toList()
                    + ": S3 is the in-process S3 server behind a proxy holding each request;"
                    + " baselines are the same on local files.")
            .parameter("s3LatencyMs", latencyMs)
            .parameter("windowSeconds", window.toSeconds())
            .parameter("commitIntervalMs", COMMIT_INTERVAL.toMillis());
    Measured local = null;
    for (Storage storage : storages) {
      Measured m = measure(ctx, storage, window);
      local = local == null ? m : local;
      report(result, storage, m, storage.isS3() ? local : null);
    }
    result.note(
        "Requests are Floe's own counts (CountingFileIO, the floe_object_store_requests_total"
            + " metric) of the freshness window, stages resolve to maintain, divided by the source"
            + " commits of the window (per source commit) or by the views' target commits in it"
            + " (per refresh, stages plan to maintain); on S3 the proxy's count of the requests"
            + " it held beside them. The writer reaches S3 without the proxy and is not counted;"
            + " the bench's checks that the views are current are left out.");
    return result;
  }

  private static void report(ScenarioResult result, Storage storage, Measured m, Measured local) {
    String on = " (" + storage.label() + ")";
    for (double q : new double[] {0.5, 0.99, 1.0}) {
      String metric =
          "lag " + (q == 1.0 ? "max" : "p" + Math.round(q * 100)) + ", every 200ms" + on;
      double value = Lags.quantileSeconds(m.lags(), q);
      result.figure(
          local == null
              ? Figure.alone(metric, "s", value)
              : new Figure(
                  metric, "s", value, Lags.quantileSeconds(local.lags(), q), "local files", true));
    }
    figure(
        result,
        "requests per source commit, resolve+detect" + on,
        (m.requests().count(RequestStage.RESOLVE) + m.requests().count(RequestStage.DETECT))
            / (double) m.sourceCommits(),
        local == null
            ? null
            : (local.requests().count(RequestStage.RESOLVE)
                    + local.requests().count(RequestStage.DETECT))
                / (double) local.sourceCommits());
    figure(
        result,
        "requests per source commit, all stages" + on,
        floeRequests(m.requests()) / (double) m.sourceCommits(),
        local == null ? null : floeRequests(local.requests()) / (double) local.sourceCommits());
    figure(
        result,
        "requests per refresh" + on,
        refreshRequests(m.requests()) / (double) m.refreshes(),
        local == null ? null : refreshRequests(local.requests()) / (double) local.refreshes());
    figure(
        result,
        "target commits per 100 source commits" + on,
        100.0 * m.refreshes() / m.sourceCommits(),
        local == null ? null : 100.0 * local.refreshes() / local.sourceCommits());
    figure(
        result,
        "KiB read per refresh" + on,
        refreshBytes(m.requests(), true) / 1024.0 / m.refreshes(),
        local == null ? null : refreshBytes(local.requests(), true) / 1024.0 / local.refreshes());
    figure(
        result,
        "KiB written per refresh" + on,
        refreshBytes(m.requests(), false) / 1024.0 / m.refreshes(),
        local == null ? null : refreshBytes(local.requests(), false) / 1024.0 / local.refreshes());
    if (m.proxied() >= 0) {
      result.figure(
          Figure.alone(
              "requests through the proxy per source commit" + on,
              "",
              m.proxied() / (double) m.sourceCommits()));
    }
    figure(
        result,
        "first run: time from notice until every view is current" + on,
        m.firstRunSeconds(),
        local == null ? null : local.firstRunSeconds());
    figure(
        result,
        "first run: requests per refresh" + on,
        refreshRequests(m.firstRunRequests()) / (double) m.firstRunRefreshes(),
        local == null
            ? null
            : refreshRequests(local.firstRunRequests()) / (double) local.firstRunRefreshes());
    if (m.firstRunProxied() >= 0) {
      result.figure(
          Figure.alone("first run: requests through the proxy" + on, "", m.firstRunProxied()));
    }
    result.note(
        storage.label()
            + ": freshness window requests by stage and kind "
            + m.requests()
            + "; "
            + m.sourceCommits()
            + " source commits, "
            + m.refreshes()
            + " target commits");
    result.note(storage.label() + ": first run requests " + m.firstRunRequests());
  }

  private static void figure(ScenarioResult result, String metric, double value, Double local) {
    result.figure(
        local == null
            ? Figure.alone(metric, metric.contains("time") ? "s" : "", value)
            : new Figure(
                metric, metric.contains("time") ? "s" : "", value, local, "local files", true));
  }

  private static long floeRequests(RequestCounts counts) {
    return counts.count(RequestStage.RESOLVE)
        + counts.count(RequestStage.DETECT)
        + refreshRequests(counts);
  }

  private static long refreshRequests(RequestCounts counts) {
    long sum = 0;
    for (RequestStage stage : REFRESH_STAGES) {
      sum += counts.count(stage);
    }
    return sum;
  }

  private static long refreshBytes(RequestCounts counts, boolean read) {
    long sum = 0;
    for (RequestStage stage : REFRESH_STAGES) {
      sum += read ? counts.bytesRead(stage) : counts.bytesWritten(stage);
    }
    return sum;
  }

  private static Measured measure(BenchContext ctx, Storage storage, Duration window)
      throws Exception {
    String slug = storage.isS3() ? "s3-" + storage.latencyMs() + "ms" : "local";
    Path dir = ctx.dir(NAME + "-" + slug);
    S3Proxy s3 = null;
    DelayingProxy proxy = null;
    try {
      Map<String, String> lake = new HashMap<>();
      Map<String, String> writer = new HashMap<>();
      if (storage.isS3()) {
        Path blobs = Files.createDirectories(dir.resolve("s3"));
        Files.createDirectories(blobs.resolve(BUCKET));
        int s3Port = freePort();
        s3 =
            S3Proxy.builder()
                .blobStore(new FilesystemNio2BlobStore(blobs.toString()))
                .endpoint(URI.create("http://127.0.0.1:" + s3Port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, KEY, SECRET)
                .build();
        s3.start();
        proxy = new DelayingProxy(s3Port, Duration.ofMillis(storage.latencyMs()));
        lake.putAll(s3(dir, proxy.port()));
        writer.putAll(s3(dir, s3Port));
      }
      Map<String, String> settings = new HashMap<>();
      settings.put(FloeConfig.TOPIC_PARTITIONS, "2");
      lake.forEach(
          (k, v) -> settings.put(CatalogConfig.PREFIX + EmbeddedStack.CATALOG + "." + k, v));
      ctx.progress(NAME, storage.label() + ": the freshness stream");
      Freshness freshness =
          freshness(ctx, dir.resolve("freshness"), settings, writer, window, proxy);
      ctx.progress(NAME, storage.label() + ": the first run");
      FirstRun firstRun = firstRun(dir.resolve("first-run"), settings, writer, proxy);
      return new Measured(
          freshness.lags(),
          freshness.sourceCommits(),
          freshness.refreshes(),
          freshness.requests(),
          freshness.proxied(),
          firstRun.seconds(),
          firstRun.refreshes(),
          firstRun.requests(),
          firstRun.proxied());
    } finally {
      if (proxy != null) {
        proxy.close();
      }
      if (s3 != null) {
        s3.stop();
      }
    }
  }

  /** Catalog properties of the lake on S3 at {@code port}, with the embedded JDBC catalog. */
  private static Map<String, String> s3(Path dir, int port) {
    Map<String, String> p = new HashMap<>();
    p.put("warehouse", "s3://" + BUCKET + "/warehouse");
    p.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    p.put("s3.endpoint", "http://127.0.0.1:" + port);
    p.put("s3.path-style-access", "true");
    p.put("s3.access-key-id", KEY);
    p.put("s3.secret-access-key", SECRET);
    p.put("client.region", "us-east-1");
    return p;
  }

  /**
   * The writer's catalog: the bench's JDBC catalog, reaching S3 without the proxy, and built
   * without Floe's counting FileIO: its requests are not Floe's (with it, each source commit added
   * 6 requests under stage other, its manifest's PUT on Iceberg's worker pool among them).
   */
  private static Catalog writerCatalog(Path stackDir, Map<String, String> writer) {
    Map<String, String> all = new HashMap<>(EmbeddedStack.catalogProperties(stackDir));
    all.putAll(writer);
    return CatalogUtil.buildIcebergCatalog(
        EmbeddedStack.CATALOG, all, HadoopConfigurations.forCatalogs());
  }

  /** The writer's catalog, closed with the run. */
  private record Writer(Catalog catalog) implements AutoCloseable {
    @Override
    public void close() throws IOException {
      if (catalog instanceof Closeable closeable) {
        closeable.close();
      }
    }
  }

  /** What the freshness stream measured; {@code proxied} is -1 without a proxy. */
  private record Freshness(
      List<Long> lags, int sourceCommits, int refreshes, RequestCounts requests, long proxied) {}

  private static long proxied(DelayingProxy proxy) {
    return proxy == null ? -1 : proxy.requests();
  }

  private static Freshness freshness(
      BenchContext ctx,
      Path dir,
      Map<String, String> settings,
      Map<String, String> writer,
      Duration window,
      DelayingProxy proxy)
      throws Exception {
    // The writer's catalog after the bench: it prepares the directory the catalog lives in.
    try (ServiceBench bench = ServiceBench.prepare(dir, views(), settings);
        Writer writing = new Writer(writerCatalog(dir, writer))) {
      Catalog catalog = writing.catalog();
      Table trades = createTrades(catalog);
      Trades generator = new Trades(1);
      Instant now = Instant.now();
      TableWrites.append(trades, generator.between(now.minus(Duration.ofDays(1)), now, 20_000));
      bench.startFloe();
      bench.announce(TRADES, trades);
      if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(180))) {
        throw new IllegalStateException("the views did not finish their first refresh");
      }
      ctx.progress(NAME, "committing every 200 ms for " + window.toSeconds() + " s");
      RequestCounts before = RequestTally.process().counts();
      long proxiedBefore = proxied(proxy);
      long from = System.currentTimeMillis();
      long start = System.nanoTime();
      long commits = 0;
      while (System.nanoTime() - start < window.toNanos()) {
        long wait = start + (commits + 1) * COMMIT_INTERVAL.toNanos() - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        Instant at = Instant.now();
        TableWrites.append(trades, generator.between(at.minusMillis(200), at, 10));
        bench.announce(TRADES, trades);
        commits++;
      }
      long to = System.currentTimeMillis();
      RequestCounts requests = RequestTally.process().counts().minus(before);
      long proxiedInWindow = proxy == null ? -1 : proxied(proxy) - proxiedBefore;
      boolean caughtUp = bench.awaitCurrent(bench.views(), Duration.ofSeconds(180));
      if (!caughtUp) {
        ctx.progress(NAME, "the views did not catch up within 180 s");
      }
      trades.refresh();
      int sourceCommits = Lags.commitTimes(trades, from, to).size();
      List<Long> lags = new ArrayList<>();
      int refreshes = 0;
      for (ViewDefinition view : bench.views()) {
        Table target = catalog.loadTable(view.target().identifier());
        lags.addAll(Lags.of(trades, target, from, to));
        refreshes += Lags.refreshCommits(target, from, to);
      }
      return new Freshness(lags, sourceCommits, refreshes, requests, proxiedInWindow);
    }
  }

  /** What the first run measured; {@code proxied} is -1 without a proxy. */
  private record FirstRun(double seconds, int refreshes, RequestCounts requests, long proxied) {}

  private static FirstRun firstRun(
      Path dir, Map<String, String> settings, Map<String, String> writer, DelayingProxy proxy)
      throws Exception {
    // The writer's catalog after the bench: it prepares the directory the catalog lives in.
    try (ServiceBench bench = ServiceBench.prepare(dir, views(), settings);
        Writer writing = new Writer(writerCatalog(dir, writer))) {
      Catalog catalog = writing.catalog();
      Table trades = createTrades(catalog);
      bench.startFloe();
      if (!bench.awaitIdle(Duration.ofSeconds(120))) {
        throw new IllegalStateException("Floe did not start idle over the empty table in 120 s");
      }
      Trades generator = new Trades(5);
      long firstCommitAt = 0;
      for (int d = 0; d < DAYS; d++) {
        Instant day = FIRST_DAY.plus(Duration.ofDays(d));
        TableWrites.append(
            trades, generator.between(day, day.plus(Duration.ofDays(1)), ROWS_PER_DAY));
        if (d == 0) {
          firstCommitAt = trades.currentSnapshot().timestampMillis();
        }
      }
      long snapshot = trades.currentSnapshot().snapshotId();
      RequestCounts before = RequestTally.process().counts();
      // The bench's checks that the views are current load tables: its own requests, left out.
      RequestTally own = new RequestTally();
      long proxiedBefore = proxied(proxy);
      long announcedAt = System.currentTimeMillis();
      try (RequestStage.Scope checking = own.open()) {
        bench.announce(TRADES, trades);
        if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(600))) {
          throw new IllegalStateException("the views were not current 600 s after the notice");
        }
      }
      long end = System.currentTimeMillis();
      RequestCounts requests = RequestTally.process().counts().minus(before).minus(own.counts());
      long proxiedThen = proxy == null ? -1 : proxied(proxy) - proxiedBefore;
      double seconds = 0;
      int refreshes = 0;
      for (ViewDefinition view : bench.views()) {
        Table target = catalog.loadTable(view.target().identifier());
        OptionalLong currentAt = Lags.reflectedAt(trades, target, snapshot);
        if (currentAt.isEmpty()) {
          throw new IllegalStateException("no commit of " + view.name() + " reflects the notice");
        }
        seconds = Math.max(seconds, Math.max(0, currentAt.getAsLong() - announcedAt) / 1000.0);
        refreshes += Lags.targetCommits(target, firstCommitAt, end);
      }
      return new FirstRun(seconds, refreshes, requests, proxiedThen);
    }
  }

  private static Table createTrades(Catalog catalog) {
    return catalog
        .buildTable(TableIdentifier.of("market", "trades"), Trades.SCHEMA)
        .withPartitionSpec(Trades.BY_DAY)
        .withProperty("format-version", "2")
        .create();
  }

  private static String views() {
    StringBuilder yaml = new StringBuilder("views:\n");
    for (String[] v : FreshnessScenario.VIEWS) {
      yaml.append(BenchLake.yamlEntry(v[0], v[1], "lake.analytics." + v[0], "{}"));
    }
    return yaml.toString();
  }

  private static int freePort() throws java.io.IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
