package io.floe.schemas.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.apache.avro.Schema;

/**
 * A schema registry for tests: a real HTTP(S) server that speaks the part of the Confluent Schema
 * Registry REST API Floe uses (register, look up, fetch by id), with its error bodies and optional
 * basic authentication. State is in memory; every request is counted.
 */
public final class FakeSchemaRegistry implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer server;
  private final String expectedAuthorization;
  private final Map<Integer, Schema> schemas = new LinkedHashMap<>();
  private final Map<String, Map<String, Integer>> subjects = new LinkedHashMap<>();
  private final AtomicInteger requests = new AtomicInteger();
  private int nextId = 100;

  private FakeSchemaRegistry(HttpServer server, String userInfo) {
    this.server = server;
    this.expectedAuthorization =
        userInfo == null
            ? null
            : "Basic "
                + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
    server.createContext("/", this::handle);
    server.start();
  }

  /** A plain-HTTP registry on a free loopback port; {@code userInfo} enables basic auth. */
  public static FakeSchemaRegistry start(String userInfo) throws IOException {
    return new FakeSchemaRegistry(
        HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0), userInfo);
  }

  /** An HTTPS registry presenting the key of {@code ssl}. */
  public static FakeSchemaRegistry startTls(SSLContext ssl) throws IOException {
    HttpsServer https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    https.setHttpsConfigurator(new HttpsConfigurator(ssl));
    return new FakeSchemaRegistry(https, null);
  }

  public String url() {
    String scheme = server instanceof HttpsServer ? "https" : "http";
    return scheme + "://localhost:" + server.getAddress().getPort();
  }

  public int requests() {
    return requests.get();
  }

  /**
   * Registers {@code schema} under {@code subject} with a chosen id, as an earlier producer did.
   */
  public synchronized void preload(String subject, Schema schema, int id) {
    schemas.put(id, schema);
    subjects.computeIfAbsent(subject, s -> new LinkedHashMap<>()).put(schema.toString(), id);
  }

  public synchronized Integer idOf(String subject, Schema schema) {
    return subjects.getOrDefault(subject, Map.of()).get(schema.toString());
  }

  private void handle(HttpExchange exchange) throws IOException {
    requests.incrementAndGet();
    try (exchange) {
      if (expectedAuthorization != null
          && !expectedAuthorization.equals(
              exchange.getRequestHeaders().getFirst("Authorization"))) {
        respond(exchange, 401, Map.of("error_code", 401, "message", "Unauthorized"));
        return;
      }
      String path = exchange.getRequestURI().getRawPath();
      String method = exchange.getRequestMethod();
      String[] parts = path.split("/");
      if (method.equals("GET") && path.startsWith("/schemas/ids/")) {
        Schema schema = schemaById(Integer.parseInt(parts[3]));
        if (schema == null) {
          respond(exchange, 404, Map.of("error_code", 40403, "message", "Schema not found"));
        } else {
          respond(exchange, 200, Map.of("schema", schema.toString()));
        }
      } else if (method.equals("POST") && path.startsWith("/subjects/")) {
        String subject = URLDecoder.decode(parts[2], StandardCharsets.UTF_8);
        JsonNode body = JSON.readTree(exchange.getRequestBody());
        Schema schema = new Schema.Parser().parse(body.get("schema").asText());
        if (path.endsWith("/versions")) {
          respond(exchange, 200, Map.of("id", register(subject, schema)));
        } else {
          Integer id = idOf(subject, schema);
          if (id == null) {
            respond(exchange, 404, Map.of("error_code", 40403, "message", "Schema not found"));
          } else {
            respond(
                exchange,
                200,
                Map.of("subject", subject, "id", id, "version", 1, "schema", schema.toString()));
          }
        }
      } else {
        respond(exchange, 404, Map.of("error_code", 404, "message", "HTTP 404 Not Found"));
      }
    }
  }

  private synchronized Schema schemaById(int id) {
    return schemas.get(id);
  }

  private synchronized int register(String subject, Schema schema) {
    Integer known = idOf(subject, schema);
    if (known != null) {
      return known;
    }
    int id = nextId++;
    preload(subject, schema, id);
    return id;
  }

  private static void respond(HttpExchange exchange, int status, Object body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/vnd.schemaregistry.v1+json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
