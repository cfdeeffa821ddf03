package io.floe.app.views;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.sql.FlatQuery;
import java.time.ZoneId;
import org.apache.iceberg.types.Types;

/**
 * The one JSON form of a checked view, which {@code floe validate --json} prints and the HTTP API
 * answers ({@code POST /api/validate}, the {@code plan} of {@code GET /api/views/{name}}): what
 * Floe derives from the query, or why it is invalid with the rule and position when the query
 * breaks one. {@code dimensions} lists each dimension table the query joins (table, INNER or LEFT,
 * the fact and dimension join keys, the dimension columns read). Fields it cannot know are null:
 * the derived ones without a parsed query, column types, a dimension's keys and columns, {@code
 * deltaPath} and {@code flatQuery} (the one SELECT over the source Floe maintains, subqueries and
 * WITH queries merged) without the source's schema.
 */
public final class ValidatedViewJson {

  private ValidatedViewJson() {}

  /** The view as {@code floe validate} judges it: valid only when nothing is wrong. */
  public static ObjectNode of(ValidatedView checked) {
    ViewDefinition view = checked.definition();
    return write(
        checked, checked.isValid(), checked.error(), view.name(), view.target(), view.zone());
  }

  /**
   * The view as a write judges it: valid also when the only problem is that its source does not
   * exist yet, which a write accepts (the view starts once the table appears).
   */
  public static ObjectNode forWrite(ValidatedView checked) {
    ViewDefinition view = checked.definition();
    return write(
        checked, asWrite(checked), checked.error(), view.name(), view.target(), view.zone());
  }

  /**
   * A draft as a write would judge it ({@link #forWrite}), with the name and target it gives: null
   * where it gives none.
   */
  public static ObjectNode forDraft(ViewDraft draft, ValidatedView checked) {
    return write(
        checked, asWrite(checked), checked.error(), draft.name(), draft.target(), draft.zone());
  }

  /**
   * A definition that could not be read at all (a field of the wrong kind, a time zone that does
   * not exist): the same fields, invalid with the reader's message, null or empty where nothing
   * could be derived.
   */
  public static ObjectNode unreadable(String error) {
    return write(null, false, error, null, null, null);
  }

  private static boolean asWrite(ValidatedView checked) {
    return checked.isValid() || checked.sourceMissing();
  }

  /** The one writer; {@code checked} is null for a definition that could not be read. */
  private static ObjectNode write(
      ValidatedView checked,
      boolean valid,
      String error,
      String name,
      TableName target,
      ZoneId zone) {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("name", name);
    node.put("valid", valid);
    node.put("error", error);
    node.put(
        "checked", checked == null ? null : checked.isSchemaChecked() ? "schema" : "structure");
    InvalidViewException invalid = checked == null ? null : checked.invalidQuery();
    if (invalid != null) {
      node.put("rule", invalid.rule().name());
      node.put("line", invalid.line());
      node.put("column", invalid.column());
    }
    ParsedViewQuery query = checked == null ? null : checked.query();
    ViewPlan plan = checked == null ? null : checked.plan();
    node.put("source", query == null ? null : query.source().toString());
    node.put("target", target == null ? null : target.toString());
    node.put(
        "bucketColumn",
        plan != null ? plan.bucketColumn() : query == null ? null : query.bucketColumn());
    node.put("bucketOutput", query == null ? null : query.bucketOutput());
    node.put("granularity", query == null ? null : query.granularity().unit());
    node.put("timezone", zone == null ? null : zone.getId());
    ArrayNode keys = node.putArray("groupKeys");
    if (query != null) {
      query.groupKeys().forEach(keys::add);
    }
    ArrayNode columns = node.putArray("columns");
    if (plan != null) {
      for (Types.NestedField column : plan.outputSchema().columns()) {
        columns.addObject().put("name", column.name()).put("type", column.type().toString());
      }
    } else if (query != null) {
      query.outputColumns().forEach(c -> columns.addObject().put("name", c).putNull("type"));
    }
    ArrayNode dimensions = node.putArray("dimensions");
    if (plan != null) {
      for (ViewPlan.Dimension dimension : plan.dimensions()) {
        ObjectNode joined = dimensions.addObject();
        joined.put("table", dimension.table().toString());
        joined.put("join", dimension.kind().name());
        dimension.factKeys().forEach(joined.putArray("factKeys")::add);
        dimension.keys().forEach(joined.putArray("keys")::add);
        dimension.requiredColumns().forEach(joined.putArray("columns")::add);
      }
    } else if (query != null) {
      for (ParsedViewQuery.JoinedTable dimension : query.dimensions()) {
        dimensions
            .addObject()
            .put("table", dimension.table().toString())
            .put("join", dimension.kind().name())
            .putNull("factKeys")
            .putNull("keys")
            .putNull("columns");
      }
    }
    ArrayNode reads = node.putArray("sourceColumns");
    if (plan != null) {
      plan.requiredColumns().forEach(reads::add);
      node.put("deltaPath", CompiledQuery.foldsAppends(plan));
      node.put("flatQuery", FlatQuery.of(plan));
    } else {
      node.putNull("deltaPath");
      node.putNull("flatQuery");
    }
    return node;
  }
}
