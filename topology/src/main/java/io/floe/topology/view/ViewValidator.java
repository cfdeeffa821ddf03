package io.floe.topology.view;

import io.floe.topology.view.sql.ViewQueryBinder;
import io.floe.topology.view.sql.ViewQueryParser;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * Checks a set of view definitions: each query's structure, and, when source schemas can be looked
 * up, each query against its source table. A view whose source is another view's target (a chained
 * view) is checked against the upstream view's output schema when the target table does not exist
 * yet.
 */
public final class ViewValidator {

  /** Where source schemas come from: usually the configured Iceberg catalogs. */
  @FunctionalInterface
  public interface SchemaLookup {
    /**
     * The current schema of {@code table}, or empty if the table does not exist.
     *
     * @throws IllegalArgumentException naming the problem when the table's catalog is unknown or
     *     cannot be reached
     */
    Optional<Schema> schemaOf(TableName table);

    /**
     * Why the hash table of a dimension a view joins cannot fit its memory bound ({@code
     * floe.join.dimension.bytes}), judged from the dimension's current snapshot without reading its
     * rows; empty when it may fit or when this lookup cannot tell. A refresh still enforces the
     * bound on the rows it reads.
     */
    default Optional<String> tooLargeToJoin(ViewPlan.Dimension dimension) {
      return Optional.empty();
    }
  }

  /** A table the view reads that does not exist (yet): the view waits for it. */
  private static final class MissingTable extends Exception {
    private static final long serialVersionUID = 1L;

    MissingTable(String message) {
      super(message, null, false, false);
    }
  }

  private final SchemaLookup lookup;
  private final Map<String, ViewDefinition> byName = new HashMap<>();
  private final Map<TableName, ViewDefinition> byTarget = new HashMap<>();
  private final Map<String, ValidatedView> done = new HashMap<>();
  private final Set<String> inProgress = new LinkedHashSet<>();

  private ViewValidator(List<ViewDefinition> views, SchemaLookup lookup) {
    this.lookup = lookup;
    for (ViewDefinition view : views) {
      byName.put(view.name(), view);
      byTarget.put(view.target(), view);
    }
  }

  /** Checks only what the queries' structure tells: no source schema is read. */
  public static List<ValidatedView> validateStructure(List<ViewDefinition> views) {
    return validate(views, null);
  }

  /**
   * Checks every view, against its source schema when {@code lookup} is given.
   *
   * @return one result per view, in the order given
   */
  public static List<ValidatedView> validate(List<ViewDefinition> views, SchemaLookup lookup) {
    ViewValidator validator = new ViewValidator(views, lookup);
    List<ValidatedView> results = new ArrayList<>();
    for (ViewDefinition view : views) {
      results.add(validator.check(view));
    }
    return results;
  }

  /**
   * A compiled view checked against its source table's current schema, bound through the view's own
   * memo: nothing is parsed again.
   */
  public static ValidatedView validate(CompiledView view, SchemaLookup lookup) {
    ViewDefinition definition = view.definition();
    Optional<Schema> schema;
    try {
      schema = lookup.schemaOf(view.source());
    } catch (IllegalArgumentException e) {
      return ValidatedView.invalid(definition, view.query(), e.getMessage());
    }
    if (schema.isEmpty()) {
      return new ValidatedView(
          definition,
          view.query(),
          null,
          "source table " + view.source() + " does not exist",
          true,
          null);
    }
    ViewPlan plan;
    try {
      plan = view.bind(schema.get(), dimensionSchemas(view.dimensions(), lookup)).plan();
    } catch (MissingTable e) {
      return new ValidatedView(definition, view.query(), null, e.getMessage(), true, null);
    } catch (IllegalArgumentException e) {
      return ValidatedView.invalid(definition, view.query(), e.getMessage());
    } catch (InvalidViewException e) {
      return ValidatedView.invalid(definition, view.query(), e);
    }
    String tooLarge = tooLargeToJoin(plan, lookup);
    return tooLarge == null
        ? ValidatedView.valid(definition, view.query(), plan)
        : ValidatedView.invalid(definition, view.query(), tooLarge);
  }

  /**
   * The schema of each dimension table, by name.
   *
   * @throws MissingTable naming the first dimension that does not exist
   * @throws IllegalArgumentException when a dimension's catalog is unknown or cannot be reached
   */
  private static Map<TableName, Schema> dimensionSchemas(
      List<TableName> dimensions, SchemaLookup lookup) throws MissingTable {
    Map<TableName, Schema> schemas = new HashMap<>();
    for (TableName dimension : dimensions) {
      Optional<Schema> schema = lookup.schemaOf(dimension);
      if (schema.isEmpty()) {
        throw new MissingTable("dimension table " + dimension + " does not exist");
      }
      schemas.put(dimension, schema.get());
    }
    return schemas;
  }

  /** Why a dimension of the plan is too large to join, or null. */
  private static String tooLargeToJoin(ViewPlan plan, SchemaLookup lookup) {
    for (ViewPlan.Dimension dimension : plan.dimensions()) {
      Optional<String> reason = lookup.tooLargeToJoin(dimension);
      if (reason.isPresent()) {
        return reason.get();
      }
    }
    return null;
  }

