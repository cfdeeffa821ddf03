package io.floe.app.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.app.config.Secrets;
import io.floe.app.metrics.FloeMeters;
import io.floe.app.metrics.ViewStaleness;
import io.floe.app.service.CommitNotices;
import io.floe.app.service.ViewCommands;
import io.floe.app.service.ViewWrites;
import io.floe.app.views.ValidatedViewJson;
import io.floe.app.views.ViewDraft;
import io.floe.app.views.ViewNode;
import io.floe.app.views.ViewsFile;
import io.floe.app.views.ViewsFileException;
import io.floe.schemas.ViewRecord;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import io.floe.topology.view.ViewValidator;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.Header;
import io.javalin.http.HttpStatus;
import io.javalin.http.staticfiles.Location;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Floe's HTTP server (DESIGN §7): health checks, Prometheus metrics, the views API and the web UI.
 * Definitions come from the global views store; states come from the instance that maintains each
 * view. Changes are written to the views and requests topics, never to a store.
 *
 * <p>Safe by default: every request that changes something (any method but GET, HEAD and OPTIONS)
 * every read under {@code /api/} that shows catalog schemas (all but the list of views) and every
 * read under {@code /internal/} (instances asking each other for view states) is guarded by {@link
 * HttpAccess}; requests that change something must be {@code application/json}, even without a
 * body, so that a web page cannot send them without a CORS preflight, which this server never
 * grants (it sends no {@code Access-Control-*} header). A write of a view goes through {@link
 * ViewWrites} (checked against every view in force, published, awaited); a target is dropped only
 * if Floe created it for that view.
 */
public final class HttpApi implements AutoCloseable {

  /** Liveness: 200 unless Kafka Streams has failed. */
  public static final String LIVE_PATH = "/health/live";

  /**
   * Readiness: 200 while this instance could take on another's load (Kafka Streams running, every
   * store it keeps caught up), 503 otherwise.
   */
  public static final String READY_PATH = "/health/ready";

  /** Prometheus text format. */
  public static final String METRICS_PATH = "/metrics";

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

  /** Methods that change nothing; any other method is guarded and must carry JSON. */
  private static final Set<HandlerType> SAFE_METHODS =
      Set.of(HandlerType.GET, HandlerType.HEAD, HandlerType.OPTIONS);

  /** How long a write waits for this instance's views to show it. */
  private static final Duration WRITE_WAIT = Duration.ofSeconds(10);

  /** The only read under /api/ that everyone may make: names, tables and states, no schemas. */
  private static final Set<String> OPEN_API_READS = Set.of("/api/views");

  /** The source named in the messages about a request's body. */
  private static final String REQUEST = "request";

  private final Javalin app;
  private final CatalogConfig catalogs;
  private final ViewCommands commands;
  private final CommitNotices notices;
  private final FloeMeters meters;
  private final HttpAccess access;
  private final ViewIndex views;
  private final Duration maxStaleness;
  private final ViewWrites writes;
  private final StoreLagCache storeLags = new StoreLagCache();
  private volatile KafkaStreams streams;
  private volatile ViewStates states;
  private volatile long acceptableRecoveryLag;

  private HttpApi(
      String host,
      int port,
      CatalogConfig catalogs,
      ViewCommands commands,
      CommitNotices notices,
      FloeMeters meters,
      HttpAccess access,
      ViewIndex views,
      Duration maxStaleness) {
    this.catalogs = catalogs;
    this.maxStaleness = maxStaleness;
    this.commands = commands;
    this.notices = notices;
    this.meters = meters;
    this.access = access;
    this.views = views;
    this.writes =
        new ViewWrites(views, catalogs.targets(), catalogs::catalog, commands, "api", WRITE_WAIT);
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
    LOG.info("HTTP server listening on {}:{} ({})", host, app.port(), access.describe());
  }

