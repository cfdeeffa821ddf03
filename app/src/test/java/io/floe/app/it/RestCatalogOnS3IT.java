package io.floe.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.app.config.FloeConfig;
import io.floe.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.rest.EmbeddedRestCatalog;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe against Iceberg's REST catalog server, with table data on S3-compatible object storage
 * (s3proxy) through Iceberg's {@code S3FileIO}: configured only with standard catalog properties.
 */
class RestCatalogOnS3IT {

  @TempDir Path dir;
  private S3Proxy s3;
  private EmbeddedRestCatalog rest;
  private FloeHarness floe;

  @BeforeEach
  void setUp() throws Exception {
    Path blobs = Files.createDirectories(dir.resolve("s3"));
    Files.createDirectories(blobs.resolve("lake"));
    int s3Port = freePort();
    s3 =
        S3Proxy.builder()
            .blobStore(new FilesystemNio2BlobStore(blobs.toString()))
            .endpoint(URI.create("http://127.0.0.1:" + s3Port))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, "floe", "floe-secret")
            .build();
    s3.start();

    Map<String, String> storage = new HashMap<>();
    storage.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    storage.put("s3.endpoint", "http://127.0.0.1:" + s3Port);
    storage.put("s3.path-style-access", "true");
    storage.put("s3.access-key-id", "floe");
    storage.put("s3.secret-access-key", "floe-secret");
    storage.put("client.region", "us-east-1");

    int restPort = freePort();
    Map<String, String> server = new HashMap<>(storage);
    server.put("rest.port", Integer.toString(restPort));
    server.put("uri", "jdbc:sqlite:" + dir.resolve("rest-catalog.db"));
    server.put("warehouse", "s3://lake/warehouse");
    rest = EmbeddedRestCatalog.start(server);

    Map<String, String> client = new HashMap<>(storage);
    client.put("type", "rest");
    client.put("uri", "http://127.0.0.1:" + restPort);
    floe = new FloeHarness(dir, IcebergFixture.create(client));
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
    rest.close();
    s3.stop();
  }

  @Test
  void shouldMaintainAViewThroughTheRestCatalogWithDataOnS3() throws Exception {
    IcebergFixture lake = floe.lake();
    Table trades = lake.createTrades("market", "trades");
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B"),
            lake.trade("MSFT", "2026-04-08T10:00:40Z", 99.0, 7L, "B")));
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);

    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:50Z", 9.0, 1L, "S")));
    lake.deleteByPosition(trades, r -> "MSFT".equals(r.getField("symbol")));
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
  }

  @Test
  void shouldCommitRemoteFilesOnThePoolOfTheServiceAndStopItsPoolsWithTheService()
      throws Exception {
    // Given a service that maintained a view over a table on S3
    IcebergFixture lake = floe.lake();
    Table trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.start("a");
    floe.define(view);
    floe.announce("lake.market.trades");
    floe.awaitOracle(view, trades);
    // (its commits' manifests were written and uploaded on the pool of remote commits, where no
    // read waits before them; its reads of one small file each needed no pool of remote reads,
    // whose threads on main were started by the commits)
    assertThat(threads("floe-remote-commits")).isNotEmpty();

    // When the service stops
    floe.stopServices();

    // Then the pools stopped with it: no thread of either outlives the service
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(threads("floe-remote-reads")).isEmpty();
              assertThat(threads("floe-remote-commits")).isEmpty();
            });
  }

  private static List<String> threads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith(prefix))
        .toList();
  }

  @Test
  void shouldRefreshOnMinioNotificationsOfNewTableMetadata() throws Exception {
    IcebergFixture lake = floe.lake();
    Table trades = lake.createTrades("market", "trades");
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    ViewDefinition view = FloeHarness.view("bars", FloeServiceIT.OHLCV_1M);
    floe.start("a", Map.of(FloeConfig.EVENTS_TOPICS, floe.topic("minio")));
    floe.define(view);
    floe.awaitOracle(view, trades);

    lake.append(trades, List.of(lake.trade("MSFT", "2026-04-08T10:07:00Z", 99.0, 7L, "S")));
    String metadata =
        ((HasTableOperations) lake.load("market", "trades"))
            .operations()
            .current()
            .metadataFileLocation();
    floe.sendRaw("minio", null, minioObjectCreated(metadata));
    floe.awaitOracle(view, trades);
    assertThat(floe.commitNotices())
        .filteredOn(n -> n.getTable().equals("trades"))
        .singleElement()
        .satisfies(
            n -> {
              assertThat(n.getProducer()).isEqualTo("s3-notification");
              assertThat(n.getMetadataLocation()).isEqualTo(metadata);
            });
  }

  /**
   * MinIO's Kafka notification of a new object at {@code location} ({@code s3://bucket/key}), made
   * from a recorded one.
   */
  private static byte[] minioObjectCreated(String location) throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode event;
    try (var in = RestCatalogOnS3IT.class.getResourceAsStream("/events/minio-put-metadata.json")) {
      event = (ObjectNode) json.readTree(in);
    }
    String bucketAndKey = location.substring("s3://".length());
    String bucket = bucketAndKey.substring(0, bucketAndKey.indexOf('/'));
    String key = bucketAndKey.substring(bucket.length() + 1);
    event.put("Key", bucketAndKey);
    ObjectNode s3 = (ObjectNode) event.at("/Records/0/s3");
    ((ObjectNode) s3.get("bucket")).put("name", bucket);
    ((ObjectNode) s3.get("object")).put("key", URLEncoder.encode(key, StandardCharsets.UTF_8));
    return json.writeValueAsBytes(event);
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