  private ValidatedView check(ViewDefinition view) {
    ValidatedView known = done.get(view.name());
    if (known != null) {
      return known;
    }
    if (!inProgress.add(view.name())) {
      return ValidatedView.invalid(
          view,
          null,
          "views form a cycle: " + String.join(" -> ", inProgress) + " -> " + view.name());
    }
    ValidatedView result = checkUncached(view);
    inProgress.remove(view.name());
    done.put(view.name(), result);
    return result;
  }

  /**
   * Checks what a request gives of a view before it names the view or its target: its query, the
   * target's partitioning and the time zone, against the source's schema when {@code lookup} is
   * given. The result has no definition; nothing is checked as if it had a name or a target.
   */
  public static ValidatedView validateDraft(
      String query, List<TargetPartitionField> partitioning, ZoneId zone, SchemaLookup lookup) {
    return new ViewValidator(List.of(), lookup)
        .checkUncached(
            null, query, List.copyOf(partitioning), zone == null ? ViewDefinition.UTC : zone);
  }

  private ValidatedView checkUncached(ViewDefinition view) {
    return checkUncached(view, view.query(), view.targetPartitioning(), view.zone());
  }

  /**
   * Checks a view's parts; {@code view} is its definition, or null for a draft, which no other
   * view's target can be the source of.
   */
  private ValidatedView checkUncached(
      ViewDefinition view, String sql, List<TargetPartitionField> partitioning, ZoneId zone) {
    ParsedViewQuery query;
    try {
      query = ViewQueryParser.parse(sql);
    } catch (InvalidViewException e) {
      return ValidatedView.invalid(view, null, e);
    }
    String partitioningProblem = checkPartitionColumns(partitioning, query);
    if (partitioningProblem != null) {
      return ValidatedView.invalid(view, query, partitioningProblem);
    }
    if (lookup == null) {
      return ValidatedView.valid(view, query, null);
    }
    Schema sourceSchema;
    try {
      Optional<Schema> schema = sourceSchema(view, query.source());
      if (schema.isEmpty()) {
        return new ValidatedView(
            view, query, null, "source table " + query.source() + " does not exist", true, null);
      }
      sourceSchema = schema.get();
    } catch (IllegalArgumentException e) {
      return ValidatedView.invalid(view, query, e.getMessage());
    }
    ViewPlan plan;
    try {
      List<TableName> dimensions =
          query.dimensions().stream().map(ParsedViewQuery.JoinedTable::table).toList();
      plan = ViewQueryBinder.bind(query, sourceSchema, dimensionSchemas(dimensions, lookup), zone);
    } catch (MissingTable e) {
      return new ValidatedView(view, query, null, e.getMessage(), true, null);
    } catch (IllegalArgumentException e) {
      return ValidatedView.invalid(view, query, e.getMessage());
    } catch (InvalidViewException e) {
      return ValidatedView.invalid(view, query, e);
    }
    String tooLarge = tooLargeToJoin(plan, lookup);
    if (tooLarge != null) {
      return ValidatedView.invalid(view, query, tooLarge);
    }
    try {
      partitionSpec(partitioning, plan.outputSchema());
    } catch (ValidationException | IllegalArgumentException e) {
      return ValidatedView.invalid(view, query, "target_partitioning: " + e.getMessage());
    }
    return ValidatedView.valid(view, query, plan);
  }

  /**
   * The source's schema; a chained view's upstream output schema if its target is not there yet.
   */
  private Optional<Schema> sourceSchema(ViewDefinition view, TableName source) {
    Optional<Schema> schema = lookup.schemaOf(source);
    if (schema.isPresent() || view == null) {
      return schema;
    }
    ViewDefinition upstream = byTarget.get(source);
    if (upstream == null || upstream.name().equals(view.name())) {
      return Optional.empty();
    }
    ValidatedView checked = check(upstream);
    if (!checked.isValid()) {
      throw new IllegalArgumentException(
          "source table "
              + source
              + " is the target of view '"
              + upstream.name()
              + "', which is invalid");
    }
    return Optional.of(checked.plan().outputSchema());
  }

  private static String checkPartitionColumns(
      List<TargetPartitionField> partitioning, ParsedViewQuery query) {
    for (TargetPartitionField field : partitioning) {
      boolean found =
          query.outputColumns().stream().anyMatch(c -> c.equalsIgnoreCase(field.column()));
      if (!found) {
        return "target_partitioning: "
            + field
            + " names no output column (outputs: "
            + String.join(", ", query.outputColumns())
            + ")";
      }
    }
    return null;
  }

  /**
   * The partition spec of the view's target.
   *
   * @throws IllegalArgumentException naming the field whose transform does not fit its column
   */
  public static PartitionSpec partitionSpec(ViewDefinition view, Schema outputSchema) {
    return partitionSpec(view.targetPartitioning(), outputSchema);
  }

  private static PartitionSpec partitionSpec(
      List<TargetPartitionField> partitioning, Schema outputSchema) {
    PartitionSpec.Builder spec = PartitionSpec.builderFor(outputSchema).withSpecId(0);
    for (TargetPartitionField field : partitioning) {
      String column = outputSchema.caseInsensitiveFindField(field.column()).name();
      TargetPartitionField resolved =
          new TargetPartitionField(field.transform(), column, field.width());
      try {
        // Built alone first, so that a transform that does not fit is reported with its field.
        resolved.addTo(PartitionSpec.builderFor(outputSchema)).build();
      } catch (ValidationException | IllegalArgumentException e) {
        throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
      }
      resolved.addTo(spec);
    }
    return spec.build();
  }
}
