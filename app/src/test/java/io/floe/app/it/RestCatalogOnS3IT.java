package io.floe.app.it;

import io.floe.topology.testing.IcebergFixture;
import io.floe.topology.view.ViewDefinition;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