  /**
   * Starts the server; {@code port} 0 picks a free port.
   *
   * @param notices where {@code POST /api/commits} publishes
   * @param views the views in force, compiled: what the API says of a view comes from there
   * @param maxStaleness the staleness objective of views that set none
   */
  public static HttpApi start(
      String host,
      int port,
      CatalogConfig catalogs,
      ViewCommands commands,
      CommitNotices notices,
      FloeMeters meters,
      HttpAccess access,
      ViewIndex views,
      Duration maxStaleness) {
    return new HttpApi(
        host, port, catalogs, commands, notices, meters, access, views, maxStaleness);
  }

  /** The port the server listens on. */
  public int port() {
    return app.port();
  }

  /**
   * Connects the server to the running Kafka Streams instance, reachable at {@code self}.
   *
   * @param acceptableRecoveryLag Kafka Streams' {@code acceptable.recovery.lag}: the most records a
   *     store may be behind its changelog for this instance to count as ready
   */
  public void attach(KafkaStreams streams, HostInfo self, long acceptableRecoveryLag) {
    this.acceptableRecoveryLag = acceptableRecoveryLag;
    this.streams = streams;
    this.states = new ViewStates(streams, self, access);
  }

  private void routes(io.javalin.config.RoutesConfig routes) {
    routes.before(this::guard);
    routes.get(LIVE_PATH, this::live);
    routes.get(READY_PATH, this::ready);
    routes.get(METRICS_PATH, this::metrics);
    routes.get(
        ViewStates.INTERNAL_PATH, ctx -> ctx.json(states == null ? Map.of() : states.local()));
    routes.get("/api/views", this::listViews);
    routes.post("/api/views", this::createView);
    routes.get("/api/views/{name}", this::getView);
    routes.put("/api/views/{name}", this::updateView);
    routes.delete("/api/views/{name}", this::deleteView);
    routes.post("/api/views/{name}/refresh", this::refreshView);
    routes.post("/api/validate", this::validate);
    routes.post("/api/commits", this::announceCommit);
    routes.exception(
        ApiException.class,
        (e, ctx) -> ctx.status(e.status).json(error(e.getMessage(), e.details)));
    routes.exception(
        Exception.class,
        (e, ctx) -> {
          LOG.warn("{} {} failed", ctx.method(), ctx.path(), e);
          ctx.status(HttpStatus.INTERNAL_SERVER_ERROR)
              .json(error(Secrets.text(e.getMessage()), Map.of()));
        });
  }

  /** Access and content-type rules, before any handler runs (a refusal skips the handler). */
  private void guard(Context ctx) {
    boolean safe = SAFE_METHODS.contains(ctx.method());
    String path = ctx.path().replaceAll("/{2,}", "/").replaceAll("(.)/$", "$1");
    boolean showsSchemas =
        safe
            && ctx.method() != HandlerType.OPTIONS
            && (path.startsWith("/api/") || path.startsWith("/internal/"))
            && !OPEN_API_READS.contains(path);
    if (!safe || showsSchemas) {
      switch (access.admit(ctx.header(Header.AUTHORIZATION), ctx.header(Header.HOST))) {
        case ADMITTED -> {}
        case NO_TOKEN -> {
          ctx.header(Header.WWW_AUTHENTICATE, "Bearer realm=\"floe\"");
          throw new ApiException(
              HttpStatus.UNAUTHORIZED,
              "missing or wrong bearer token: this request needs 'Authorization: Bearer <token>'"
                  + " with the token of "
                  + FloeConfig.HTTP_TOKEN);
        }
        case WRONG_HOST ->
            throw new ApiException(
                HttpStatus.FORBIDDEN,
                "this server has no token and is bound to loopback: it serves this request only"
                    + " when addressed as localhost, 127.0.0.1 or [::1], not as "
                    + ctx.header(Header.HOST)
                    + "; set "
                    + FloeConfig.HTTP_TOKEN
                    + " to reach it by other names");
      }
    }
    if (!safe) {
      String type = ctx.header(Header.CONTENT_TYPE);
      String media = type == null ? "" : type.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
      if (!media.equals("application/json")) {
        throw new ApiException(
            HttpStatus.UNSUPPORTED_MEDIA_TYPE,
            "requests that change something must be sent with 'Content-Type: application/json',"
                + " even without a body (got "
                + (type == null ? "none" : "'" + type + "'")
                + ")");
      }
    }
  }

