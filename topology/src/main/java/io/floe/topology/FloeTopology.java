package io.floe.topology;

import io.floe.schemas.FloeSerdes;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewCommand;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.processor.DetectDirtyBucketsProcessor;
import io.floe.topology.processor.EventRecords;
import io.floe.topology.processor.IngestCommitEventsProcessor;
import io.floe.topology.processor.MaintainViewProcessor;
import io.floe.topology.processor.ResolveSnapshotsProcessor;
import io.floe.topology.processor.TopologyServices;
import io.floe.topology.processor.TopologySettings;
import io.floe.topology.processor.TopologySettings.Topics;
import io.floe.topology.processor.ViewPartitioner;
import io.floe.topology.processor.ViewsStoreUpdater;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.JsonSerde;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.TableCursor;
import java.time.Duration;
import java.util.Map;
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
  public static Topology build(TopologySettings settings, TopologyServices services) {
    Topics topics = settings.topics();
    FloeSerdes serdes = settings.serdes();
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
        () -> new ViewsStoreUpdater(settings, services));
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
              () -> new IngestCommitEventsProcessor(settings, services),
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
            () -> new ResolveSnapshotsProcessor(settings, services),
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
                () -> new DetectDirtyBucketsProcessor(settings, services),
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
                () -> new MaintainViewProcessor(settings, services),
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
