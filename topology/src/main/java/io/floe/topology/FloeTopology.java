package io.floe.topology;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewCommand;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.ingest.WatchedTableLocations;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.processor.DeadLetterSink;
import io.floe.topology.processor.DetectDirtyBucketsProcessor;
import io.floe.topology.processor.EventRecords;
import io.floe.topology.processor.FloeMetrics;
import io.floe.topology.processor.IngestCommitEventsProcessor;
import io.floe.topology.processor.MaintainViewProcessor;
import io.floe.topology.processor.ResolveSnapshotsProcessor;
import io.floe.topology.processor.ViewPartitioner;
import io.floe.topology.processor.ViewsStoreUpdater;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * Floe's Kafka Streams topology (DESIGN §2), built by a pure function that {@code floe run} and the
 * tests both call:
 *
 * <pre>
 * floe.commits ─► resolve-snapshots [table-cursors] ─► floe.snapshots   (dead letters ─► floe.dlq)
 * floe.snapshots ─► detect-dirty-buckets [views] ─┬─► dirty-buckets (repartition by view)
 * floe.requests ─────────────────────────────────┘
 *   ─► maintain-views [view-state, views] ─► floe.refreshes, and target notices ─► floe.commits
 * floe.views ─► views (global store)                (dead letters ─► the global dead-letter sink)
 * </pre>
 *
 * Records of Floe's stream topics that cannot be deserialized are dead-lettered by {@link
 * io.floe.topology.processor.DeadLetterDeserializationHandler}, configured in Kafka Streams.
 *
 * <p>Every node, store and repartition topic has a stable explicit name.
 */
public final class FloeTopology {

  /**
   * Topic settings of the stores' changelogs (compacted, as Kafka Streams makes them). A view's
   * state is rewritten at every refresh, several times a second; with Kafka's default week-long
   * segments the cleaner never reaches those rewrites, and an instance that rebuilds a store (a new
   * pod, a lost volume, a crash under exactly-once) replays all of them. Ten-minute segments
   * cleaned at 10% dirt bound a rebuild by the live keys plus about ten minutes of updates. They
   * apply when Kafka Streams creates a changelog; existing changelogs keep their settings.
   */
  static final Map<String, String> CHANGELOG_CONFIG =
      Map.of(
          TopicConfig.SEGMENT_MS_CONFIG,
          Long.toString(Duration.ofMinutes(10).toMillis()),
          TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG,
          "0.1");

  private FloeTopology() {}

  /** Topic names. */
  public record Topics(
      String commits,
      String snapshots,
      String refreshes,
      String views,
      String requests,
      String dlq) {

    public static final Topics DEFAULTS =
        new Topics(
            "floe.commits",
            "floe.snapshots",
            "floe.refreshes",
            "floe.views",
            "floe.requests",
            "floe.dlq");
  }

  /**
   * Topics of commit events Floe does not produce itself (Lakekeeper CloudEvents, S3 bucket
   * notifications, notices of writers' metrics reporters), normalized onto floe.commits.
   *
   * @param topics the topics; none for no ingest stage
   * @param lakekeeperCatalog the Floe catalog Lakekeeper's events refer to, or null
   */
  public record Events(List<String> topics, String lakekeeperCatalog) {

    public static final Events NONE = new Events(List.of(), null);

    public Events {
      topics = List.copyOf(topics);
    }
  }

  /**
   * What the topology is built with.
   *
   * @param topics topic names
   * @param partitions partitions of the dirty-buckets repartition topic (and of Floe's topics)
   * @param tick how often the maintain stage starts due refreshes and collects finished ones
   * @param maxBackoff the longest wait before a failing view is retried
   * @param serdes how record values are encoded: Avro single-object or the Schema Registry format
   * @param events the topics of commit events in other formats, and how to read them
   */
  public record Settings(
      Topics topics,
      int partitions,
      Duration tick,
      Duration maxBackoff,
      FloeSerdes serdes,
      Events events) {

    public Settings {
      Objects.requireNonNull(topics, "topics");
      Objects.requireNonNull(serdes, "serdes");
      events = events == null ? Events.NONE : events;
      if (partitions < 1) {
        throw new IllegalArgumentException("partitions must be at least 1");
      }
    }

    /** These settings on {@code partitions} partitions. */
    public Settings withPartitions(int partitions) {
      return new Settings(topics, partitions, tick, maxBackoff, serdes, events);
    }

    public static Settings defaults() {
      return new Settings(
          Topics.DEFAULTS,
          1,
          Duration.ofMillis(200),
          Duration.ofMinutes(5),
          FloeSerdes.singleObject(),
          Events.NONE);
    }
  }