  private void metrics(Context ctx) {
    long now = System.currentTimeMillis();
    Map<String, ViewStaleness> staleness = new TreeMap<>();
    (states == null ? Map.<String, ViewState>of() : states.local())
        .forEach((view, state) -> staleness.put(view, ViewStaleness.of(state, maxStaleness, now)));
    meters.viewStaleness(staleness);
    ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(meters.scrape());
  }

  private void live(Context ctx) {
    KafkaStreams s = streams;
    boolean failed = s != null && s.state() == KafkaStreams.State.ERROR;
    ctx.status(failed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK)
        .json(Map.of("status", failed ? "DOWN" : "UP"));
  }

  /**
   * Ready while this instance could take on another's load now, which is what a rolling update
   * waits for before it stops the next instance: Kafka Streams is RUNNING (every active task
   * restored; not while a rebalance hands tasks out and the stores it took restore) and every store
   * partition it keeps, standbys included, is within {@code acceptable.recovery.lag} records of its
   * changelog's end, Kafka Streams' own measure of a copy that can take a task over. The lags are
   * asked of the broker at most once per {@link StoreLagCache#INTERVAL}.
   */
  private void ready(Context ctx) {
    KafkaStreams s = streams;
    KafkaStreams.State state = s == null ? null : s.state();
    Map<String, Object> body = new TreeMap<>();
    body.put("streams", String.valueOf(state));
    boolean ready = false;
    if (state == KafkaStreams.State.RUNNING) {
      OptionalLong behind = storeLags.behind(s, () -> storePartitionsBehind(s));
      behind.ifPresent(n -> body.put("storePartitionsBehind", n));
      ready = behind.isPresent() && behind.getAsLong() == 0;
    }
    body.put("status", ready ? "READY" : "NOT_READY");
    ctx.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json(body);
  }

  /**
   * How many of this instance's store partitions are further behind their changelogs than {@code
   * acceptable.recovery.lag}, or empty when the broker did not say where the changelogs end.
   */
  private OptionalLong storePartitionsBehind(KafkaStreams s) {
    try {
      return OptionalLong.of(
          s.allLocalStorePartitionLags().values().stream()
              .flatMap(partitions -> partitions.values().stream())
              .filter(lag -> lag.offsetLag() > acceptableRecoveryLag)
              .count());
    } catch (StreamsException e) {
      LOG.debug("Cannot tell how far this instance's stores are behind their changelogs", e);
      return OptionalLong.empty();
    }
  }

  private void listViews(Context ctx) {
    Map<String, ViewRecord> definitions = definitions();
    Map<String, ViewState> all = states == null ? Map.of() : states.all();
    ArrayNode views = ViewStates.MAPPER.createArrayNode();
    for (ViewRecord definition : definitions.values()) {
      views.add(summary(definition, all.get(definition.getName())));
    }
    ctx.json(views);
  }

  private void getView(Context ctx) {
    String name = ctx.pathParam("name");
    ViewRecord definition = definition(name);
    ViewState state = states == null ? null : states.one(name).orElse(null);
    ObjectNode body = summary(definition, state);
    body.set("definition", ViewJson.definition(definition));
    Optional<CompiledView> compiled = views.view(name);
    ValidatedView checked =
        compiled.isPresent()
            ? ViewValidator.validate(compiled.get(), catalogs.schemaLookup())
            : check(StoredView.of(definition).toDefinition());
    body.set("plan", ValidatedViewJson.forWrite(checked));
    body.set("recentRefreshes", ViewJson.recent(state));
    ctx.json(body);
  }

