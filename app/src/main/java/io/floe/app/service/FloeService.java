package io.floe.app.service;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.app.http.HttpAccess;
import io.floe.app.http.HttpApi;
import io.floe.app.metrics.FloeMeters;
import io.floe.app.views.ViewsFile;
import io.floe.app.views.ViewsFileException;
import io.floe.app.views.ViewsFileWatcher;
import io.floe.app.views.ViewsPublisher;
import io.floe.topology.FloeTopology;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.processor.DeadLetterDeserializationHandler;
import io.floe.topology.processor.TopologyServices;
import io.floe.topology.refresh.EngineWarmup;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.util.ThreadPools;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.state.HostInfo;
import org.rocksdb.RocksDB;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Floe process: creates its topics, publishes the views file, and runs the topology in Kafka
 * Streams with refreshes on Floe's own threads. An unrecoverable error stops the service, and
 * {@link #awaitTermination} then returns a non-zero exit code so that the orchestrator restarts the
 * process.
 */
public final class FloeService implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FloeService.class);

  /** How long the refreshes must leave the cores idle before each round of the warm-up. */
  static final Duration WARM_UP_QUIET = Duration.ofSeconds(2);

  private final FloeConfig config;
  private final HttpAccess httpAccess;
  private final CatalogConfig catalogs;
  private final FloeMeters metrics = new FloeMeters();
  private final RefreshExecutor executor;
  private final ViewIndex views = new ViewIndex();
  private final ExecutorService io;
  private final ExecutorService scans;
  private final ExecutorService remoteReads;
  private final ExecutorService remoteCommits;
  private final ExecutorService manifestWorkers;
  // Reads of tables on a remote store on remoteReads, their commits' manifests on remoteCommits,
  // the large manifest work of local tables on manifestWorkers: pools the service shuts down after
  // the refreshes, where Iceberg's own worker pool shuts down as soon as the JVM exits.
  private final ManifestWork manifests;
  private final GlobalDeadLetters globalDeadLetters;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final StartupPhases startup = new StartupPhases();
  private final StreamsSettled settled = new StreamsSettled();
  private int partitions;
  private KafkaStreams streams;
  private HttpApi http;
  private ViewCommands commands;
  private CommitNotices notices;
  private ViewsFileWatcher watcher;
  private volatile Thread warmUpThread;
  private volatile CompletableFuture<Void> storesLibrary;

  /**
   * A service for {@code config}, not started yet.
   *
   * @throws org.apache.kafka.common.config.ConfigException when the HTTP server would serve its
   *     guarded endpoints to anyone without being asked to ({@link HttpAccess#of})
   */
  public FloeService(FloeConfig config) {
    this(config, RefreshHooks.NONE);
  }

  /**
   * A service whose refreshes call {@code hooks} at each step: the crash tests halt the process
   * there. Nothing in the service arms them.
   */
  public FloeService(FloeConfig config, RefreshHooks hooks) {
    this.config = config;
    this.httpAccess = config.getBoolean(FloeConfig.HTTP_ENABLED) ? HttpAccess.of(config) : null;
    this.catalogs = config.catalogs();
    FileCaches.configure(config.getLong(FloeConfig.CACHE_BYTES));
    this.partitions = config.getInt(FloeConfig.TOPIC_PARTITIONS);
    this.scans = ViewScan.newExecutor();
    this.remoteReads = ManifestWork.newRemoteReadsPool();
    this.remoteCommits = ManifestWork.newRemoteCommitsPool();
    this.manifestWorkers = ManifestWork.newWorkerPool();
    this.manifests =
        ManifestWork.overlappingRemoteReadsOn(remoteReads, remoteCommits)
            .withWorkerPool(manifestWorkers);
    this.executor =
        new RefreshExecutor(
            new ViewRefresher(
                catalogs::catalog,
                hooks,
                // A refresh commits only the definition in force (DESIGN §3.6).
                view ->
                    views
                        .view(view.name())
                        .filter(current -> current.version().equals(view.version()))
                        .isPresent(),
                scans,
                manifests,
                new DimensionTables(config.getLong(FloeConfig.JOIN_DIMENSION_BYTES), manifests)),
            config.getInt(FloeConfig.REFRESH_THREADS));
    this.io = ThreadPools.newFixedThreadPool("floe-io", config.getInt(FloeConfig.IO_THREADS));
    this.globalDeadLetters =
        new GlobalDeadLetters(config.clientProperties(), config.topics().dlq());
    startup.ended("set-up");
  }

  /**
   * The topology this service runs, on the partitions of the application's topics once {@link
   * #start} has looked at them.
   */
  public Topology topology() {
    return FloeTopology.build(
        config.topologySettings().withPartitions(partitions),
        new TopologyServices(
            catalogs::catalog, views, io, executor, metrics, globalDeadLetters, manifests));
  }

  /**
   * Creates the topics, starts Kafka Streams and publishes the views file.
   *
   * @throws ViewsFileException when the views file cannot be read as views
   */
  public void start() throws InterruptedException, ViewsFileException {
    LOG.info("Starting Floe with configuration {}", config.masked());
    // Read and parsed before anything starts, so that a broken file fails the start at once.
    Path file = config.viewsFile();
    String fileText = file == null ? null : ViewsFile.read(file);
    List<ViewDefinition> fileViews =
        file == null ? null : ViewsFile.parse(file.toString(), fileText);
    preloadStoresLibrary();
    commands = new ViewCommands(config.clientProperties(), config.topics(), config.serdes());
    // The HTTP server starts while the topics are set up: the one waits for the broker, the other
    // loads the web server's classes, and only Kafka Streams needs both.
    CompletableFuture<HttpApi> httpStart =
        httpAccess == null
            ? CompletableFuture.completedFuture(null)
            : CompletableFuture.supplyAsync(
                this::startHttp, runnable -> startThread(runnable, "floe-http-start"));
    try (Admin admin = Admin.create(config.clientProperties())) {
      partitions = TopicSetup.ensure(admin, config);
    } catch (RuntimeException | InterruptedException e) {
      httpStart.thenAccept(
          server -> {
            if (server != null) {
              server.close();
            }
          });
      throw e;
    }
    http = joinStart(httpStart);
    startup.ended(http == null ? "topics" : "topics and HTTP");
    Properties streamsProperties = config.streamsProperties();
    // An object, not a setting: Floe's deserialization handler counts its dead letters here.
    streamsProperties.put(DeadLetterDeserializationHandler.METRICS_CONFIG, metrics);
    if (http != null) {
      // Other instances reach this one's view states through its HTTP server.
      streamsProperties.putIfAbsent(
          StreamsConfig.APPLICATION_SERVER_CONFIG,
          config.getString(FloeConfig.HTTP_ADVERTISED_HOST) + ":" + http.port());
    }
    streams = new KafkaStreams(topology(), streamsProperties);
    startup.ended("topology");
    metrics.bind(streams);
    streams.setUncaughtExceptionHandler(
        error -> {
          LOG.error("Floe stops: unrecoverable error in a stream thread", error);
          failure.compareAndSet(null, error);
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    streams.setStateListener(
        (now, before) -> {
          LOG.info("Kafka Streams {} -> {}", before, now);
          settled.changed(now);
          if (now == KafkaStreams.State.RUNNING) {
            startup
                .running()
                .ifPresent(
                    line -> {
                      LOG.info(line);
                      warmUp();
                    });
          }
          if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
            stopped.countDown();
          }
        });
    if (http != null) {
      http.attach(
          streams,
          HostInfo.buildFromEndpoint(
              streamsProperties.getProperty(StreamsConfig.APPLICATION_SERVER_CONFIG)),
          new StreamsConfig(streamsProperties)
              .getLong(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG));
    }
    streams.start();
    startup.streamsStarted("Kafka Streams start");
    // While Kafka Streams joins its group: validating the views (catalog loads, the SQL front
    // end's first use) takes seconds in a new JVM, and the topology applies views whenever they
    // arrive on the views topic.
    if (file != null) {
      new ViewsPublisher(config.clientProperties(), config.topics().views(), config.serdes())
          .publish(fileViews, catalogs);
      startup.ended("views file");
    }
    long reload = config.getLong(FloeConfig.VIEWS_RELOAD_INTERVAL_MS);
    if (file != null && reload > 0) {
      ViewsPublisher publisher =
          new ViewsPublisher(config.clientProperties(), config.topics().views(), config.serdes());
      watcher = new ViewsFileWatcher(file, fileText, views -> publisher.publish(views, catalogs));
      watcher.start(Duration.ofMillis(reload));
    }
  }

  /**
   * Warms the engine up ({@link EngineWarmup}) on a thread of its own once Kafka Streams runs, so
   * that it costs readiness nothing, in rounds taken only while no refresh has run and Kafka
   * Streams has run without a rebalance for {@link #WARM_UP_QUIET} ({@link StreamsSettled}): a
   * restarted instance catches up first (the warm-up of a new JVM shared 2 cores with the catch-up
   * for 18-50 s), and an instance whose refreshes never pause warms up through them. A failure
   * costs only the warm-up.
   */
  private void warmUp() {
    int rows = config.getInt(FloeConfig.WARM_UP_ROWS);
    if (rows == 0) {
      return;
    }
    Thread thread =
        new Thread(
            () -> {
              long begin = System.nanoTime();
              long[] waited = {0};
              try {
                EngineWarmup.runBetween(
                    rows,
                    () -> {
                      long from = System.nanoTime();
                      do {
                        settled.awaitRunningFor(WARM_UP_QUIET);
                        executor.awaitQuiet(WARM_UP_QUIET);
                      } while (!settled.hasRunFor(WARM_UP_QUIET));
                      waited[0] += System.nanoTime() - from;
                    });
                long total = System.nanoTime() - begin;
                LOG.info(
                    "Engine warmed up on {} synthetic rows in {} ms, after {} ms of waiting for"
                        + " the refreshes and the group to pause",
                    rows,
                    TimeUnit.NANOSECONDS.toMillis(total - waited[0]),
                    TimeUnit.NANOSECONDS.toMillis(waited[0]));
              } catch (InterruptedException e) {
                LOG.info("Engine warm-up stopped: Floe is stopping");
              } catch (RuntimeException e) {
                if (closed.get()) {
                  // Stopping pulls Iceberg's worker pools from under it: nothing failed.
                  LOG.info("Engine warm-up stopped: Floe is stopping");
                } else {
                  LOG.warn(
                      "Engine warm-up failed; the first refresh compiles the engine instead", e);
                }
              }
            },
            "floe-warm-up");
    thread.setDaemon(true);
    warmUpThread = thread;
    thread.start();
  }

  private HttpApi startHttp() {
    if (httpAccess.isOpen()) {
      LOG.warn(
          "{}={}: the HTTP API on {}:{} changes views, drops tables and shows catalog schemas"
              + " for anyone who reaches it, without a token",
          FloeConfig.HTTP_AUTH,
          FloeConfig.HTTP_AUTH_NONE,
          config.getString(FloeConfig.HTTP_HOST),
          config.getInt(FloeConfig.HTTP_PORT));
    }
    notices = new CommitNotices(config, "floe-http");
    return HttpApi.start(
        config.getString(FloeConfig.HTTP_HOST),
        config.getInt(FloeConfig.HTTP_PORT),
        catalogs,
        commands,
        notices,
        metrics,
        httpAccess,
        views,
        config.maxStaleness());
  }

  /**
   * Loads RocksDB's native library on a thread of its own, while the topics are set up and the
   * views file is read. Kafka Streams would load it when it opens its first store, on the stream
   * thread, between the group's assignment and RUNNING: RocksDB then extracts a native library of
   * tens of MiB from its jar into the temporary directory and links it, 0.3 s of a start on a quiet
   * machine and seconds on a busy one. Kafka Streams' own load waits for this one; should this
   * fail, Kafka Streams fails the same way when it opens that store.
   */
  private void preloadStoresLibrary() {
    storesLibrary =
        CompletableFuture.runAsync(
                RocksDB::loadLibrary, runnable -> startThread(runnable, "floe-rocksdb-load"))
            .exceptionally(
                error -> {
                  LOG.debug("Cannot preload RocksDB's native library", error);
                  return null;
                });
  }

  /** RocksDB's native library loaded ahead of Kafka Streams' first store, once started. */
  CompletableFuture<Void> storesLibrary() {
    return storesLibrary;
  }

  private static void startThread(Runnable runnable, String name) {
    Thread thread = new Thread(runnable, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** The started server, or the start's own error, unwrapped, as if it had run on this thread. */
  private static HttpApi joinStart(CompletableFuture<HttpApi> start) {
    try {
      return start.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** The HTTP port, or -1 when the HTTP server is disabled. */
  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  public FloeMeters metrics() {
    return metrics;
  }

  public KafkaStreams streams() {
    return streams;
  }

  /** The views in force, as this instance knows them. */
  public ViewIndex views() {
    return views;
  }

  public RefreshExecutor refreshes() {
    return executor;
  }

  /** Blocks until the service stops; returns 0 after a requested stop, 1 after a failure. */
  public int awaitTermination() throws InterruptedException {
    stopped.await();
    return failure.get() == null ? 0 : 1;
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    LOG.info("Stopping Floe");
    stopWarmUp();
    if (watcher != null) {
      watcher.close();
    }
    if (streams != null) {
      streams.close(
          CloseOptions.timeout(Duration.ofSeconds(30))
              .withGroupMembershipOperation(
                  config.isStaticMember()
                      ? CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP
                      : CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
    }
    globalDeadLetters.close();
    if (http != null) {
      http.close();
    }
    if (commands != null) {
      commands.close();
    }
    if (notices != null) {
      notices.close();
    }
    try {
      executor.close();
      scans.shutdownNow();
      io.shutdownNow(); // Before the pool its detections read ahead on.
      remoteReads.shutdownNow();
      remoteCommits.shutdownNow();
      manifestWorkers.shutdownNow();
      catalogs.close();
    } catch (Exception e) {
      LOG.warn("Error while stopping", e);
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
    stopped.countDown();
  }

  /** A warm-up waiting for its next round would otherwise outlive the service in its JVM. */
  private void stopWarmUp() {
    Thread thread = warmUpThread;
    if (thread != null) {
      thread.interrupt();
    }
  }

  /**
   * Stops abruptly, as a crash would: no final commit, no clean shutdown of the stream threads'
   * transactions. For fault tests.
   */
  public void crash() {
    closed.set(true);
    stopWarmUp();
    if (streams != null) {
      streams.close(Duration.ZERO);
    }
    globalDeadLetters.close();
    if (http != null) {
      http.close();
    }
    stopped.countDown();
  }
}
