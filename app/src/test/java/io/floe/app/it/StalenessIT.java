package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.app.service.FloeService;
import io.floe.schemas.RefreshEvent;
import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.ChunkId;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A view's staleness against its objective, over real HTTP: a running Floe whose refreshes are held
 * (they stop before their commit) while the source commits, then let go.
 */
class StalenessIT {

  private static final String TOKEN = "s3cr3t-token";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MINUTES =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final String DAYS =
      "SELECT symbol, date_trunc('day', ts) AS day_ts, count(*) AS n"
          + " FROM lake.market.trades GROUP BY 1, 2";

  private static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));
  private static final String BY_SECTOR =
      "SELECT s.sector, date_trunc('minute', t.ts) AS minute_ts, count(*) AS n"
          + " FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol"
          + " GROUP BY s.sector, date_trunc('minute', t.ts)";

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private FloeService service;
  private final HeldRefreshes held = new HeldRefreshes();
  private final HttpClient http = HttpClient.newHttpClient();

  /** Holds every refresh before its commit while {@link #hold} is in force. */
  private static final class HeldRefreshes implements RefreshHooks {
    private volatile CountDownLatch gate = new CountDownLatch(0);

    void hold() {
      gate = new CountDownLatch(1);
    }

    void release() {
      gate.countDown();
    }

    @Override
    public void filesWritten(String view, ChunkId chunk) {
      try {
        gate.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    floe = new FloeHarness(dir);
    lake = floe.lake();
    trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    service =
        floe.start(
            "a",
            Map.of(FloeConfig.HTTP_TOKEN, TOKEN, FloeConfig.REFRESH_MAX_STALENESS_MS, "600000"),
            held);
    await().atMost(Duration.ofSeconds(60)).until(() -> get("/health/ready").statusCode() == 200);
  }

  @AfterEach
  void tearDown() throws Exception {
    held.release();
    floe.close();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private void create(String body) throws Exception {
    HttpResponse<String> created =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + service.httpPort() + "/api/views"))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
  }

  /** The view as GET /api/views lists it. */
  private JsonNode listed(String name) throws Exception {
    for (JsonNode view : JSON.readTree(get("/api/views").body())) {
      if (view.get("name").asText().equals(name)) {
        return view;
      }
    }
    throw new AssertionError("view " + name + " is not listed");
  }

  /** The value of a per-view gauge on /metrics, or null when it is absent. */
  private Double gauge(String metric, String view) throws Exception {
    Matcher value =
        Pattern.compile(
                "(?m)^" + metric + "\\{[^}]*view=\"" + Pattern.quote(view) + "\"[^}]*\\} (\\S+)$")
            .matcher(get("/metrics").body());
    return value.find() ? Double.parseDouble(value.group(1)) : null;
  }

  @Test
  void shouldReportAViewStaleOverItsObjectiveWhileItsRefreshesAreHeldAndCurrentAfter()
      throws Exception {
    // Given a view with an objective of 2 s, one on Floe's default (10 min), both current
    create(
        "{\"name\": \"bars\", \"query\": \""
            + MINUTES
            + "\", \"target\": \"lake.analytics.bars\", \"refresh\": {\"max_staleness\": \"2s\"}}");
    create(
        "{\"name\": \"days\", \"query\": \"" + DAYS + "\", \"target\": \"lake.analytics.days\"}");
    ViewDefinition bars = FloeHarness.view("bars", MINUTES);
    floe.awaitOracle(bars, trades);
    floe.awaitOracle(FloeHarness.view("days", DAYS), trades);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(listed("bars").get("status").asText()).isEqualTo("IDLE");
              assertThat(listed("bars").get("staleness").asLong()).isZero();
              assertThat(gauge("floe_view_staleness_seconds", "bars")).isEqualTo(0.0);
            });
    assertThat(listed("bars").get("objective").asLong()).isEqualTo(2_000);
    assertThat(listed("days").get("objective").asLong()).isEqualTo(600_000);
    assertThat(gauge("floe_view_staleness_objective_seconds", "bars")).isEqualTo(2.0);
    assertThat(gauge("floe_view_staleness_objective_seconds", "days")).isEqualTo(600.0);

    // When the source commits while refreshes are held
    held.hold();
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:01:00Z", 99.0, 7L, "B")));
    floe.announce("lake.market.trades");

    // Then the view with the 2 s objective becomes stale past it; the other is only behind
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              JsonNode view = listed("bars");
              assertThat(view.get("status").asText()).as(view.toString()).isEqualTo("STALE");
              assertThat(view.get("staleness").asLong()).isGreaterThan(2_000);
              assertThat(gauge("floe_view_staleness_seconds", "bars")).isGreaterThan(2.0);
            });
    JsonNode days = listed("days");
    assertThat(days.get("status").asText()).as(days.toString()).isNotEqualTo("STALE");
    assertThat(days.get("staleness").asLong()).isPositive();

    // And when the refreshes go on, it is current again, and its refresh event says how stale
    held.release();
    floe.awaitOracle(bars, trades);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              JsonNode view = listed("bars");
              assertThat(view.get("status").asText()).as(view.toString()).isEqualTo("IDLE");
              assertThat(view.get("staleness").asLong()).isZero();
              assertThat(gauge("floe_view_staleness_seconds", "bars")).isEqualTo(0.0);
            });
    List<RefreshEvent> events =
        floe.awaitEvent("bars", e -> e.getStalenessMs() != null && e.getStalenessMs() > 2_000);
    assertThat(events.get(0).getStalenessMs()).as("the first refresh's").isNotNull();
  }

  @Test
  void shouldCountACommitOfADimensionInTheStalenessUntilItsRefreshNamesTheDimensionSnapshot()
      throws Exception {
    // Given a view with an objective of 2 s that joins trades to a dimension of sectors, current
    Table symbols = lake.createTable("ref", "symbols", SYMBOLS, PartitionSpec.unpartitioned());
    lake.append(symbols, List.of(symbol("AAPL", "tech"), symbol("MSFT", "tech")));
    create(
        "{\"name\": \"sectors\", \"query\": \""
            + BY_SECTOR
            + "\", \"target\": \"lake.analytics.sectors\", \"refresh\": {\"max_staleness\":"
            + " \"2s\"}}");
    awaitDimensionReflected("sectors", symbols);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(listed("sectors").get("status").asText()).isEqualTo("IDLE");
              assertThat(listed("sectors").get("staleness").asLong()).isZero();
            });

    // When only the dimension commits (a sector corrected) while refreshes are held
    held.hold();
    lake.overwrite(
        symbols, r -> "AAPL".equals(r.getField("symbol")), List.of(symbol("AAPL", "devices")));
    long corrected = symbols.currentSnapshot().snapshotId();
    floe.announce("lake.ref.symbols");

    // Then the view becomes stale past its objective by the age of that commit
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              JsonNode view = listed("sectors");
              assertThat(view.get("status").asText()).as(view.toString()).isEqualTo("STALE");
              assertThat(view.get("staleness").asLong()).isGreaterThan(2_000);
              assertThat(gauge("floe_view_staleness_seconds", "sectors")).isGreaterThan(2.0);
            });

    // And once its refresh goes on, it is current again, and the refresh event names the
    // dimension snapshot it reflects beside the fact's, with the staleness it ended
    held.release();
    awaitDimensionReflected("sectors", symbols);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              JsonNode view = listed("sectors");
              assertThat(view.get("status").asText()).as(view.toString()).isEqualTo("IDLE");
              assertThat(view.get("staleness").asLong()).isZero();
              assertThat(
                      view.at("/lastRefresh/dimensionSnapshotIds")
                          .path("lake.ref.symbols")
                          .asText())
                  .as(view.toString())
                  .isEqualTo(Long.toString(corrected));
            });
    RefreshEvent event =
        floe
            .awaitEvent(
                "sectors",
                e ->
                    e.getDimensions() != null
                        && e.getDimensions().stream()
                            .anyMatch(d -> Long.valueOf(corrected).equals(d.getSnapshotId())))
            .stream()
            .filter(e -> e.getDimensions() != null && !e.getDimensions().isEmpty())
            .reduce((first, second) -> second)
            .orElseThrow();
    assertThat(event.getDimensions()).hasSize(1);
    assertThat(event.getDimensions().get(0).getTable().getName()).isEqualTo("symbols");
    assertThat(event.getDimensions().get(0).getSnapshotId()).isEqualTo(corrected);
    assertThat(event.getDimensions().get(0).getCommittedAt())
        .isEqualTo(java.time.Instant.ofEpochMilli(symbols.currentSnapshot().timestampMillis()));
    assertThat(event.getSourceSnapshotId()).isEqualTo(trades.currentSnapshot().snapshotId());
    assertThat(event.getStalenessMs()).isGreaterThan(2_000);
  }

  private static Record symbol(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SYMBOLS);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }

  /** Waits until the view's target records the dimension's current snapshot. */
  private void awaitDimensionReflected(String view, Table dimension) {
    dimension.refresh();
    String snapshot = "\"snapshot-id\":\"" + dimension.currentSnapshot().snapshotId() + "\"";
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              try {
                String states =
                    lake.catalog()
                        .loadTable(TableIdentifier.of("analytics", view))
                        .properties()
                        .get(FloeProperties.DIMENSION_STATES);
                return states != null && states.contains(snapshot);
              } catch (NoSuchTableException e) {
                return false;
              }
            });
  }
}
