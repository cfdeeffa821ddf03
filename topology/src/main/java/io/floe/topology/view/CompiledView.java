package io.floe.topology.view;

import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * A view definition compiled once (DESIGN §6): its query parsed and checked for structure, so that
 * its source, target and buckets are known without parsing SQL again, and its plan bound to each
 * source schema at most once. Immutable apart from that memo; shared by every thread.
 *
 * <p>Two definitions of one view with the same {@link #version()} share their compiled form: a
 * change of refresh settings recompiles nothing.
 */
public final class CompiledView {

  private final ViewDefinition definition;
  private final long revision;
  private final String version;
  private final ParsedViewQuery query;
  private final Map<Schemas, Bound> bindings;

  /** The schemas of every table a binding read: the source's, then each dimension's by name. */
  private record Schemas(Types.StructType source, Map<TableName, Types.StructType> dimensions) {}

  private CompiledView(
      ViewDefinition definition,
      long revision,
      String version,
      ParsedViewQuery query,
      Map<Schemas, Bound> bindings) {
    this.definition = definition;
    this.revision = revision;
    this.version = version;
    this.query = query;
    this.bindings = bindings;
  }

  /**
   * Compiles a definition.
   *
   * @param revision the definition's place in the order of all definitions of the view (the
   *     revision its floe.views record carries, or its offset in records of earlier releases): a
   *     later definition has a larger revision
   * @throws InvalidViewException when the query breaks a structural rule
   */
  public static CompiledView compile(ViewDefinition definition, long revision)
      throws InvalidViewException {
    return new CompiledView(
        definition,
        revision,
        definition.version(),
        ViewQueryParser.parse(definition.query()),
        new ConcurrentHashMap<>());
  }

  /**
   * This view under a later definition: the compiled form is kept when the version is the same.
   *
   * @throws InvalidViewException when the new query breaks a structural rule
   */
  public CompiledView redefine(ViewDefinition changed, long newRevision)
      throws InvalidViewException {
    String changedVersion = changed.version();
    if (changedVersion.equals(version) && changed.query().equals(definition.query())) {
      return new CompiledView(changed, newRevision, version, query, bindings);
    }
    return compile(changed, newRevision);
  }

  /**
   * The query bound to one source schema: its plan, which the engine compiles (see {@code
   * refresh.eval.CompiledQuery#of}); the view package knows nothing of the engine.
   */
  public static final class Bound {
    private final ViewPlan plan;

    private Bound(ViewPlan plan) {
      this.plan = plan;
    }

    public ViewPlan plan() {
      return plan;
    }
  }

  /**
   * The query of a view of one table bound to {@code sourceSchema}, memoized per schema.
   *
   * @throws InvalidViewException when the query does not fit the schema
   * @throws IllegalArgumentException when the view joins dimensions, whose schemas it needs
   */
  public Bound bind(Schema sourceSchema) throws InvalidViewException {
    return bind(sourceSchema, Map.of());
  }

  /**
   * The query bound to {@code sourceSchema} and the schema of each dimension it joins ({@link
   * #dimensions}), memoized per set of schemas.
   *
   * @throws InvalidViewException when the query does not fit the schemas
   * @throws IllegalArgumentException when a dimension's schema is not given
   */
  public Bound bind(Schema sourceSchema, Map<TableName, Schema> dimensionSchemas)
      throws InvalidViewException {
    Map<TableName, Types.StructType> dimensionStructs = new LinkedHashMap<>();
    for (TableName dimension : dimensions()) {
      Schema schema = dimensionSchemas.get(dimension);
      if (schema == null) {
        throw new IllegalArgumentException(
            "Cannot bind view " + name() + ": no schema given for dimension " + dimension);
      }
      dimensionStructs.put(dimension, schema.asStruct());
    }
    Schemas key = new Schemas(sourceSchema.asStruct(), dimensionStructs);
    Bound known = bindings.get(key);
    if (known != null) {
      return known;
    }
    Bound bound =
        new Bound(ViewQueryBinder.bind(query, sourceSchema, dimensionSchemas, definition.zone()));
    Bound raced = bindings.putIfAbsent(key, bound);
    return raced == null ? bound : raced;
  }

  public String name() {
    return definition.name();
  }

  public ViewDefinition definition() {
    return definition;
  }

  /** The hash of what decides the view's rows ({@link ViewDefinition#version()}). */
  public String version() {
    return version;
  }

  /** The order of this definition among all definitions of the view; later is larger. */
  public long revision() {
    return revision;
  }

  public ParsedViewQuery query() {
    return query;
  }

  /** The bucketed table the view reads (with dimensions: its fact table). */
  public TableName source() {
    return query.source();
  }

  /** The dimension tables the view joins to its source, in join order; empty for most views. */
  public List<TableName> dimensions() {
    return query.dimensions().stream().map(ParsedViewQuery.JoinedTable::table).toList();
  }

  /** The table that holds the view. */
  public TableName target() {
    return definition.target();
  }

  /** The source column inside {@code date_trunc}, as the query writes it. */
  public String bucketColumn() {
    return query.bucketColumn();
  }

  public Granularity granularity() {
    return query.granularity();
  }

  public RefreshSettings refresh() {
    return definition.refresh();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CompiledView other
        && revision == other.revision
        && definition.equals(other.definition);
  }

  @Override
  public int hashCode() {
    return Objects.hash(definition, revision);
  }

  @Override
  public String toString() {
    return "view " + name() + " (version " + version + ", revision " + revision + ")";
  }
}