  private void createView(Context ctx) throws InterruptedException {
    ViewDefinition view = parse(ctx.body(), null);
    requireStarted();
    try {
      writes.create(view);
    } catch (ViewWrites.RefusedException e) {
      throw new ApiException(HttpStatus.CONFLICT, e.getMessage());
    }
    ctx.status(HttpStatus.CREATED).json(Map.of("name", view.name(), "version", view.version()));
  }

  private void updateView(Context ctx) throws InterruptedException {
    ViewDefinition view = parse(ctx.body(), ctx.pathParam("name"));
    requireStarted();
    ViewWrites.Written written;
    try {
      written = writes.put(view);
    } catch (ViewWrites.RefusedException e) {
      throw new ApiException(HttpStatus.CONFLICT, e.getMessage());
    }
    ctx.status(written.created() ? HttpStatus.CREATED : HttpStatus.OK)
        .json(Map.of("name", view.name(), "version", view.version()));
  }

  /**
   * Deletes a view; with {@code dropTarget=true} also its target, but only a table whose {@code
   * floe.view} property names this view: otherwise nothing is deleted.
   */
  private void deleteView(Context ctx) throws InterruptedException {
    String name = ctx.pathParam("name");
    ViewRecord definition = definition(name);
    boolean dropped = false;
    if (Boolean.parseBoolean(ctx.queryParam("dropTarget"))) {
      try {
        dropped = writes.deleteWithTarget(name, TableName.parse(definition.getTarget()));
      } catch (ViewWrites.RefusedException e) {
        throw new ApiException(HttpStatus.CONFLICT, e.getMessage());
      }
    } else {
      writes.delete(name);
    }
    ctx.json(Map.of("name", name, "deleted", true, "targetDropped", dropped));
  }

