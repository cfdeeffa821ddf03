package io.floe.app.service;

import io.floe.app.config.FloeConfig;
import io.floe.topology.FloeTopology;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates Floe's topics when they are missing; existing topics are left as they are. */
final class TopicSetup {

  private static final Logger LOG = LoggerFactory.getLogger(TopicSetup.class);

  private TopicSetup() {}

  static void ensure(Admin admin, FloeConfig config) throws InterruptedException {
    FloeTopology.Topics topics = config.topics();
    int partitions = config.getInt(FloeConfig.TOPIC_PARTITIONS);
    short replication = config.getShort(FloeConfig.TOPIC_REPLICATION_FACTOR);
    Optional<Short> replicationFactor =
        replication < 0 ? Optional.empty() : Optional.of(replication);
    Set<String> existing;
    try {
      existing = admin.listTopics().names().get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot list Kafka topics: " + e.getCause().getMessage(), e);
    }
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
    if (missing.isEmpty()) {
      return;
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
  }
}
