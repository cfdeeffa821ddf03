package io.floe.app.service;

import io.floe.app.config.FloeConfig;
import io.floe.topology.FloeTopology;
import io.floe.topology.processor.TopologySettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates Floe's topics when they are missing, and a new application's dirty-buckets repartition
 * topic before Kafka Streams would; existing topics are left as they are. Works out the partitions
 * the topology runs with: those of the application's dirty-buckets topic once it has run, since
 * they decide which task owns a view.
 */
final class TopicSetup {

  private static final Logger LOG = LoggerFactory.getLogger(TopicSetup.class);

  private TopicSetup() {}

  /**
   * Creates the missing topics.
   *
   * @return the partitions of the topology: {@value FloeConfig#TOPIC_PARTITIONS}, or those of the
   *     dirty-buckets topic of an application that has run
   */
  static int ensure(Admin admin, FloeConfig config) throws InterruptedException {
    TopologySettings.Topics topics = config.topics();
    short replication = config.getShort(FloeConfig.TOPIC_REPLICATION_FACTOR);
    Optional<Short> replicationFactor =
        replication < 0 ? Optional.empty() : Optional.of(replication);
    Set<String> existing;
    try {
      existing = admin.listTopics().names().get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot list Kafka topics: " + e.getCause().getMessage(), e);
    }
    String applicationId =
        config.streamsProperties().getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
    String dirtyBuckets = FloeTopology.dirtyBucketsTopic(applicationId);
    int partitions = partitions(admin, config, existing, applicationId, dirtyBuckets);
    List<NewTopic> missing = new ArrayList<>();
    List<String> plain =
        new ArrayList<>(
            List.of(
                topics.commits(),
                topics.snapshots(),
                topics.refreshes(),
                topics.requests(),
                topics.dlq()));
    // Event topics usually belong to their producers; create them only so that Floe can start
    // first.
    plain.addAll(config.topologySettings().events().topics());
    for (String topic : plain) {
      if (!existing.contains(topic)) {
        missing.add(new NewTopic(topic, Optional.of(partitions), replicationFactor));
      }
    }
    if (!existing.contains(topics.views())) {
      missing.add(
          new NewTopic(topics.views(), Optional.of(partitions), replicationFactor)
              .configs(
                  Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT)));
    }
    if (!existing.contains(dirtyBuckets)) {
      missing.add(repartitionTopic(dirtyBuckets, partitions, config));
    }
    if (missing.isEmpty()) {
      return partitions;
    }
    try {
      admin.createTopics(missing).all().get();
      LOG.info("Created topics {}", missing.stream().map(NewTopic::name).toList());
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException(
            "Cannot create Floe's topics: " + e.getCause().getMessage(), e);
      }
    }
    return partitions;
  }

  /**
   * The dirty-buckets repartition topic of a new application, as Kafka Streams would create it
   * ({@code RepartitionTopicConfig}: deleted, never by age, in segments of 50 MiB, with the
   * replication factor and {@code topic.} settings of the Streams configuration). Created here,
   * before Kafka Streams starts, so that the group's first rebalance finds it: created by the
   * rebalance's leader, it changed the metadata the consumer joined with, and the group rebalanced
   * a second time before it ran (0.3 s of a first start on a quiet machine, 4 s at a load of 40 on
   * 2 cores).
   */
  private static NewTopic repartitionTopic(String name, int partitions, FloeConfig config) {
    StreamsConfig streams = new StreamsConfig(config.streamsProperties());
    int replication = streams.getInt(StreamsConfig.REPLICATION_FACTOR_CONFIG);
    Map<String, String> configs = new HashMap<>();
    configs.put(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "CreateTime");
    configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE);
    configs.put(TopicConfig.SEGMENT_BYTES_CONFIG, Integer.toString(50 * 1024 * 1024));
    configs.put(TopicConfig.RETENTION_MS_CONFIG, "-1");
    streams
        .originalsWithPrefix(StreamsConfig.TOPIC_PREFIX)
        .forEach((key, value) -> configs.put(key, String.valueOf(value)));
    return new NewTopic(
            name,
            Optional.of(partitions),
            replication < 0 ? Optional.empty() : Optional.of((short) replication))
        .configs(configs);
  }

  /**
   * The configured partitions for a new application; the dirty-buckets topic's for one that has
   * run: Kafka Streams refuses an internal topic whose partitions differ from the topology's, and
   * views are owned by their key's partition of that topic.
   */
  private static int partitions(
      Admin admin,
      FloeConfig config,
      Set<String> existing,
      String applicationId,
      String dirtyBuckets)
      throws InterruptedException {
    int configured = config.getInt(FloeConfig.TOPIC_PARTITIONS);
    if (!existing.contains(dirtyBuckets)) {
      return configured;
    }
    int deployed;
    try {
      deployed =
          admin
              .describeTopics(List.of(dirtyBuckets))
              .allTopicNames()
              .get()
              .get(dirtyBuckets)
              .partitions()
              .size();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "Cannot describe topic " + dirtyBuckets + ": " + e.getCause().getMessage(), e);
    }
    if (deployed != configured) {
      LOG.warn(
          "{}={}, but application {} has run with {} partitions ({}): it keeps {}, which decide"
              + " which instance owns each view; a deployment grows under a new application id"
              + " (see the README, Scaling out)",
          FloeConfig.TOPIC_PARTITIONS,
          configured,
          applicationId,
          deployed,
          dirtyBuckets,
          deployed);
    }
    return deployed;
  }
}
