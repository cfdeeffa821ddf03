package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.FloeTopology;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe.topic.partitions} of a deployment that has run: the partitions of its internal
 * dirty-buckets topic decide which task owns a view, so an instance configured with another number
 * keeps the deployment's.
 */
class PartitionsIT {

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private final Random random = new Random(11);

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldRunAfterASingleRebalanceOnAnApplicationsFirstStart() throws Exception {
    // Given an application that has never run: none of its topics exist

    // When its first instance starts
    FloeService service = floe.start("a");

    // Then Kafka Streams runs after the group's first rebalance: its dirty-buckets topic existed
    // when the consumer joined (created by the rebalance's leader, it changed the joined metadata
    // and the group rebalanced once more before it ran)
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(60))
        .until(() -> service.streams().state() == KafkaStreams.State.RUNNING);
    double rebalances =
        service.streams().metrics().values().stream()
            .filter(metric -> metric.metricName().name().equals("rebalance-total"))
            .filter(metric -> metric.metricName().group().equals("consumer-coordinator-metrics"))
            .mapToDouble(metric -> ((Number) metric.metricValue()).doubleValue())
            .sum();
    assertThat(rebalances).isEqualTo(1.0);
  }

  @Test
  void shouldKeepTheDeploymentsPartitionsWhenAnInstanceIsConfiguredWithMore() throws Exception {
    // Given a deployment that ran with 2 partitions and refreshed a view
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.define(view);
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-08", 9, 11));
    floe.start("a", Map.of(FloeConfig.TOPIC_PARTITIONS, "2"));
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    floe.stopServices();

    // When an instance of it starts configured with 4 and the source changes
    FloeService restarted = floe.start("b", Map.of(FloeConfig.TOPIC_PARTITIONS, "4"));
    lake.append(trades, lake.randomTrades(random, 200, "2026-04-09", 9, 11));
    floe.announce("lake.market.trades");

    // Then it runs on the deployment's 2 partitions and keeps the view equal to the oracle
    floe.awaitOracle(view, trades);
    FloeConfig config = FloeConfig.load(floe.configFile("b", Map.of()));
    String repartition =
        FloeTopology.dirtyBucketsTopic(
            config.streamsProperties().getProperty(StreamsConfig.APPLICATION_ID_CONFIG));
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                FloeHarness.kafka().bootstrapServers()))) {
      assertThat(
              admin
                  .describeTopics(List.of(repartition))
                  .allTopicNames()
                  .get()
                  .get(repartition)
                  .partitions())
          .hasSize(2);
    }
    assertThat(restarted.streams().state().isRunningOrRebalancing()).isTrue();
  }
}
