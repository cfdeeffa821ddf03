package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.app.http.HttpApi;
import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code /health/ready} promises (a StatefulSet's rolling update stops the next pod once this
 * one is ready): that the instance could take another's load now, not merely that Kafka Streams ran
 * once. And what a lost instance's open transaction costs the survivors: Floe's transaction
 * timeout, as the broker holds it.
 */
class ReadinessIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private ViewDefinition view;

  @BeforeEach
  void setUp() {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    view =
        FloeHarness.view(
            "by_minute",
            "SELECT symbol, date_trunc('minute', ts) AS bucket, sum(quantity) AS volume,"
                + " count(*) AS n FROM lake.market.trades GROUP BY 1, 2");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldNotBeReadyWhileItRestoresTheTasksItTookOver() throws Exception {
    // Given two instances without standbys, their restorations held at a gate once it closes,
    // both ready
    String gateName = "restore-" + dir.getFileName();
    PausingInterceptor.Gate gate = PausingInterceptor.gate(gateName);
    Map<String, String> settings =
        Map.of(
            "num.standby.replicas",
            "0",
            "restore.consumer.interceptor.classes",
            PausingInterceptor.class.getName(),
            "restore.consumer." + PausingInterceptor.GATE_CONFIG,
            gateName);
    FloeService a = floe.start("a", settings);
    FloeService b = floe.start("b", settings);
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    await().atMost(Duration.ofSeconds(60)).until(() -> isReady(a) && isReady(b));
    // The one whose stores hold records stops: the other has them to restore.
    FloeService leaving = holdsRecords(a) ? a : b;
    FloeService taking = leaving == a ? b : a;
    assertThat(holdsRecords(leaving)).as("one of them keeps the view's state").isTrue();

    // When it stops and the other must rebuild its stores from their changelogs
    gate.close();
    try {
      leaving.close();
      await().atMost(Duration.ofSeconds(60)).until(gate::isHolding);

      // Then the other is not ready while it restores, however long that takes
      assertThat(readiness(taking).statusCode()).isEqualTo(503);
      assertThat(readiness(taking).body()).contains("NOT_READY");
      assertThat(gate.isHolding()).as("still restoring").isTrue();
    } finally {
      gate.open();
    }

    // And ready once it has restored them, with the view following the source exactly
    await().atMost(Duration.ofSeconds(60)).until(() -> isReady(taking));
    assertThat(taking.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:01:01Z", 20.0, 7L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
  }

  @Test
  void shouldOpenItsTransactionsUnderFloesTenSecondTimeout() throws Exception {
    // Given an instance maintaining a view on Floe's defaults
    FloeService a = floe.start("a");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);

    // When the broker is asked about the transactions of its stream threads
    // Kafka Streams names them <application.id>-<process id>-<thread index>.
    String applicationId = floe.topic("views").replaceFirst("\\.views$", "") + "-floe-";
    try (Admin admin =
        Admin.create(Map.of("bootstrap.servers", FloeHarness.kafka().bootstrapServers()))) {
      List<String> ids =
          admin.listTransactions().all().get().stream()
              .map(TransactionListing::transactionalId)
              .filter(id -> id.startsWith(applicationId))
              .toList();
      Map<String, TransactionDescription> described = admin.describeTransactions(ids).all().get();

      // Then each has Floe's timeout, which bounds how long a lost instance's open transaction
      // holds back the readers of what it wrote
      assertThat(described).isNotEmpty();
      assertThat(described.values())
          .extracting(TransactionDescription::transactionTimeoutMs)
          .containsOnly(10000L);
    }
  }

  /** Whether any store of the instance's (active) tasks has records in its changelog. */
  private static boolean holdsRecords(FloeService service) {
    return service.streams().allLocalStorePartitionLags().values().stream()
        .flatMap(partitions -> partitions.values().stream())
        .anyMatch(lag -> lag.endOffsetPosition() > 0);
  }

  private static boolean isReady(FloeService service) throws Exception {
    return readiness(service).statusCode() == 200;
  }

  private static HttpResponse<String> readiness(FloeService service) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + service.httpPort() + HttpApi.READY_PATH))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
