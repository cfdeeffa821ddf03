package io.floe.app.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.app.config.CatalogConfig;
import io.floe.app.metrics.FloeMeters;
import io.floe.app.service.ViewCommands;
import io.floe.schemas.ViewRecord;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewValidator;
import io.floe.topology.view.ViewsFile;
import io.floe.topology.view.ViewsFileException;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import io.javalin.http.staticfiles.Location;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Floe's HTTP server (DESIGN §7): health checks, Prometheus metrics, the views API and the web UI.
 * Definitions come from the global views store; states come from the instance that maintains each
 * view. Changes are written to the views and requests topics, never to a store. When a token is
 * configured, the mutating endpoints require it as a bearer token.
 */
public final class HttpApi implements AutoCloseable {

  /** Liveness: 200 unless Kafka Streams has failed. */
  public static final String LIVE_PATH = "/health/live";

  /** Readiness: 200 once Kafka Streams has run, and through rebalances after that. */
  public static final String READY_PATH = "/health/ready";

  /** Prometheus text format. */
  public static final String METRICS_PATH = "/metrics";

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

  private final Javalin app;
  private final CatalogConfig catalogs;
  private final ViewCommands commands;
  private final FloeMeters meters;
  private final byte[] token;
  private final AtomicBoolean everRunning = new AtomicBoolean();
  private volatile KafkaStreams streams;
  private volatile ViewStates states;