  /**
   * What the topology's processors work with, shared by every stream thread.
   *
   * @param catalogs the Iceberg catalog of each catalog name in view table names
   * @param views the index of the views in force, which the topology keeps equal to floe.views
   * @param io the executor of catalog and manifest reads (snapshot walks, detection, pins), so that
   *     no stream thread waits for Iceberg
   * @param refreshes runs refreshes on Floe's own threads
   * @param metrics what the topology reports as it works
   * @param globalDeadLetters where the global views processor sends the records of floe.views that
   *     do not decode: the global thread has no producer of its own
   * @param manifests where detection reads the manifests of a table on a remote store ahead of its
   *     walk ({@link ManifestWork#readAhead}); {@link ManifestWork#LOCAL_READS} when null
   */
  public record Services(
      Function<String, Catalog> catalogs,
      ViewIndex views,
      Executor io,
      RefreshExecutor refreshes,
      FloeMetrics metrics,
      DeadLetterSink globalDeadLetters,
      ManifestWork manifests) {

    public Services {
      Objects.requireNonNull(catalogs, "catalogs");
      Objects.requireNonNull(views, "views");
      Objects.requireNonNull(io, "io");
      Objects.requireNonNull(refreshes, "refreshes");
      metrics = metrics == null ? FloeMetrics.NONE : metrics;
      globalDeadLetters = globalDeadLetters == null ? DeadLetterSink.NONE : globalDeadLetters;
      manifests = manifests == null ? ManifestWork.LOCAL_READS : manifests;
    }

    /** Services whose dead letters of floe.views are only logged and counted. */
    public Services(
        Function<String, Catalog> catalogs,
        ViewIndex views,
        Executor io,
        RefreshExecutor refreshes,
        FloeMetrics metrics) {
      this(catalogs, views, io, refreshes, metrics, DeadLetterSink.NONE, ManifestWork.LOCAL_READS);
    }
  }

  /**
   * The repartition topic by view, whose partitions decide which task owns a view; Kafka Streams
   * names it after the application id.
   */
  private static final String DIRTY_BUCKETS = "dirty-buckets";

  /** The dirty-buckets repartition topic of the application {@code applicationId}. */
  public static String dirtyBucketsTopic(String applicationId) {
    return applicationId + "-" + DIRTY_BUCKETS + "-repartition";
  }