  /**
   * Asks for a refresh now: of what changed, of every bucket with {@code full=true}, or, with
   * {@code from} and {@code to} (ISO-8601 instants, or dates meaning the start of that day in the
   * view's zone; {@code to} exclusive), of every bucket overlapping that range besides what
   * changed.
   */
  private void refreshView(Context ctx) throws InterruptedException {
    String name = ctx.pathParam("name");
    ViewRecord definition = definition(name);
    boolean full = Boolean.parseBoolean(ctx.queryParam("full"));
    String from = ctx.queryParam("from");
    String to = ctx.queryParam("to");
    if (from == null && to == null) {
      commands.refresh(name, full, "api");
      ctx.status(HttpStatus.ACCEPTED)
          .json(Map.of("name", name, "command", full ? "FULL_REFRESH" : "REFRESH"));
      return;
    }
    if (full) {
      throw new ApiException(
          HttpStatus.BAD_REQUEST,
          "Cannot set both full and a time range (from, to): a full refresh recomputes every"
              + " bucket");
    }
    TimeRange range;
    try {
      range = TimeRange.parse(from, to, ZoneId.of(definition.getTimezone()));
    } catch (IllegalArgumentException e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage());
    }
    commands.refreshRange(name, range, "api");
    ctx.status(HttpStatus.ACCEPTED)
        .json(
            Map.of(
                "name",
                name,
                "command",
                "REFRESH",
                "from",
                range.from().toString(),
                "to",
                range.to().toString()));
  }

  /**
   * A commit notice from a pipeline ({@code {"table": "catalog.namespace.table", "snapshotId":
   * 123}}, the snapshot optional), published as {@code floe publish-commit} publishes it: one
   * request instead of a JVM per notice.
   */
  private void announceCommit(Context ctx) throws InterruptedException {
    CommitRequest request = CommitRequest.parse(ctx.body(), catalogs);
    TableName name = request.table();
    CommitNotices.Published sent =
        notices.announce(
            catalogs,
            name,
            request.snapshotId(),
            null,
            note -> LOG.warn("Commit notice for {} posted without its snapshot: {}", name, note));
    ObjectNode body = ViewStates.MAPPER.createObjectNode();
    body.put("table", sent.table().toString());
    // A string, as every snapshot id the API answers with: a browser's numbers lose its low bits.
    body.put("snapshotId", sent.snapshotId() == null ? null : sent.snapshotId().toString());
    body.put("metadataLocation", sent.metadataLocation());
    body.put("topic", sent.topic());
    body.put("partition", sent.partition());
    body.put("offset", sent.offset());
    ctx.status(HttpStatus.ACCEPTED).json(body);
  }

  /** Live validation for the UI: the query (and, optionally, the rest of a definition). */
  private void validate(Context ctx) {
    ViewDraft draft;
    try {
      draft = ViewsFile.draft(REQUEST, body(ctx.body()));
    } catch (ViewsFileException e) {
      ctx.json(ValidatedViewJson.unreadable(e.getMessage()));
      return;
    }
    ctx.json(ValidatedViewJson.forDraft(draft, draft.validate(catalogs.schemaLookup())));
  }

  private ViewDefinition parse(String body, String pathName) {
    ViewNode.Mapping request = body(body);
    if (pathName != null) {
      Optional<ViewNode> named = request.get("name").filter(name -> !name.isNull());
      if (named.isPresent() && !pathName.equals(named.get().scalarText())) {
        throw new ApiException(
            HttpStatus.BAD_REQUEST,
            "the name in the body ("
                + named.get().scalarText()
                + ") is not the path's ("
                + pathName
                + ")",
            Map.of());
      }
      request = request.with("name", pathName);
    }
    ViewDefinition view;
    try {
      view = ViewsFile.view(REQUEST, request);
    } catch (ViewsFileException e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage(), Map.of());
    }
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

  /** A request's JSON object, each field with its position in the body for messages. */
  private static ViewNode.Mapping body(String body) {
    try {
      return ViewNode.jsonObject(REQUEST, body);
    } catch (ViewsFileException e) {
      throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage(), Map.of());
    }
  }

  /** A view as listed, from its compiled form in the index. */
  private ObjectNode summary(ViewRecord definition, ViewState state) {
    String name = definition.getName();
    return ViewJson.summary(
        definition,
        views.view(name).map(CompiledView::query).orElse(null),
        views.rejected().get(name),
        state == null ? null : ViewStaleness.of(state, maxStaleness, System.currentTimeMillis()),
        state);
  }

  private ValidatedView check(ViewDefinition view) {
    return ViewValidator.validate(List.of(view), catalogs.schemaLookup()).get(0);
  }

  private ViewRecord definition(String name) {
    return Optional.ofNullable(definitions().get(name))
        .orElseThrow(
            () -> new ApiException(HttpStatus.NOT_FOUND, "no view named '" + name + "'", Map.of()));
  }

  /** Every definition, from the global views store. */
  private Map<String, ViewRecord> definitions() {
    Map<String, ViewRecord> views = new TreeMap<>();
    try (KeyValueIterator<String, ViewRecord> all = viewsStore().all()) {
      all.forEachRemaining(entry -> views.put(entry.key, entry.value));
    } catch (InvalidStateStoreException e) {
      throw starting(e);
    }
    return views;
  }

  /**
   * Refuses a write until this instance reads floe.views: before, its views do not hold the views
   * in force and a write could neither be checked against them nor be seen to arrive.
   */
  private void requireStarted() {
    viewsStore();
  }

  /** The global views store, or a 503 while Floe is starting. */
  private ReadOnlyKeyValueStore<String, ViewRecord> viewsStore() {
    KafkaStreams s = streams;
    if (s == null) {
      throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "Floe is starting", Map.of());
    }
    try {
      return s.store(
          StoreQueryParameters.fromNameAndType(
              StoreNames.VIEWS, QueryableStoreTypes.keyValueStore()));
    } catch (InvalidStateStoreException e) {
      throw starting(e);
    }
  }

  private static ApiException starting(InvalidStateStoreException e) {
    return new ApiException(
        HttpStatus.SERVICE_UNAVAILABLE, "Floe is starting: " + e.getMessage(), Map.of());
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