  private HttpApi(
      String host,
      int port,
      CatalogConfig catalogs,
      ViewCommands commands,
      FloeMeters meters,
      String token) {
    this.catalogs = catalogs;
    this.commands = commands;
    this.meters = meters;
    this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    this.app =
        Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.staticFiles.add(
                  files -> {
                    files.hostedPath = "/";
                    files.directory = "/ui";
                    files.location = Location.CLASSPATH;
                  });
              routes(config.routes);
            });
    app.start(host, port);
    LOG.info("HTTP server listening on {}:{}", host, app.port());
  }

  /** Starts the server; {@code port} 0 picks a free port. */
  public static HttpApi start(
      String host,
      int port,
      CatalogConfig catalogs,
      ViewCommands commands,
      FloeMeters meters,
      String token) {
    return new HttpApi(host, port, catalogs, commands, meters, token);
  }

  /** The port the server listens on. */
  public int port() {
    return app.port();
  }

  /** Connects the server to the running Kafka Streams instance, reachable at {@code self}. */
  public void attach(KafkaStreams streams, HostInfo self) {
    this.streams = streams;
    this.states = new ViewStates(streams, self);
  }

  /** Called on every Kafka Streams state change, for readiness. */
  public void onState(KafkaStreams.State state) {
    if (state == KafkaStreams.State.RUNNING) {
      everRunning.set(true);
    }
  }

  private void routes(io.javalin.config.RoutesConfig routes) {
    routes.get(LIVE_PATH, this::live);
    routes.get(READY_PATH, this::ready);
    routes.get(
        METRICS_PATH,
        ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(meters.scrape()));
    routes.get(
        ViewStates.INTERNAL_PATH, ctx -> ctx.json(states == null ? Map.of() : states.local()));
    routes.get("/api/views", this::listViews);
    routes.post("/api/views", this::createView);
    routes.get("/api/views/{name}", this::getView);
    routes.put("/api/views/{name}", this::updateView);
    routes.delete("/api/views/{name}", this::deleteView);
    routes.post("/api/views/{name}/refresh", this::refreshView);
    routes.post("/api/validate", this::validate);
    routes.exception(
        ApiException.class,
        (e, ctx) -> ctx.status(e.status).json(error(e.getMessage(), e.details)));
    routes.exception(
        Exception.class,
        (e, ctx) -> {
          LOG.warn("{} {} failed", ctx.method(), ctx.path(), e);
          ctx.status(HttpStatus.INTERNAL_SERVER_ERROR).json(error(e.getMessage(), Map.of()));
        });
  }

  private void live(Context ctx) {
    KafkaStreams s = streams;
    boolean failed = s != null && s.state() == KafkaStreams.State.ERROR;
    ctx.status(failed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK)
        .json(Map.of("status", failed ? "DOWN" : "UP"));
  }

  /** Ready once Kafka Streams has run, and through its rebalances after that. */
  private void ready(Context ctx) {
    KafkaStreams s = streams;
    KafkaStreams.State state = s == null ? null : s.state();
    boolean ready =
        state != null
            && everRunning.get()
            && (state == KafkaStreams.State.RUNNING || state == KafkaStreams.State.REBALANCING);
    ctx.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE)
        .json(Map.of("status", ready ? "READY" : "NOT_READY", "streams", String.valueOf(state)));
  }

  private void listViews(Context ctx) {
    Map<String, ViewRecord> definitions = definitions();
    Map<String, ViewState> all = states == null ? Map.of() : states.all();
    ArrayNode views = ViewStates.MAPPER.createArrayNode();
    for (ViewRecord definition : definitions.values()) {
      views.add(ViewJson.summary(definition, all.get(definition.getName())));
    }
    ctx.json(views);
  }

  private void getView(Context ctx) {
    String name = ctx.pathParam("name");
    ViewRecord definition = definition(name);
    ViewState state = states == null ? null : states.one(name).orElse(null);
    ObjectNode body = ViewJson.summary(definition, state);
    body.set("definition", ViewJson.definition(definition));
    ValidatedView checked = check(StoredView.of(definition).toDefinition());
    body.set("plan", ViewJson.plan(checked));
    body.set("recentRefreshes", ViewJson.recent(state));
    ctx.json(body);
  }

  private void createView(Context ctx) throws InterruptedException {
    authorize(ctx);
    ViewDefinition view = parse(ctx.body(), null);
    if (definitions().containsKey(view.name())) {
      throw new ApiException(
          HttpStatus.CONFLICT, "view '" + view.name() + "' already exists; PUT to change it");
    }
    publish(view);
    ctx.status(HttpStatus.CREATED).json(Map.of("name", view.name(), "version", view.version()));
  }

  private void updateView(Context ctx) throws InterruptedException {
    authorize(ctx);
    String name = ctx.pathParam("name");
    ViewDefinition view = parse(ctx.body(), name);
    boolean existed = definitions().containsKey(name);
    publish(view);
    ctx.status(existed ? HttpStatus.OK : HttpStatus.CREATED)
        .json(Map.of("name", view.name(), "version", view.version()));
  }

  private void deleteView(Context ctx) throws InterruptedException {
    authorize(ctx);
    String name = ctx.pathParam("name");
    ViewRecord definition = definition(name);
    commands.delete(name);
    boolean dropped = false;
    if (Boolean.parseBoolean(ctx.queryParam("dropTarget"))) {
      TableName target = TableName.parse(definition.getTarget());
      dropped = catalogs.catalog(target.catalog()).dropTable(target.identifier(), true);
      LOG.info("Dropped target {} of deleted view {}", target, name);
    }
    ctx.json(Map.of("name", name, "deleted", true, "targetDropped", dropped));
  }

  private void refreshView(Context ctx) throws InterruptedException {
    authorize(ctx);
    String name = ctx.pathParam("name");
    definition(name);
    boolean full = Boolean.parseBoolean(ctx.queryParam("full"));
    commands.refresh(name, full, "api");
    ctx.status(HttpStatus.ACCEPTED)
        .json(Map.of("name", name, "command", full ? "FULL_REFRESH" : "REFRESH"));
  }

  /** Live validation for the UI: the query (and, optionally, the rest of a definition). */
  private void validate(Context ctx) {
    ObjectNode request;
    try {
      request = (ObjectNode) ViewStates.MAPPER.readTree(ctx.body());
    } catch (Exception e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, "the body must be a JSON object", Map.of());
    }
    if (!request.hasNonNull("name")) {
      request.put("name", "validate");
    }
    if (!request.hasNonNull("target")) {
      request.put("target", "validate.validate.validate");
    }
    ViewDefinition view;
    try {
      view = parseDefinition(request.toString());
    } catch (ApiException e) {
      ctx.json(ViewJson.invalid(e.getMessage(), e.details));
      return;
    }
    ctx.json(ViewJson.plan(check(view)));
  }

  private ViewDefinition parse(String body, String pathName) {
    ObjectNode request;
    try {
      request = (ObjectNode) ViewStates.MAPPER.readTree(body);
    } catch (Exception e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, "the body must be a JSON object", Map.of());
    }
    if (pathName != null) {
      if (request.hasNonNull("name") && !request.get("name").asText().equals(pathName)) {
        throw new ApiException(
            HttpStatus.BAD_REQUEST,
            "the name in the body ("
                + request.get("name").asText()
                + ") is not the path's ("
                + pathName
                + ")",
            Map.of());
      }
      request.put("name", pathName);
    }
    ViewDefinition view = parseDefinition(request.toString());
    ValidatedView checked = check(view);
    if (!checked.isValid() && !checked.sourceMissing()) {
      InvalidViewException invalid = checked.invalidQuery();
      throw new ApiException(
          HttpStatus.BAD_REQUEST,
          checked.error(),
          invalid == null
              ? Map.of()
              : Map.of(
                  "rule", invalid.rule().name(),
                  "line", invalid.line(),
                  "column", invalid.column()));
    }
    return view;
  }

  /** A definition from the JSON body, with the same fields and checks as a views file entry. */
  private static ViewDefinition parseDefinition(String json) {
    try {
      List<ViewDefinition> views = ViewsFile.parse("request", "{\"views\": [" + json + "]}");
      if (views.size() != 1) {
        throw new ApiException(HttpStatus.BAD_REQUEST, "expected one view definition", Map.of());
      }
      return views.get(0);
    } catch (ViewsFileException e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage(), Map.of());
    }
  }

  private ValidatedView check(ViewDefinition view) {
    return ViewValidator.validate(List.of(view), catalogs.schemaLookup()).get(0);
  }

  private void publish(ViewDefinition view) throws InterruptedException {
    commands.define(view, "api");
    LOG.info("View {} written through the API (version {})", view.name(), view.version());
  }

  private void authorize(Context ctx) {
    if (token == null) {
      return;
    }
    String header = ctx.header("Authorization");
    byte[] given =
        header != null && header.startsWith("Bearer ")
            ? header.substring("Bearer ".length()).getBytes(StandardCharsets.UTF_8)
            : new byte[0];
    if (!MessageDigest.isEqual(token, given)) {
      throw new ApiException(HttpStatus.UNAUTHORIZED, "missing or wrong bearer token", Map.of());
    }
  }

  private ViewRecord definition(String name) {
    return Optional.ofNullable(definitions().get(name))
        .orElseThrow(
            () -> new ApiException(HttpStatus.NOT_FOUND, "no view named '" + name + "'", Map.of()));
  }

  /** Every definition, from the global views store. */
  private Map<String, ViewRecord> definitions() {
    Map<String, ViewRecord> views = new TreeMap<>();
    KafkaStreams s = streams;
    if (s == null) {
      throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "Floe is starting", Map.of());
    }
    try {
      ReadOnlyKeyValueStore<String, ViewRecord> store =
          s.store(
              StoreQueryParameters.fromNameAndType(
                  StoreNames.VIEWS, QueryableStoreTypes.keyValueStore()));
      try (KeyValueIterator<String, ViewRecord> all = store.all()) {
        all.forEachRemaining(entry -> views.put(entry.key, entry.value));
      }
    } catch (InvalidStateStoreException e) {
      throw new ApiException(
          HttpStatus.SERVICE_UNAVAILABLE, "Floe is starting: " + e.getMessage(), Map.of());
    }
    return views;
  }

  static ObjectNode error(String message, Map<String, ?> details) {
    ObjectNode node = ViewStates.MAPPER.createObjectNode();
    node.put("error", message);
    details.forEach((k, v) -> node.putPOJO(k, v));
    return node;
  }

  @Override
  public void close() {
    app.stop();
  }

  /** A request that fails with a status and a message. */
  static final class ApiException extends RuntimeException {
    final HttpStatus status;
    final Map<String, ?> details;

    ApiException(HttpStatus status, String message, Map<String, ?> details) {
      super(message);
      this.status = status;
      this.details = details;
    }

    ApiException(HttpStatus status, String message) {
      this(status, message, Map.of());
    }
  }
}
