package io.floe.app.views;

import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads views files (DESIGN §1):
 *
 * <pre>
 * views:
 *   - name: ohlcv_1m
 *     query: |
 *       SELECT symbol, date_trunc('minute', ts) AS minute_ts, ... GROUP BY 1, 2
 *     target: lake.analytics.ohlcv_1m
 *     target_partitioning: [day(minute_ts)]   # optional
 *     timezone: Europe/Paris                  # optional, UTC by default
 *     refresh:                                # optional
 *       linger: 200ms                         # after the first change not yet covered
 *       min_interval: 0s                      # between two refreshes of the view
 *       chunk_rows: 2000000                   # source rows per chunk of a large refresh
 *       chunk_buckets: 1440                   # at most this many buckets per chunk
 *       max_staleness: 5m                     # the staleness objective (floe's default)
 * </pre>
 *
 * Every problem is reported with the file, line and column, the view and the field; all problems of
 * a file are reported together. The HTTP API's bodies are checked by the same rules ({@link
 * #view}), read from JSON by {@link ViewNode#jsonObject}. The query itself is checked later, by
 * {@link io.floe.topology.view.ViewValidator}.
 */
public final class ViewsFile {

  static final String NAME = "name";
  static final String QUERY = "query";
  static final String TARGET = "target";
  static final String TARGET_PARTITIONING = "target_partitioning";
  static final String TIMEZONE = "timezone";
  static final String REFRESH = "refresh";
  static final String LINGER = "linger";
  static final String MIN_INTERVAL = "min_interval";
  static final String CHUNK_BUCKETS = "chunk_buckets";
  static final String CHUNK_ROWS = "chunk_rows";
  static final String MAX_STALENESS = "max_staleness";

  /** Settings of earlier releases, with what replaced them. */
  private static final Map<String, String> REPLACED =
      Map.of(
          "debounce",
          "'refresh.linger' (a refresh starts this long after the first change it has not covered)",
          "max_delay",
          "'refresh.linger' (which bounds the wait however busy the source is) and"
              + " 'refresh.min_interval' (the shortest time between two refreshes)");

  private static final Set<String> VIEW_FIELDS =
      Set.of(NAME, QUERY, TARGET, TARGET_PARTITIONING, TIMEZONE, REFRESH);
  private static final String VIEW_FIELD_LIST =
      String.join(", ", NAME, QUERY, TARGET, TARGET_PARTITIONING, TIMEZONE, REFRESH);
  private static final Set<String> REFRESH_FIELDS =
      Set.of(LINGER, MIN_INTERVAL, CHUNK_BUCKETS, CHUNK_ROWS, MAX_STALENESS);

