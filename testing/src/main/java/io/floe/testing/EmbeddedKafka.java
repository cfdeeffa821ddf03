package io.floe.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) running inside this JVM,
 * for {@code floe demo} and the integration tests. Exactly-once works: the transaction and offset
 * topics have one replica.
 */
public final class EmbeddedKafka implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);

  private final KafkaRaftServer server;
  private final String bootstrapServers;

  private EmbeddedKafka(KafkaRaftServer server, String bootstrapServers) {
    this.server = server;
    this.bootstrapServers = bootstrapServers;
  }

  /** Formats {@code logDir} if needed, starts a broker on free loopback ports and waits for it. */
  public static EmbeddedKafka start(Path logDir) {
    try {
      Files.createDirectories(logDir);
      int port = freePort();
      int controllerPort = freePort();
      Properties props = new Properties();
      props.put("process.roles", "broker,controller");
      props.put("node.id", "1");
      props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
      props.put(
          "listeners",
          "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
      props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
      props.put("controller.listener.names", "CONTROLLER");
      props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
      props.put("inter.broker.listener.name", "PLAINTEXT");
      props.put("log.dirs", logDir.toString());
      props.put("auto.create.topics.enable", "false");
      props.put("group.initial.rebalance.delay.ms", "0");
      props.put("offsets.topic.replication.factor", "1");
      props.put("offsets.topic.num.partitions", "1");
      props.put("transaction.state.log.replication.factor", "1");
      props.put("transaction.state.log.min.isr", "1");
      props.put("transaction.state.log.num.partitions", "1");
      props.put("share.coordinator.state.topic.replication.factor", "1");
      props.put("share.coordinator.state.topic.min.isr", "1");
      props.put("log.flush.interval.messages", "1000000");

      if (!Files.exists(logDir.resolve("meta.properties"))) {
        new Formatter()
            .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
            .setNodeId(1)
            .setClusterId(Uuid.randomUuid().toString())
            .addDirectory(logDir.toString())
            .setMetadataLogDirectory(logDir.toString())
            .setControllerListenerName("CONTROLLER")
            .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
            .run();
      }
      KafkaRaftServer server =
          new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
      server.startup();
      EmbeddedKafka kafka = new EmbeddedKafka(server, "127.0.0.1:" + port);
      kafka.awaitReady(Duration.ofSeconds(60));
      LOG.info("Embedded Kafka broker ready at {}", kafka.bootstrapServers);
      return kafka;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(
          "Cannot start the embedded Kafka broker: " + e.getMessage(), e);
    }
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  private void awaitReady(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
      while (System.nanoTime() < deadline) {
        try {
          if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (Exception e) {
          last = e;
        }
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("Embedded Kafka broker did not become ready", last);
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
