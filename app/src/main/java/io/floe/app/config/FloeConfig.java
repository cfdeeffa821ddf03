package io.floe.app.config;

import io.floe.schemas.FloeSerdes;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.processor.DeadLetterDeserializationHandler;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.store.BoundedRocksDbMemory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Floe's configuration: a properties file whose {@code floe.*} keys are declared here, once each,
 * with type, default, validator and documentation; whose {@code floe.catalog.<name>.*} keys
 * configure Iceberg catalogs ({@link CatalogConfig}); and whose other keys pass unchanged to Kafka
 * Streams and its clients. Values may come from Kafka config providers ({@code
 * config.providers=env}, then {@code ${env:VARIABLE}}), which keeps secrets out of the file.
 */
public final class FloeConfig extends AbstractConfig {

  public static final String VIEWS_FILE = "floe.views.file";
  public static final String TOPIC_COMMITS = "floe.topic.commits";
  public static final String TOPIC_SNAPSHOTS = "floe.topic.snapshots";
  public static final String TOPIC_REFRESHES = "floe.topic.refreshes";
  public static final String TOPIC_VIEWS = "floe.topic.views";
  public static final String TOPIC_REQUESTS = "floe.topic.requests";
  public static final String TOPIC_DLQ = "floe.topic.dlq";
  public static final String EVENTS_TOPICS = "floe.events.topics";
  public static final String EVENTS_LAKEKEEPER_CATALOG = "floe.events.lakekeeper.catalog";
  public static final String VIEWS_RELOAD_INTERVAL_MS = "floe.views.reload-interval.ms";
  public static final String HTTP_ENABLED = "floe.http.enabled";
  public static final String HTTP_HOST = "floe.http.host";
  public static final String HTTP_PORT = "floe.http.port";
  public static final String HTTP_ADVERTISED_HOST = "floe.http.advertised-host";
  public static final String HTTP_TOKEN = "floe.http.token";
  public static final String HTTP_AUTH = "floe.http.auth";

  /** {@link #HTTP_AUTH}: guarded endpoints need the token, unless bound to loopback. */
  public static final String HTTP_AUTH_TOKEN = "token";

  /** {@link #HTTP_AUTH}: every endpoint is open, on any address. */
  public static final String HTTP_AUTH_NONE = "none";

  public static final String TOPIC_PARTITIONS = "floe.topic.partitions";
  public static final String TOPIC_REPLICATION_FACTOR = "floe.topic.replication-factor";
  public static final String REFRESH_THREADS = "floe.refresh.threads";
  public static final String IO_THREADS = "floe.io.threads";
  public static final String WARM_UP_ROWS = "floe.warm-up.rows";
  public static final String REFRESH_MAX_BACKOFF_MS = "floe.refresh.max-backoff.ms";
  public static final String MAINTAIN_TICK_MS = "floe.maintain.tick.ms";
  public static final String REFRESH_MAX_STALENESS_MS = "floe.refresh.max-staleness.ms";
  public static final String STATE_MEMORY_BYTES = BoundedRocksDbMemory.BYTES_CONFIG;
  public static final String CACHE_BYTES = FileCaches.BYTES_CONFIG;
  public static final String JOIN_DIMENSION_BYTES = DimensionTables.BYTES_CONFIG;

