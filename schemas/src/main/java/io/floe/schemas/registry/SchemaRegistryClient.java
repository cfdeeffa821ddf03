package io.floe.schemas.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.avro.Schema;
import org.apache.kafka.common.errors.SerializationException;

/**
 * A small client of the Confluent Schema Registry REST API: registers or looks up the id of a
 * subject's schema, and fetches a schema by id, both cached. Basic authentication and TLS (a
 * truststore) are supported; several URLs are tried in turn. Written by hand because the {@code
 * io.confluent} client cannot be obtained here; it speaks only the three calls Floe needs.
 */
public final class SchemaRegistryClient {

  /** Comma-separated registry URLs; setting it switches Floe's topics to the wire format. */
  public static final String URL = "schema.registry.url";

  /** {@code USER_INFO} (default when user info is set) or {@code URL} (user info in the URL). */
  public static final String BASIC_AUTH_SOURCE = "basic.auth.credentials.source";

  /** {@code user:password} for basic authentication. */
  public static final String BASIC_AUTH_USER_INFO = "basic.auth.user.info";

  public static final String TRUSTSTORE_LOCATION = "schema.registry.ssl.truststore.location";
  public static final String TRUSTSTORE_PASSWORD = "schema.registry.ssl.truststore.password";
  public static final String TRUSTSTORE_TYPE = "schema.registry.ssl.truststore.type";

  /** Whether schemas are registered on first use (default) or only looked up. */
  public static final String AUTO_REGISTER = "auto.register.schemas";

  private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<URI> urls;
  private final String authorization;
  private final boolean autoRegister;
  private final HttpClient http;
  private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();
  private final Map<String, Integer> idsBySubjectAndSchema = new ConcurrentHashMap<>();

  SchemaRegistryClient(List<URI> urls, String authorization, boolean autoRegister, SSLContext ssl) {
    if (urls.isEmpty()) {
      throw new IllegalArgumentException(URL + " names no registry");
    }
    this.urls = List.copyOf(urls);
    this.authorization = authorization;
    this.autoRegister = autoRegister;
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
    if (ssl != null) {
      builder.sslContext(ssl);
    }
    this.http = builder.build();
  }

  /** A client configured from Kafka-style settings, or empty when no registry URL is set. */
  public static Optional<SchemaRegistryClient> fromConfig(Map<String, ?> config) {
    Object url = config.get(URL);
    if (url == null || url.toString().isBlank()) {
      return Optional.empty();
    }
    List<URI> urls = new ArrayList<>();
    String userInfo = string(config, BASIC_AUTH_USER_INFO);
    for (String part : url.toString().split(",")) {
      URI uri = URI.create(part.strip().replaceAll("/+$", ""));
      if ("URL".equalsIgnoreCase(string(config, BASIC_AUTH_SOURCE)) && uri.getUserInfo() != null) {
        userInfo = uri.getUserInfo();
      }
      // The URL appears in error messages and logs: it keeps no credentials.
      urls.add(withoutUserInfo(uri));
    }
    String authorization =
        userInfo == null
            ? null
            : "Basic "
                + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
    boolean autoRegister = !"false".equalsIgnoreCase(string(config, AUTO_REGISTER));
    return Optional.of(
        new SchemaRegistryClient(urls, authorization, autoRegister, sslContext(config)));
  }

  private static URI withoutUserInfo(URI uri) {
    if (uri.getRawUserInfo() == null) {
      return uri;
    }
    String text = uri.toString();
    int at = text.indexOf('@', text.indexOf("//") + 2);
    return URI.create(text.substring(0, text.indexOf("//") + 2) + text.substring(at + 1));
  }

  /** The id of {@code schema} under {@code subject}, registering it first if allowed. */
  public int idFor(String subject, Schema schema) {
    String key = subject + '\n' + schema;
    Integer known = idsBySubjectAndSchema.get(key);
    if (known != null) {
      return known;
    }
    String body = JSON.createObjectNode().put("schema", schema.toString()).toString();
    String path = "/subjects/" + URLEncoder.encode(subject, StandardCharsets.UTF_8);
    JsonNode response = call("POST", autoRegister ? path + "/versions" : path, body);
    int id = response.path("id").asInt(-1);
    if (id < 0) {
      throw new SerializationException(
          "Schema registry answered " + response + " for subject " + subject + ": no id");
    }
    idsBySubjectAndSchema.put(key, id);
    schemasById.putIfAbsent(id, schema);
    return id;
  }

  /** The schema registered under {@code id}. */
  public Schema schema(int id) {
    return schemasById.computeIfAbsent(
        id,
        missing -> {
          JsonNode response = call("GET", "/schemas/ids/" + missing, null);
          String text = response.path("schema").asText(null);
          if (text == null) {
            throw new SerializationException(
                "Schema registry answered " + response + " for schema id " + missing);
          }
          return new Schema.Parser().parse(text);
        });
  }

  private JsonNode call(String method, String path, String body) {
    SerializationException last = null;
    for (URI base : urls) {
      HttpRequest.Builder request =
          HttpRequest.newBuilder(URI.create(base + path))
              .timeout(Duration.ofSeconds(30))
              .header("Accept", CONTENT_TYPE)
              .method(
                  method,
                  body == null
                      ? HttpRequest.BodyPublishers.noBody()
                      : HttpRequest.BodyPublishers.ofString(body));
      if (body != null) {
        request.header("Content-Type", CONTENT_TYPE);
      }
      if (authorization != null) {
        request.header("Authorization", authorization);
      }
      try {
        HttpResponse<String> response =
            http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 == 2) {
          return JSON.readTree(response.body());
        }
        String message = errorMessage(response);
        if (response.statusCode() / 100 == 4) {
          // The registry understood and refused: another URL would answer the same.
          throw new SerializationException(
              "Schema registry " + base + " refused " + method + " " + path + ": " + message);
        }
        last =
            new SerializationException(
                "Schema registry " + base + " failed " + method + " " + path + ": " + message);
      } catch (IOException e) {
        last =
            new SerializationException(
                "Schema registry " + base + " unreachable: " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SerializationException("Interrupted while calling the schema registry", e);
      }
    }
    throw last;
  }

  private static String errorMessage(HttpResponse<String> response) {
    try {
      JsonNode error = JSON.readTree(response.body());
      if (error.hasNonNull("message")) {
        return "HTTP "
            + response.statusCode()
            + (error.hasNonNull("error_code") ? " (error " + error.get("error_code") + ")" : "")
            + ": "
            + error.get("message").asText();
      }
    } catch (IOException | RuntimeException e) {
      // not JSON
    }
    return "HTTP " + response.statusCode();
  }

  private static SSLContext sslContext(Map<String, ?> config) {
    String location = string(config, TRUSTSTORE_LOCATION);
    if (location == null) {
      return null;
    }
    String password = string(config, TRUSTSTORE_PASSWORD);
    String type = string(config, TRUSTSTORE_TYPE);
    try (InputStream in = Files.newInputStream(Path.of(location))) {
      KeyStore trust = KeyStore.getInstance(type == null ? KeyStore.getDefaultType() : type);
      trust.load(in, password == null ? null : password.toCharArray());
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, factory.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "Cannot load the schema registry truststore " + location + ": " + e.getMessage(), e);
    }
  }

  private static String string(Map<String, ?> config, String key) {
    Object value = config.get(key);
    if (value == null) {
      return null;
    }
    // Kafka's Password type hides its value from toString().
    if (value instanceof org.apache.kafka.common.config.types.Password password) {
      return password.value();
    }
    String text = value.toString();
    return text.isBlank() ? null : text;
  }
}
