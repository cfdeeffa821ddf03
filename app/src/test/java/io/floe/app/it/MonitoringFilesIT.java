package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.service.FloeService;
import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.ChunkId;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.view.ViewDefinition;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The alerts and the dashboard that ship in {@code k8s/components/monitoring} name only metrics
 * Floe exports: every metric of every rule and panel is on the {@code /metrics} page of a running
 * instance that has refreshed a view, failed a refresh, dead-lettered a record and restored its
 * stores.
 */
class MonitoringFilesIT {

  private static final Path MONITORING =
      Path.of("..", "k8s", "components", "monitoring").toAbsolutePath().normalize();

  /** Series Prometheus adds to every target itself, which no exporter serves. */
  private static final Set<String> PROMETHEUS_OWN = Set.of("up");

  /** A metric name in PromQL: Floe's, Kafka's, the JVM's and the process's namespaces. */
  private static final Pattern METRIC =
      Pattern.compile("\\b(?:floe|kafka|jvm|process|system)_[a-z0-9_]+\\b|\\bup\\b");

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private FloeHarness floe;
  private IcebergFixture lake;
  private Table trades;
  private FloeService service;
  private final HttpClient http = HttpClient.newHttpClient();

  /** Fails every refresh of the view called "broken", as a broken object store would. */
  private static final RefreshHooks BROKEN =
      new RefreshHooks() {
        @Override
        public void filesWritten(String view, ChunkId chunk) {
          if (view.equals("broken")) {
            throw new IllegalStateException("object store unavailable");
          }
        }
      };

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

  private String scrape() throws Exception {
    return http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + service.httpPort() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The names of the samples of a Prometheus text page. */
  private static Set<String> names(String page) {
    Set<String> names = new TreeSet<>();
    for (String line : page.split("\n")) {
      if (!line.isBlank() && !line.startsWith("#")) {
        names.add(line.split("[{ ]", 2)[0]);
      }
    }
    return names;
  }

  private static Set<String> metricsIn(String promQl) {
    Set<String> metrics = new TreeSet<>();
    Matcher m = METRIC.matcher(promQl);
    while (m.find()) {
      metrics.add(m.group());
    }
    return metrics;
  }

  @Test
  void shouldNameOnlyMetricsThatARunningFloeExports() throws Exception {
    // Given the shipped rules and dashboard
    Map<String, Object> rule;
    try (var in = Files.newBufferedReader(MONITORING.resolve("prometheusrule.yaml"))) {
      rule = new Yaml().load(in);
    }
    JsonNode dashboard = JSON.readTree(MONITORING.resolve("floe-dashboard.json").toFile());
    Map<String, String> expressions = new java.util.TreeMap<>();
    assertThat(rule.get("kind")).isEqualTo("PrometheusRule");
    for (Object group : (List<?>) ((Map<?, ?>) rule.get("spec")).get("groups")) {
      for (Object r : (List<?>) ((Map<?, ?>) group).get("rules")) {
        Map<?, ?> alert = (Map<?, ?>) r;
        assertThat(alert.get("alert")).as(alert.toString()).isNotNull();
        assertThat(((Map<?, ?>) alert.get("labels")).get("severity"))
            .as(alert.toString())
            .isNotNull();
        assertThat(((Map<?, ?>) alert.get("annotations")).get("summary"))
            .as(alert.toString())
            .isNotNull();
        expressions.put("alert " + alert.get("alert"), String.valueOf(alert.get("expr")));
      }
    }
    for (JsonNode panel : dashboard.findParents("targets")) {
      for (JsonNode target : panel.get("targets")) {
        expressions.merge(
            "panel " + panel.get("title").asText(),
            target.get("expr").asText(),
            (a, b) -> a + " " + b);
      }
    }
    assertThat(expressions.keySet())
        .contains(
            "alert FloeViewStale",
            "alert FloeRefreshErrors",
            "alert FloeDeadLetters",
            "alert FloeInstanceNotReady",
            "alert FloeCommitsLagGrowing");

    // When an instance has refreshed a view, failed refreshes of another, dead-lettered a record,
    // and, started again without its state directory, restored its stores from their changelogs
    service = floe.start("a", Map.of(), BROKEN);
    ViewDefinition bars = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.define(bars);
    floe.define(
        io.floe.topology.view.ViewDefinition.of(
            "broken",
            FloeServiceIT.OHLCV_1M,
            io.floe.topology.view.TableName.parse("lake.analytics.broken")));
    floe.sendRaw("commits", "lake.market.trades", "not avro".getBytes(StandardCharsets.UTF_8));
    floe.awaitOracle(bars, trades);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                names(scrape())
                    .containsAll(List.of("floe_refresh_errors_total", "floe_dlq_records_total")));
    // A counter appears with its first event in each process: what the first one exported counts.
    Set<String> exported = names(scrape());
    floe.stopServices();
    deleteRecursively(dir.resolve("state-a"));
    service = floe.start("a", Map.of(), BROKEN);
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> names(scrape()).contains("floe_state_restores_total"));
    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:01:00Z", 99.0, 7L, "B")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(bars, trades);

    // A JVM's pause timer appears with its first collection, which a large idle heap may not have
    // had yet: ask for one, as any running instance soon has.
    System.gc();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> names(scrape()).contains("jvm_gc_pause_seconds_sum"));

    // Then every metric a rule or a panel names is on its /metrics page
    String page = scrape();
    exported.addAll(names(page));
    List<String> unknown = new ArrayList<>();
    expressions.forEach(
        (where, expr) -> {
          for (String metric : metricsIn(expr)) {
            if (!exported.contains(metric) && !PROMETHEUS_OWN.contains(metric)) {
              unknown.add(where + ": " + metric);
            }
          }
        });
    assertThat(unknown).as("metrics not exported, of %s", exported).isEmpty();
    // The lag alert's selector picks the stream threads' main consumers (which read floe.commits),
    // not their restore consumers nor Floe's other clients.
    assertThat(page)
        .containsPattern(
            "kafka_consumer_fetch_manager_records_lag_max\\{[^}]*client_id=\"[^\"]*"
                + "StreamThread-[0-9]+-consumer\"");
    assertThat(expressions.values().stream().flatMap(e -> metricsIn(e).stream()))
        .as("metrics named")
        .contains(
            "floe_view_staleness_seconds",
            "floe_view_staleness_objective_seconds",
            "floe_refresh_errors_total",
            "floe_dlq_records_total",
            "floe_state_restored_records_total");
  }

  private static void deleteRecursively(Path root) throws java.io.IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
