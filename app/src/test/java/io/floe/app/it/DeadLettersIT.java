package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.config.FloeConfig;
import io.floe.app.service.CatalogWatcher;
import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.processor.DeadLetters;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Poison records on Floe's own topics, against a real broker: each goes to the dead-letter topic
 * with the reason and its origin, is counted, and Floe keeps running and refreshing, including an
 * instance that starts later and reads the poisoned views topic from its beginning.
 */
class DeadLettersIT {

  private static final String VOLUME =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final byte[] GARBAGE = "not a Floe record".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() throws Exception {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private static String header(ConsumerRecord<String, byte[]> record, String name) {
    return record.headers().lastHeader(name) == null
        ? null
        : new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  @Test
  void shouldDeadLetterGarbageOnCommitsRequestsAndViewsAndKeepRefreshing() throws Exception {
    FloeService first = floe.start("a");
    ViewDefinition volume = FloeHarness.view("volume", VOLUME);
    floe.define(volume);
    floe.awaitOracle(volume, trades);

    floe.sendRaw("commits", "lake.market.trades", GARBAGE);
    floe.sendRaw("requests", "volume", GARBAGE);
    floe.sendRaw("views", "volume", GARBAGE);

    await().atMost(Duration.ofSeconds(60)).until(() -> floe.deadLetters().size() >= 3);
    Map<String, ConsumerRecord<String, byte[]>> byTopic =
        floe.deadLetters().stream()
            .collect(
                Collectors.toMap(
                    r ->
                        String.valueOf(header(r, DeadLetters.ORIGIN))
                            .replaceFirst("-\\d+@\\d+$", ""),
                    Function.identity(),
                    (a, b) -> a));
    assertThat(byTopic)
        .containsOnlyKeys(floe.topic("commits"), floe.topic("requests"), floe.topic("views"));
    assertThat(header(byTopic.get(floe.topic("commits")), DeadLetters.REASON))
        .contains("Cannot decode TableCommitted");
    assertThat(header(byTopic.get(floe.topic("requests")), DeadLetters.REASON))
        .contains("Cannot decode ViewCommand");
    assertThat(header(byTopic.get(floe.topic("views")), DeadLetters.REASON))
        .contains("Cannot decode ViewRecord");
    assertThat(byTopic.values()).allSatisfy(r -> assertThat(r.value()).isEqualTo(GARBAGE));
    assertThat(first.metrics().scrape())
        .contains("floe_dlq_records_total{processor=\"commits-source\"} 1.0")
        .contains("floe_dlq_records_total{processor=\"requests-source\"} 1.0")
        .contains("floe_dlq_records_total{processor=\"views-source\"} 1.0");

    // The garbage replaced no definition: the view follows the next commit.
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:05:00Z", 99.0, 7L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(volume, trades);
    assertThat(first.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);

    // Floe's other readers of the views topic read past the garbage: the catalog watcher...
    try (CatalogWatcher watcher =
        new CatalogWatcher(FloeConfig.load(floe.configFile("w", Map.of())), Set.of())) {
      assertThat(watcher.tables()).containsExactly(TableName.parse("lake.market.trades"));
    }
    // ...and an instance that starts with a views file, which it publishes against the topic,
    // and whose global thread reads the topic from its beginning.
    floe.stopServices();
    Path viewsFile =
        Files.writeString(
            dir.resolve("views.yaml"),
            "views:\n  - name: volume\n    query: \""
                + VOLUME
                + "\"\n    target: lake.analytics.volume\n");
    FloeService second = floe.start("b", Map.of(FloeConfig.VIEWS_FILE, viewsFile.toString()));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> second.streams().state() == KafkaStreams.State.RUNNING);
    lake.append(trades, List.of(lake.trade("IBM", "2026-04-08T10:09:00Z", 50.0, 1L, "B")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(volume, trades);
  }
}