  /** The stream threads' producers' transaction timeout, as Kafka Streams names and checks it. */
  static final String TRANSACTION_TIMEOUT_MS =
      StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);

  /** Streams settings Floe chooses unless the file sets them. */
  static final Map<String, String> STREAMS_DEFAULTS =
      Map.ofEntries(
          Map.entry(StreamsConfig.APPLICATION_ID_CONFIG, "floe"),
          Map.entry(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2),
          Map.entry(StreamsConfig.STATE_DIR_CONFIG, "floe-state"),
          // Undecodable records go to floe.dlq with Floe's dead-letter headers, counted.
          Map.entry(
              StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
              DeadLetterDeserializationHandler.class.getName()),
          Map.entry(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, "true"),
          // A lost instance's views move to the others within seconds, not the consumer's 45 s:
          // freshness is the product. 6 s is the least a broker accepts by default
          // (group.min.session.timeout.ms); at 10 s a kill -9 and restart waited out the dead
          // member for 10.3 s before the new process was given its tasks (failover bench).
          // Heartbeats stay at a third of it.
          Map.entry(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000"),
          Map.entry(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "2000"),
          // Where more than one instance runs, each task's stores are kept warm on another one,
          // so a failover resumes from local state instead of replaying the changelogs.
          Map.entry(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "1"),
          // A live stream thread whose transaction stays open longer is aborted by the broker
          // and fenced: it closes every task dirty and rejoins the group, a stall of the whole
          // instance. A transaction usually lasts a commit interval (100 ms), but on a starved
          // node it lasts seconds: in a failover bench run at a load of 28 on 2 cores, 7 of 2190
          // transactions ran over 5 s (the longest 8.3 s), and the two the broker checked while
          // open (a 5 s timeout then) fenced the survivor twice during a rolling restart, 16 s
          // of REBALANCING each. A lost instance's open transaction holds back every
          // read_committed reader of what it wrote (the dirty buckets' repartition topic: every
          // task's input) until the broker aborts it, at its first check
          // (transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s) past this
          // timeout; 10 s, Kafka Streams' own default, puts that abort 0-10 s after the session
          // timeout. Under the producer prefix, the key Kafka Streams checks against
          // commit.interval.ms.
          Map.entry(TRANSACTION_TIMEOUT_MS, "10000"),
          // One block cache and memtable budget for every store of the process, of
          // floe.state.memory.bytes, instead of RocksDB's per-store defaults, which grow with the
          // partitions.
          Map.entry(
              StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG,
              BoundedRocksDbMemory.class.getName()));

  public static final ConfigDef DEFINITION =
      new ConfigDef()
          .define(
              VIEWS_FILE,
              Type.STRING,
              null,
              Importance.HIGH,
              "Path of a views file (YAML) loaded at start-up and published to the views topic."
                  + " Relative paths are resolved against the configuration file's directory.")
          .define(
              TOPIC_COMMITS,
              Type.STRING,
              "floe.commits",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Topic of table commit notices (TableCommitted), keyed by table. Floe reads it and"
                  + " writes its own target commits to it.")
          .define(
              TOPIC_SNAPSHOTS,
              Type.STRING,
              "floe.snapshots",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Topic of source snapshots (SnapshotEvent), one per snapshot, in commit order per"
                  + " table.")
          .define(
              TOPIC_REFRESHES,
              Type.STRING,
              "floe.refreshes",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Topic of refresh events (RefreshEvent), one per refresh, keyed by view.")
          .define(
              TOPIC_VIEWS,
              Type.STRING,
              "floe.views",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Compacted topic of view definitions (ViewRecord), keyed by view name: the source"
                  + " of truth shared by all instances.")
          .define(
              TOPIC_REQUESTS,
              Type.STRING,
              "floe.requests",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Topic of requests to refresh a view now (ViewCommand), keyed by view name; the"
                  + " HTTP API writes them.")
          .define(
              VIEWS_RELOAD_INTERVAL_MS,
              Type.LONG,
              5_000L,
              Range.atLeast(0),
              Importance.LOW,
              "How often, in milliseconds, the views file is checked for changes and re-published;"
                  + " a change is published once two consecutive checks read the same content, so"
                  + " that a file caught half-written is never published; 0 reads it only at"
                  + " start-up.")
          .define(
              HTTP_ENABLED,
              Type.BOOLEAN,
              true,
              Importance.MEDIUM,
              "Whether to serve the HTTP API, the web UI, health checks and metrics.")
          .define(
              HTTP_HOST,
              Type.STRING,
              "0.0.0.0",
              Importance.LOW,
              "Address the HTTP server listens on. Unless floe.http.auth=none, an address other than"
                  + " a loopback one (127.0.0.1, ::1, localhost) needs floe.http.token.")
          .define(
              HTTP_PORT,
              Type.INT,
              8080,
              Range.between(0, 65535),
              Importance.MEDIUM,
              "Port of the HTTP server; 0 picks a free port.")
          .define(
              HTTP_ADVERTISED_HOST,
              Type.STRING,
              "localhost",
              Importance.MEDIUM,
              "Host name other instances use to reach this one's HTTP server for the state of the"
                  + " views it maintains (with the port, Kafka Streams' application.server unless"
                  + " that is set). In Kubernetes, the pod IP.")
          .define(
              HTTP_TOKEN,
              Type.PASSWORD,
              null,
              Importance.HIGH,
              "Bearer token that the guarded endpoints require (every request that changes"
                  + " something, view details and validation, which show catalog schemas): send it"
                  + " as 'Authorization: Bearer <token>'. Required unless the server is bound to a"
                  + " loopback address or floe.http.auth=none. Give it through a config provider,"
                  + " e.g. ${env:FLOE_HTTP_TOKEN}. Never logged.")
          .define(
              HTTP_AUTH,
              Type.STRING,
              HTTP_AUTH_TOKEN,
              ConfigDef.ValidString.in(HTTP_AUTH_TOKEN, HTTP_AUTH_NONE),
              Importance.MEDIUM,
              "Who may call the guarded endpoints. token: holders of floe.http.token; without a"
                  + " token, only clients of a server bound to a loopback address (floe run refuses"
                  + " to start on any other address without a token). none: anyone, on any"
                  + " address, logged at WARN at start-up; only behind something that"
                  + " authenticates. Health checks, metrics and the list of views are always"
                  + " open.")
          .define(
              TOPIC_DLQ,
              Type.STRING,
              "floe.dlq",
              new ConfigDef.NonEmptyString(),
              Importance.MEDIUM,
              "Dead-letter topic: undecodable records of every Floe topic and notices about"
                  + " unknown tables, with the reason, origin and processor in headers.")
          .define(
              EVENTS_TOPICS,
              Type.LIST,
              "",
              Importance.MEDIUM,
              "Topics of commit events in other formats, normalized onto the commits topic:"
                  + " Lakekeeper CloudEvents, S3 or MinIO bucket notifications (a new"
                  + " *.metadata.json under a view source's location), and notices from the"
                  + " Iceberg metrics reporter. Records in an unknown format go to the dead-letter"
                  + " topic.")
          .define(
              EVENTS_LAKEKEEPER_CATALOG,
              Type.STRING,
              null,
              Importance.LOW,
              "The catalog (floe.catalog.<name>) through which Lakekeeper's tables are read, for"
                  + " its CloudEvents. Default: the only catalog, when exactly one is configured.")
          .define(
              TOPIC_PARTITIONS,
              Type.INT,
              12,
              Range.atLeast(1),
              Importance.MEDIUM,
              "Partitions of the topics Floe creates and of its internal dirty-buckets topic:"
                  + " the most instances that can share the work. Fixed once the application"
                  + " has run: an application whose dirty-buckets topic exists keeps that"
                  + " topic's partitions.")
          .define(
              TOPIC_REPLICATION_FACTOR,
              Type.SHORT,
              (short) -1,
              Importance.MEDIUM,
              "Replication factor of the topics Floe creates; -1 uses the broker's default.")
          .define(
              REFRESH_THREADS,
              Type.INT,
              2,
              Range.between(1, 256),
              Importance.MEDIUM,
              "Threads that run refreshes, outside the stream threads.")
          .define(
              IO_THREADS,
              Type.INT,
              4,
              Range.between(1, 256),
              Importance.LOW,
              "Threads that read Iceberg metadata for the stream threads (snapshot walks, manifest"
                  + " reads, pinning a source's current snapshot), so that no stream thread waits"
                  + " for a catalog or an object store inside a transaction.")
          .define(
              WARM_UP_ROWS,
              Type.INT,
              200_000,
              Range.atLeast(0),
              Importance.LOW,
              "Synthetic rows that a new instance, once Kafka Streams first runs, writes and"
                  + " refreshes a view over in memory, on a thread of its own, so that its first"
                  + " large refresh finds the engine's code compiled (a backfill's first chunk in"
                  + " a new JVM ran 5-6x slower than the next ones). It runs in 8 rounds, each"
                  + " once no refresh has run and Kafka Streams has run without a rebalance for"
                  + " 2 s, so that it never delays the refreshes a restarted instance catches up"
                  + " with or the first ones of the tasks a rebalance hands it. 0 turns the"
                  + " warm-up off.")
          .define(
              REFRESH_MAX_BACKOFF_MS,
              Type.LONG,
              300_000L,
              Range.atLeast(1_000),
              Importance.LOW,
              "Longest wait, in milliseconds, before a failing view is retried; the wait doubles"
                  + " from one second up to this.")
          .define(
              REFRESH_MAX_STALENESS_MS,
              Type.LONG,
              300_000L,
              Range.atLeast(1),
              Importance.MEDIUM,
              "The staleness objective, in milliseconds, of every view that sets no"
                  + " refresh.max_staleness of its own: a view whose target has not reflected a"
                  + " source commit for longer counts as stale (status STALE in the API,"
                  + " floe_view_staleness_seconds above floe_view_staleness_objective_seconds).")
          .define(
              MAINTAIN_TICK_MS,
              Type.LONG,
              50L,
              Range.between(10, 60_000),
              Importance.LOW,
              "How often, in milliseconds, due refreshes start and finished refreshes and catalog"
                  + " reads are collected by the stream threads; each look costs only what is"
                  + " due or finished.")
          .define(
              STATE_MEMORY_BYTES,
              Type.LONG,
              128L * 1024 * 1024,
              Range.atLeast(1024 * 1024),
              Importance.LOW,
              "Off-heap memory, in bytes, that all RocksDB state stores of the process share:"
                  + " one block cache that their memtables count against too, whatever the"
                  + " number of partitions. Not used when rocksdb.config.setter is set.")
          .define(
              CACHE_BYTES,
              Type.LONG,
              FileCaches.DEFAULT_BYTES,
              Range.atLeast(0),
              Importance.LOW,
              "Heap, in bytes, that Floe's one cache of files which never change once written"
                  + " takes: the footers of Parquet data files, the data files of at most 64 KiB on"
                  + " a remote store (each read whole with one request, footer and column chunks"
                  + " together), and the content of the table metadata files, manifest lists and"
                  + " manifests of every catalog (up to 8 MiB a file; of a larger one only its"
                  + " length), those Floe reads and those it writes, which its commits and next"
                  + " refreshes read back. Each such file is read once"
                  + " while it fits, instead of by every stage of every refresh: on an object store"
                  + " a read is a request. Iceberg's manifest cache stays off, except for a catalog"
                  + " whose FileIO Floe cannot wrap (catalog-impl without io-impl), which gets it"
                  + " with its share of half these bytes; a catalog that sets"
                  + " io.manifest.cache-enabled or its other keys keeps them. 0 turns the caches"
                  + " off.")
          .define(
              JOIN_DIMENSION_BYTES,
              Type.LONG,
              DimensionTables.BYTES_DEFAULT,
              Range.atLeast(1),
              Importance.LOW,
              "Heap, in bytes, that the hash tables of the dimension tables joined by views "
                  + "take together: each dimension is read at the snapshot a refresh pins into a "
                  + "table of its join keys and the columns the view reads, built once per snapshot "
                  + "and shared by the refreshes that pin it. A dimension whose table alone would "
                  + "take more is rejected, naming the table and this key: at validation when its "
                  + "snapshot's record counts show it cannot fit, at refresh when the rows read pass "
                  + "it.");

  private final Path baseDirectory;
  private final Map<String, String> raw;
  private FloeSerdes serdes;

  private FloeConfig(Map<String, String> properties, Path baseDirectory) {
    super(DEFINITION, properties, resolverProps(properties), false);
    this.baseDirectory = baseDirectory;
    this.raw = Map.copyOf(properties);
    validate();
  }

  private static Map<String, ?> resolverProps(Map<String, String> properties) {
    Map<String, String> providers = new HashMap<>();
    properties.forEach(
        (k, v) -> {
          if (k.startsWith("config.providers")) {
            providers.put(k, v);
          }
        });
    return providers;
  }

  /**
   * Reads and validates a configuration file.
   *
   * @throws ConfigException naming the key and the problem
   */
  public static FloeConfig load(Path file) throws IOException {
    Properties properties = CatalogConfig.readProperties(file);
    Path base = file.toAbsolutePath().getParent();
    return of(properties, base);
  }

  /**
   * The catalogs of a configuration file, its config providers applied as {@link #load} applies
   * them, without the checks of a service configuration: {@code floe validate} needs no Kafka.
   *
   * @throws ConfigException when a config provider fails
   * @throws IllegalArgumentException naming a malformed catalog key
   */
  public static CatalogConfig loadCatalogs(Path file) throws IOException {
    Properties properties = CatalogConfig.readProperties(file);
    Map<String, String> map = new TreeMap<>();
    properties.stringPropertyNames().forEach(k -> map.put(k, properties.getProperty(k)));
    Properties resolved = new Properties();
    new AbstractConfig(new ConfigDef(), map, resolverProps(map), false)
        .originalsStrings()
        .forEach(resolved::setProperty);
    return CatalogConfig.from(resolved);
  }

  /** A configuration from properties; relative paths resolve against {@code baseDirectory}. */
  public static FloeConfig of(Properties properties, Path baseDirectory) {
    Map<String, String> map = new TreeMap<>();
    properties.stringPropertyNames().forEach(k -> map.put(k, properties.getProperty(k)));
    return new FloeConfig(map, baseDirectory);
  }

  /** Cross-key checks and the keys no ConfigDef declares: unknown floe.* keys are errors. */
  private void validate() {
    for (String key : originalsStrings().keySet()) {
      if (key.startsWith("floe.")
          && !key.startsWith(CatalogConfig.PREFIX)
          && !DEFINITION.names().contains(key)) {
        // Not the value: a misspelt key may well hold a secret.
        throw new ConfigException("Invalid configuration " + key + ": unknown Floe setting");
      }
    }
    if (HTTP_AUTH_NONE.equals(getString(HTTP_AUTH)) && getPassword(HTTP_TOKEN) != null) {
      throw new ConfigException(
          "Cannot set both " + HTTP_AUTH + "=" + HTTP_AUTH_NONE + " and " + HTTP_TOKEN);
    }
    if (!originalsStrings().containsKey(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG)) {
      throw new ConfigException(
          StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, null, "must be set to the Kafka brokers");
    }
    catalogs();
  }

  /** The Iceberg catalogs. */
  public CatalogConfig catalogs() {
    Properties properties = new Properties();
    originalsStrings().forEach(properties::setProperty);
    try {
      return CatalogConfig.from(properties);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(e.getMessage());
    }
  }

  /** The HTTP API's bearer token as configured, or null when none is set. */
  public String httpToken() {
    org.apache.kafka.common.config.types.Password token = getPassword(HTTP_TOKEN);
    return token == null ? null : token.value();
  }

  /** Whether the HTTP API was opened explicitly ({@code floe.http.auth=none}). */
  public boolean isHttpAuthDisabled() {
    return HTTP_AUTH_NONE.equals(getString(HTTP_AUTH));
  }

  /** The value of {@code key} as written in the file, config-provider references unresolved. */
  public String rawValue(String key) {
    return raw.get(key);
  }

  /** The Kafka Streams and client settings: every non-Floe key, over Floe's defaults. */
  public Properties streamsProperties() {
    Properties streams = new Properties();
    streams.putAll(STREAMS_DEFAULTS);
    streams.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, getString(TOPIC_DLQ));
    // For Floe's RocksDB config setter, which sees only the Streams configuration.
    streams.put(STATE_MEMORY_BYTES, Long.toString(getLong(STATE_MEMORY_BYTES)));
    originalsStrings()
        .forEach(
            (key, value) -> {
              if (!key.startsWith("floe.")) {
                streams.put(key, value);
              }
            });
    // A file that sets the plain key sets it for every producer, Floe's default included.
    if (originals().containsKey(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG)
        && !originals().containsKey(TRANSACTION_TIMEOUT_MS)) {
      streams.remove(TRANSACTION_TIMEOUT_MS);
    }
    return streams;
  }

  /**
   * Whether this instance is a static member of the consumer group ({@code group.instance.id} is
   * set, KIP-345): it then stays in the group when it closes, so that a restart within the session
   * timeout gets its own tasks back without a rebalance. Other instances leave on a clean close, so
   * that the rest take their tasks at once.
   */
  public boolean isStaticMember() {
    Properties streams = streamsProperties();
    // Streams gives the main consumer the plain key, overridden by its consumer prefixes.
    return Stream.of(
            StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
            StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
            ConsumerConfig.GROUP_INSTANCE_ID_CONFIG)
        .map(streams::getProperty)
        .filter(Objects::nonNull)
        .findFirst()
        .filter(id -> !id.isBlank())
        .isPresent();
  }

  /** Kafka client settings (bootstrap, security), for Floe's own producer, consumer and admin. */
  public Map<String, Object> clientProperties() {
    Map<String, Object> clients = new HashMap<>();
    originalsStrings()
        .forEach(
            (key, value) -> {
              if (AdminClientConfig.configNames().contains(key)
                  || ProducerConfig.configNames().contains(key)
                  || ConsumerConfig.configNames().contains(key)) {
                clients.put(key, value);
              }
            });
    return clients;
  }

  public TopologySettings.Topics topics() {
    return new TopologySettings.Topics(
        getString(TOPIC_COMMITS),
        getString(TOPIC_SNAPSHOTS),
        getString(TOPIC_REFRESHES),
        getString(TOPIC_VIEWS),
        getString(TOPIC_REQUESTS),
        getString(TOPIC_DLQ));
  }

  /** The staleness objective of views that set none ({@link #REFRESH_MAX_STALENESS_MS}). */
  public Duration maxStaleness() {
    return Duration.ofMillis(getLong(REFRESH_MAX_STALENESS_MS));
  }

  public TopologySettings topologySettings() {
    return new TopologySettings(
        topics(),
        getInt(TOPIC_PARTITIONS),
        Duration.ofMillis(getLong(MAINTAIN_TICK_MS)),
        Duration.ofMillis(getLong(REFRESH_MAX_BACKOFF_MS)),
        serdes(),
        new TopologySettings.Events(getList(EVENTS_TOPICS), lakekeeperCatalog()));
  }

  /** The catalog Lakekeeper's events refer to: as configured, or the only catalog. */
  private String lakekeeperCatalog() {
    String configured = getString(EVENTS_LAKEKEEPER_CATALOG);
    if (configured != null) {
      return configured;
    }
    List<String> names = new ArrayList<>();
    catalogs().names().forEach(names::add);
    return names.size() == 1 ? names.get(0) : null;
  }

  /**
   * How Floe's topic values are encoded: the Schema Registry wire format when {@code
   * schema.registry.url} is set, else Avro single-object encoding.
   */
  public synchronized FloeSerdes serdes() {
    if (serdes == null) {
      try {
        serdes = FloeSerdes.fromConfig(originals());
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
    }
    return serdes;
  }

  /** The views file, resolved against the configuration's directory, or null. */
  public Path viewsFile() {
    String file = getString(VIEWS_FILE);
    if (file == null || file.isBlank()) {
      return null;
    }
    Path path = Path.of(file);
    return path.isAbsolute() || baseDirectory == null ? path : baseDirectory.resolve(path);
  }

  /** The configuration as it is logged: every key, secrets masked ({@link Secrets}). */
  public Map<String, String> masked() {
    return Secrets.masked(raw, originalsStrings());
  }
}
