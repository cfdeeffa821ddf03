package io.floe.topology.processor;

import io.floe.schemas.FloeSerdes;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

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
public record TopologySettings(
    Topics topics,
    int partitions,
    Duration tick,
    Duration maxBackoff,
    FloeSerdes serdes,
    Events events) {

  public TopologySettings {
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(serdes, "serdes");
    events = events == null ? Events.NONE : events;
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be at least 1");
    }
  }

  /** These settings on {@code partitions} partitions. */
  public TopologySettings withPartitions(int partitions) {
    return new TopologySettings(topics, partitions, tick, maxBackoff, serdes, events);
  }

  public static TopologySettings defaults() {
    return new TopologySettings(
        Topics.DEFAULTS,
        1,
        Duration.ofMillis(200),
        Duration.ofMinutes(5),
        FloeSerdes.singleObject(),
        Events.NONE);
  }

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
}
