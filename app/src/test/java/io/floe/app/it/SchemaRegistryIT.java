package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.ViewRecord;
import io.floe.schemas.registry.FakeSchemaRegistry;
import io.floe.schemas.registry.SchemaRegistryClient;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With {@code schema.registry.url} set, every Floe topic carries the registry's wire format. */
class SchemaRegistryIT {

  @TempDir Path dir;
  private FakeSchemaRegistry registry;
  private FloeHarness floe;

  @BeforeEach
  void setUp() throws Exception {
    registry = FakeSchemaRegistry.start("floe:s3cret");
    floe =
        new FloeHarness(
            dir,
            IcebergFixture.create(dir),
            Map.of(
                SchemaRegistryClient.URL, registry.url(),
                SchemaRegistryClient.BASIC_AUTH_SOURCE, "USER_INFO",
                SchemaRegistryClient.BASIC_AUTH_USER_INFO, "floe:s3cret"));
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
    registry.close();
  }

  @Test
  void shouldMaintainViewsWithEveryTopicInTheWireFormat() throws Exception {
    IcebergFixture lake = floe.lake();
    Table trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    ViewDefinition view =
        FloeHarness.view(
            "volume",
            "SELECT symbol, date_trunc('minute', ts) AS minute_ts, sum(quantity) AS volume"
                + " FROM lake.market.trades GROUP BY 1, 2");
    floe.start("a");
    floe.define(view);
    floe.awaitOracle(view, trades);
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:05:00Z", 99.0, 7L, "S")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    assertThat(floe.awaitEvent("volume", e -> true)).isNotEmpty();

    assertThat(registry.idOf(floe.topic("commits") + "-value", TableCommitted.getClassSchema()))
        .isNotNull();
    assertThat(registry.idOf(floe.topic("snapshots") + "-value", SnapshotEvent.getClassSchema()))
        .isNotNull();
    assertThat(registry.idOf(floe.topic("refreshes") + "-value", RefreshEvent.getClassSchema()))
        .isNotNull();
    assertThat(registry.idOf(floe.topic("views") + "-value", ViewRecord.getClassSchema()))
        .isNotNull();
    for (String topic : List.of("commits", "snapshots", "refreshes", "views")) {
      List<ConsumerRecord<String, byte[]>> records = floe.readAll(topic);
      assertThat(records).as(topic).isNotEmpty();
      assertThat(records).as(topic).allSatisfy(r -> assertThat(r.value()[0]).isZero());
    }
  }
}