  /** Builds the topology; no I/O happens until Kafka Streams runs it. */
  public static Topology build(Settings settings, Services services) {
    Topics topics = settings.topics();
    FloeSerdes serdes = settings.serdes();
    Function<String, Catalog> catalogs = services.catalogs();
    FloeMetrics metrics = services.metrics();
    StreamsBuilder builder = new StreamsBuilder();

    // In memory, so that every start reads floe.views through the updater into the index.
    builder.addGlobalStore(
        Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore(StoreNames.VIEWS),
                Serdes.String(),
                serdes.viewRecord())
            .withLoggingDisabled(),
        topics.views(),
        // Bytes, decoded by the updater: a record the global thread cannot deserialize would end
        // it (see DeadLetterDeserializationHandler).
        Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(ViewsStoreUpdater.NAME),
        () ->
            new ViewsStoreUpdater(
                services.views(),
                serdes.viewRecord().deserializer(),
                services.globalDeadLetters(),
                metrics));
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.TABLE_CURSORS),
                Serdes.String(),
                JsonSerde.of(TableCursor.class))
            .withLoggingEnabled(CHANGELOG_CONFIG));
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.DETECT_QUEUE),
                Serdes.String(),
                JsonSerde.of(QueuedSnapshots.class))
            .withLoggingEnabled(CHANGELOG_CONFIG));
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.VIEW_STATE),
                Serdes.String(),
                JsonSerde.of(ViewState.class))
            .withLoggingEnabled(CHANGELOG_CONFIG));

    // ingest: commit events of other shapes -> notices on floe.commits, keyed by table.
    if (!settings.events().topics().isEmpty()) {
      builder.stream(
              settings.events().topics(),
              Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("events-source"))
          .process(
              () ->
                  new IngestCommitEventsProcessor(
                      serdes.tableCommitted().deserializer(),
                      settings.events().lakekeeperCatalog(),
                      settings.tick(),
                      new WatchedTableLocations(services.views(), catalogs, services.io()),
                      metrics),
              Named.as(IngestCommitEventsProcessor.NAME))
          .split(Named.as("ingested-"))
          .branch(
              (table, value) -> value instanceof TableCommitted,
              Branched.withConsumer(
                  notices ->
                      notices
                          .mapValues(v -> (TableCommitted) v, Named.as("as-ingested-notice"))
                          .to(
                              topics.commits(),
                              Produced.with(Serdes.String(), serdes.tableCommitted())
                                  .withName("ingested-commits-sink")),
                  "notices"))
          .defaultBranch(
              Branched.withConsumer(
                  deadLetters ->
                      deadLetters
                          .mapValues(v -> (byte[]) v, Named.as("as-ingest-dead-letter"))
                          .to(
                              topics.dlq(),
                              Produced.with(Serdes.String(), Serdes.ByteArray())
                                  .withName("ingest-dlq-sink")),
                  "dead-letters"));
    }

    // resolve: commit notices -> one event per snapshot, in commit order per table.
    builder.stream(
            topics.commits(),
            Consumed.with(Serdes.String(), serdes.tableCommitted()).withName("commits-source"))
        .process(
            () ->
                new ResolveSnapshotsProcessor(
                    catalogs,
                    services.views(),
                    services.io(),
                    settings.tick(),
                    metrics,
                    topics.commits(),
                    serdes.tableCommitted().serializer()),
            Named.as(ResolveSnapshotsProcessor.NAME),
            StoreNames.TABLE_CURSORS)
        .split(Named.as("resolved-"))
        .branch(
            (table, value) -> value instanceof SnapshotEvent,
            Branched.withConsumer(
                snapshots ->
                    snapshots
                        .mapValues(v -> (SnapshotEvent) v, Named.as("as-snapshot-event"))
                        .to(
                            topics.snapshots(),
                            Produced.with(Serdes.String(), serdes.snapshotEvent())
                                .withName("snapshots-sink")),
                "snapshots"))
        .branch(
            (table, value) -> value instanceof ViewCommand,
            Branched.withConsumer(
                commands ->
                    commands
                        .mapValues(v -> (ViewCommand) v, Named.as("as-view-command"))
                        .to(
                            topics.requests(),
                            Produced.with(Serdes.String(), serdes.viewCommand())
                                .withName("source-gone-requests-sink")),
                "requests"))
        .defaultBranch(
            Branched.withConsumer(
                deadLetters ->
                    deadLetters
                        .mapValues(v -> (byte[]) v, Named.as("as-resolve-dead-letter"))
                        .to(
                            topics.dlq(),
                            Produced.with(Serdes.String(), Serdes.ByteArray())
                                .withName("resolve-dlq-sink")),
                "dead-letters"));

    // detect -> maintain, repartitioned by view, with the users' refresh requests.
    KStream<String, DirtyUpdate> requests =
        builder.stream(
                topics.requests(),
                Consumed.with(Serdes.String(), serdes.viewCommand()).withName("requests-source"))
            .filter((view, command) -> view != null && command != null, Named.as("valid-requests"))
            .mapValues(EventRecords::request, Named.as("as-refresh-request"));
    KStream<String, Object> maintained =
        builder.stream(
                topics.snapshots(),
                Consumed.with(Serdes.String(), serdes.snapshotEvent()).withName("snapshots-source"))
            .process(
                () ->
                    new DetectDirtyBucketsProcessor(
                        catalogs,
                        services.views(),
                        services.io(),
                        services.manifests(),
                        settings.tick()),
                Named.as(DetectDirtyBucketsProcessor.NAME),
                StoreNames.DETECT_QUEUE)
            .merge(requests, Named.as("with-requests"))
            .repartition(
                Repartitioned.<String, DirtyUpdate>as(DIRTY_BUCKETS)
                    .withKeySerde(Serdes.String())
                    .withValueSerde(JsonSerde.of(DirtyUpdate.class))
                    .withStreamPartitioner(ViewPartitioner.INSTANCE)
                    .withNumberOfPartitions(settings.partitions()))
            .process(
                () ->
                    new MaintainViewProcessor(
                        services.refreshes(),
                        catalogs,
                        services.views(),
                        services.io(),
                        metrics,
                        settings.partitions(),
                        settings.tick(),
                        settings.maxBackoff()),
                Named.as(MaintainViewProcessor.NAME),
                StoreNames.VIEW_STATE);

    maintained
        .split(Named.as("maintained-"))
        .branch(
            (view, value) -> value instanceof RefreshEvent,
            Branched.withConsumer(
                events ->
                    events
                        .mapValues(v -> (RefreshEvent) v, Named.as("as-refresh-event"))
                        .to(
                            topics.refreshes(),
                            Produced.with(Serdes.String(), serdes.refreshEvent())
                                .withName("refreshes-sink")),
                "refreshes"))
        .defaultBranch(
            Branched.withConsumer(
                notices ->
                    notices
                        .mapValues(v -> (TableCommitted) v, Named.as("as-target-commit"))
                        .to(
                            topics.commits(),
                            Produced.with(Serdes.String(), serdes.tableCommitted())
                                .withName("target-commits-sink")),
                "target-commits"));

    return builder.build();
  }
}
