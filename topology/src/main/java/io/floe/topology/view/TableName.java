package io.floe.topology.view;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A table as views name it: {@code catalog.namespace.table}, where the catalog is one of Floe's
 * configured catalogs ({@code floe.catalog.<name>.*}) and the namespace may have several levels.
 */
public record TableName(String catalog, List<String> namespace, String table) {

  public TableName {
    Objects.requireNonNull(catalog, "catalog");
    Objects.requireNonNull(table, "table");
    namespace = List.copyOf(namespace);
    if (namespace.isEmpty()) {
      throw new IllegalArgumentException(
          "A table name needs a namespace: " + catalog + "." + table);
    }
  }

  /**
   * Parses {@code catalog.namespace[.namespace...].table}.
   *
   * @throws IllegalArgumentException when fewer than three parts are given or a part is empty
   */
  public static TableName parse(String qualified) {
    String[] parts = qualified.split("\\.", -1);
    if (parts.length < 3) {
      throw new IllegalArgumentException(
          "Table name '" + qualified + "' must be qualified as catalog.namespace.table");
    }
    for (String part : parts) {
      if (part.isBlank()) {
        throw new IllegalArgumentException("Table name '" + qualified + "' has an empty part");
      }
    }
    return of(List.of(parts));
  }

  /** The name from its parts, catalog first and table last. */
  public static TableName of(List<String> parts) {
    if (parts.size() < 3) {
      throw new IllegalArgumentException(
          "Table name '"
              + String.join(".", parts)
              + "' must be qualified as catalog.namespace.table");
    }
    return new TableName(
        parts.get(0), parts.subList(1, parts.size() - 1), parts.get(parts.size() - 1));
  }

  /** The identifier of the table inside its catalog. */
  public TableIdentifier identifier() {
    return TableIdentifier.of(Namespace.of(namespace.toArray(String[]::new)), table);
  }

  /** All parts, catalog first and table last. */
  public List<String> parts() {
    List<String> parts = new ArrayList<>(namespace.size() + 2);
    parts.add(catalog);
    parts.addAll(namespace);
    parts.add(table);
    return parts;
  }

  @Override
  public String toString() {
    return String.join(".", parts());
  }
}