  private static final Pattern VIEW_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}");
  private static final Pattern DURATION =
      Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)", Pattern.CASE_INSENSITIVE);

  private final String source;
  private final List<String> problems = new ArrayList<>();

  private ViewsFile(String source) {
    this.source = source;
  }

  /** Loads the views of a file. */
  public static List<ViewDefinition> load(Path path) throws ViewsFileException {
    return parse(path.toString(), read(path));
  }

  /** The text of a views file, for {@link #parse}. */
  public static String read(Path path) throws ViewsFileException {
    try {
      return Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ViewsFileException(path + ": cannot read views file: " + e.getMessage());
    }
  }

  /**
   * Parses views from YAML text. A text without a document (empty, only blanks or comments) and a
   * {@code views} key without a list are errors, not "no views": that is what an editor's
   * non-atomic save or an interrupted copy leaves for a moment, and reading it as no views would
   * delete them all. Only an explicit {@code views: []} declares none.
   *
   * @param source the file name, for messages
   */
  public static List<ViewDefinition> parse(String source, String yaml) throws ViewsFileException {
    return new ViewsFile(source).read(yaml);
  }

  /**
   * Loads several files as one set of views, rejecting a name declared twice.
   *
   * @throws ViewsFileException listing the problems of every file
   */
  public static List<ViewDefinition> loadAll(List<Path> paths) throws ViewsFileException {
    List<ViewDefinition> all = new ArrayList<>();
    Map<String, Path> declaredIn = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (Path path : paths) {
      try {
        for (ViewDefinition view : load(path)) {
          Path earlier = declaredIn.putIfAbsent(view.name(), path);
          if (earlier != null) {
            problems.add(path + ": view '" + view.name() + "' is already declared in " + earlier);
          } else {
            all.add(view);
          }
        }
      } catch (ViewsFileException e) {
        problems.add(e.getMessage());
      }
    }
    if (!problems.isEmpty()) {
      throw new ViewsFileException(String.join("\n", problems));
    }
    return all;
  }

  private List<ViewDefinition> read(String yaml) throws ViewsFileException {
    Node composed;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false);
      composed = new Yaml(options).compose(new StringReader(yaml));
    } catch (MarkedYAMLException e) {
      throw new ViewsFileException(
          at(ViewNode.Position.of(e.getProblemMark())) + "malformed YAML: " + e.getProblem());
    } catch (YAMLException e) {
      throw new ViewsFileException(source + ": malformed YAML: " + e.getMessage());
    }
    ViewNode root = composed == null ? null : ViewNode.of(composed);
    if (root == null || root.isNull()) {
      throw new ViewsFileException(
          source
              + ": the views file is empty (if it is being written, it is read again); write"
              + " 'views: []' to remove every view");
    }
    List<ViewNode> items = viewsList(root);
    if (items == null) {
      throw new ViewsFileException(String.join("\n", problems));
    }
    List<ViewDefinition> views = new ArrayList<>();
    Map<String, ViewNode> names = new LinkedHashMap<>();
    for (ViewNode item : items) {
      ViewDefinition view = view(item);
      if (view == null) {
        continue;
      }
      ViewNode earlier = names.putIfAbsent(view.name(), item);
      if (earlier != null) {
        problems.add(
            at(item.at())
                + "view '"
                + view.name()
                + "' is declared twice (first at line "
                + earlier.at().line()
                + ")");
      } else {
        views.add(view);
      }
    }
    if (!problems.isEmpty()) {
      throw new ViewsFileException(String.join("\n", problems));
    }
    return views;
  }

  /**
   * Reads one view definition with the fields and checks of a views file entry, whatever syntax it
   * was written in (the HTTP API's JSON bodies come here too).
   *
   * @param source what the definition was read from, for messages
   * @throws ViewsFileException listing every problem, each at its line and column
   */
  public static ViewDefinition view(String source, ViewNode node) throws ViewsFileException {
    ViewsFile reader = new ViewsFile(source);
    ViewDefinition view = reader.view(node);
    if (view == null) {
      throw new ViewsFileException(String.join("\n", reader.problems));
    }
    return view;
  }

  /**
   * Reads what a validate request gives of a view: the fields and checks of a views file entry, the
   * name and target optional.
   *
   * @param source what the draft was read from, for messages
   * @throws ViewsFileException listing every problem, each at its line and column
   */
  public static ViewDraft draft(String source, ViewNode node) throws ViewsFileException {
    ViewsFile reader = new ViewsFile(source);
    ViewDraft draft = reader.read(node, Fields.NAME_AND_TARGET_OPTIONAL);
    if (draft == null) {
      throw new ViewsFileException(String.join("\n", reader.problems));
    }
    return draft;
  }

  /** Which of a view's fields a reading requires. */
  private enum Fields {
    ALL_REQUIRED,
    NAME_AND_TARGET_OPTIONAL
  }

  /** The items of the top-level {@code views} list, or null after recording why there is none. */
  private List<ViewNode> viewsList(ViewNode root) {
    if (!(root instanceof ViewNode.Mapping mapping)) {
      problems.add(at(root.at()) + "expected a mapping with a 'views' list");
      return null;
    }
    ViewNode views = null;
    for (ViewNode.Mapping.Field field : mapping.fields()) {
      if ("views".equals(field.key())) {
        views = field.value();
      } else {
        problems.add(
            at(field.keyAt()) + "unknown top-level field '" + field.key() + "' (expected: views)");
      }
    }
    if (views == null) {
      problems.add(at(root.at()) + "missing field 'views'");
      return null;
    }
    if (views.isNull()) {
      problems.add(
          at(root.at())
              + "'views' has no list (the file may be cut short); write 'views: []' to remove"
              + " every view");
      return null;
    }
    if (!(views instanceof ViewNode.Sequence sequence)) {
      problems.add(at(views.at()) + "'views' must be a list of views");
      return null;
    }
    return sequence.items();
  }

  private ViewDefinition view(ViewNode node) {
    ViewDraft draft = read(node, Fields.ALL_REQUIRED);
    return draft == null
        ? null
        : new ViewDefinition(
            draft.name(),
            draft.query(),
            draft.target(),
            draft.targetPartitioning(),
            draft.zone(),
            draft.refresh());
  }

  /** The view's fields, or null after recording every problem with them. */
  private ViewDraft read(ViewNode node, Fields required) {
    if (!(node instanceof ViewNode.Mapping mapping)) {
      problems.add(at(node.at()) + "each view must be a mapping with name and query");
      return null;
    }
    Map<String, ViewNode.Mapping.Field> fields = new LinkedHashMap<>();
    for (ViewNode.Mapping.Field field : mapping.fields()) {
      fields.put(field.key(), field);
    }
    String name = text(fields.get(NAME));
    String label = name == null ? "view at line " + node.at().line() : "view '" + name + "'";
    int before = problems.size();

    for (Map.Entry<String, ViewNode.Mapping.Field> field : fields.entrySet()) {
      if (!VIEW_FIELDS.contains(field.getKey())) {
        problems.add(
            at(field.getValue().keyAt())
                + label
                + ": unknown field '"
                + field.getKey()
                + "' (expected one of: "
                + VIEW_FIELD_LIST
                + ")");
      }
    }
    if (name == null) {
      if (required == Fields.ALL_REQUIRED) {
        problems.add(at(node.at()) + label + ": missing field 'name'");
      }
    } else if (!VIEW_NAME.matcher(name).matches()) {
      problems.add(
          at(valueAt(fields.get(NAME)))
              + label
              + ": field 'name' must be letters, digits, '_', '-' or '.', at most 200");
    }
    String query = requiredText(fields, QUERY, node, label);
    TableName target =
        required == Fields.ALL_REQUIRED || isGiven(fields.get(TARGET))
            ? target(fields, node, label)
            : null;
    List<TargetPartitionField> partitioning = partitioning(fields.get(TARGET_PARTITIONING), label);
    ZoneId zone = zone(fields.get(TIMEZONE), label);
    RefreshSettings refresh = refresh(fields.get(REFRESH), label);

    if (problems.size() > before) {
      return null;
    }
    return new ViewDraft(
        name, query, target, partitioning, zone == null ? ViewDefinition.UTC : zone, refresh);
  }

  /** Whether a field is there with a value: a JSON body may send null for a field it leaves out. */
  private static boolean isGiven(ViewNode.Mapping.Field field) {
    return field != null && !field.value().isNull();
  }

  private String requiredText(
      Map<String, ViewNode.Mapping.Field> fields, String field, ViewNode view, String label) {
    ViewNode.Mapping.Field tuple = fields.get(field);
    if (tuple == null) {
      problems.add(at(view.at()) + label + ": missing field '" + field + "'");
      return null;
    }
    String value = text(tuple);
    if (value == null || value.isBlank()) {
      problems.add(
          at(valueAt(tuple)) + label + ": field '" + field + "' must be a non-empty string");
      return null;
    }
    return value;
  }

  private TableName target(
      Map<String, ViewNode.Mapping.Field> fields, ViewNode view, String label) {
    String value = requiredText(fields, TARGET, view, label);
    if (value == null) {
      return null;
    }
    try {
      return TableName.parse(value.trim());
    } catch (IllegalArgumentException e) {
      problems.add(at(valueAt(fields.get(TARGET))) + label + ": field 'target': " + e.getMessage());
      return null;
    }
  }

  private List<TargetPartitionField> partitioning(ViewNode.Mapping.Field tuple, String label) {
    if (tuple == null || tuple.value().isNull()) {
      return List.of();
    }
    List<String> texts = new ArrayList<>();
    ViewNode value = tuple.value();
    if (value instanceof ViewNode.Sequence sequence) {
      for (ViewNode item : sequence.items()) {
        texts.add(item.scalarText());
      }
    } else if (value instanceof ViewNode.Scalar scalar) {
      texts.addAll(trinoArray(scalar.text()));
    } else {
      problems.add(
          at(value.at())
              + label
              + ": field 'target_partitioning' must be a list such as [day(minute_ts)]");
      return List.of();
    }
    List<TargetPartitionField> fields = new ArrayList<>();
    for (String text : texts) {
      try {
        fields.add(TargetPartitionField.parse(text == null ? "" : text));
      } catch (IllegalArgumentException e) {
        problems.add(at(value.at()) + label + ": field 'target_partitioning': " + e.getMessage());
      }
    }
    return fields;
  }

  /** Accepts iceberg-ivm's Trino-style {@code ARRAY['day(minute)']} as well as a plain field. */
  private static List<String> trinoArray(String text) {
    String trimmed = text.trim();
    Matcher array =
        Pattern.compile("ARRAY\\s*\\[(.*)]", Pattern.CASE_INSENSITIVE | Pattern.DOTALL)
            .matcher(trimmed);
    if (!array.matches()) {
      return List.of(trimmed);
    }
    List<String> items = new ArrayList<>();
    Matcher quoted = Pattern.compile("'([^']*)'").matcher(array.group(1));
    while (quoted.find()) {
      items.add(quoted.group(1));
    }
    return items;
  }

  private ZoneId zone(ViewNode.Mapping.Field tuple, String label) {
    if (tuple == null || tuple.value().isNull()) {
      return null;
    }
    String id = text(tuple);
    try {
      return ZoneId.of(id == null ? "" : id.trim());
    } catch (DateTimeException e) {
      problems.add(
          at(valueAt(tuple))
              + label
              + ": field 'timezone': unknown time zone '"
              + id
              + "' (use an IANA name such as Europe/Paris, or UTC)");
      return null;
    }
  }

  private RefreshSettings refresh(ViewNode.Mapping.Field tuple, String label) {
    if (tuple == null || tuple.value().isNull()) {
      return RefreshSettings.DEFAULTS;
    }
    if (!(tuple.value() instanceof ViewNode.Mapping mapping)) {
      problems.add(
          at(valueAt(tuple))
              + label
              + ": field 'refresh' must be a mapping of linger, min_interval, chunk_rows,"
              + " chunk_buckets, max_staleness");
      return null;
    }
    Duration linger = RefreshSettings.DEFAULT_LINGER;
    Duration minInterval = RefreshSettings.DEFAULT_MIN_INTERVAL;
    OptionalInt chunkBuckets = OptionalInt.empty();
    OptionalLong chunkRows = OptionalLong.empty();
    Optional<Duration> maxStaleness = Optional.empty();
    int before = problems.size();
    for (ViewNode.Mapping.Field field : mapping.fields()) {
      String key = field.key();
      String value = text(field);
      String where = at(valueAt(field)) + label + ": field 'refresh." + key + "'";
      if (REPLACED.containsKey(key)) {
        problems.add(
            at(field.keyAt())
                + label
                + ": field 'refresh."
                + key
                + "' is no longer supported: use "
                + REPLACED.get(key));
      } else if (!REFRESH_FIELDS.contains(key)) {
        problems.add(
            at(field.keyAt())
                + label
                + ": unknown field 'refresh."
                + key
                + "' (expected one of: linger, min_interval, chunk_rows, chunk_buckets,"
                + " max_staleness)");
      } else if (key.equals(CHUNK_BUCKETS) || key.equals(CHUNK_ROWS)) {
        try {
          long number = Long.parseLong(value == null ? "" : value.trim().replace("_", ""));
          if (number < 1 || (key.equals(CHUNK_BUCKETS) && number > Integer.MAX_VALUE)) {
            throw new NumberFormatException();
          }
          if (key.equals(CHUNK_BUCKETS)) {
            chunkBuckets = OptionalInt.of((int) number);
          } else {
            chunkRows = OptionalLong.of(number);
          }
        } catch (NumberFormatException e) {
          problems.add(where + " must be a positive whole number, got '" + value + "'");
        }
      } else {
        Duration duration = duration(value);
        if (duration == null) {
          problems.add(
              where + " must be a duration such as 500ms, 1s, 2m or 1h, got '" + value + "'");
        } else if (key.equals(LINGER)) {
          linger = duration;
        } else if (key.equals(MAX_STALENESS)) {
          maxStaleness = Optional.of(duration);
        } else {
          minInterval = duration;
        }
      }
    }
    if (problems.size() > before) {
      return null;
    }
    try {
      return new RefreshSettings(linger, minInterval, chunkBuckets, chunkRows, maxStaleness);
    } catch (IllegalArgumentException e) {
      problems.add(at(valueAt(tuple)) + label + ": field 'refresh': " + e.getMessage());
      return null;
    }
  }

  /** Parses {@code 500ms}, {@code 1s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601. */
  public static Duration duration(String text) {
    if (text == null) {
      return null;
    }
    String trimmed = text.trim();
    Matcher m = DURATION.matcher(trimmed);
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      return switch (m.group(2).toLowerCase(Locale.ROOT)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        case "h" -> Duration.ofHours(amount);
        default -> Duration.ofDays(amount);
      };
    }
    try {
      Duration parsed = Duration.parse(trimmed);
      return parsed.isNegative() ? null : parsed;
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static String text(ViewNode.Mapping.Field field) {
    return field == null || field.value().isNull() ? null : field.value().scalarText();
  }

  private static ViewNode.Position valueAt(ViewNode.Mapping.Field field) {
    return field.value().at();
  }

  private String at(ViewNode.Position position) {
    return ViewNode.at(source, position);
  }
}
