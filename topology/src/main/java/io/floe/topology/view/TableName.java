package io.floe.topology.view;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A table as views name it: {@code catalog.namespace.table}, where the catalog is one of Floe's
 * configured catalogs ({@code floe.catalog.<name>.*}) and the namespace may have several levels.
 */
public record TableName(String catalog, List<String> namespace, String table) {

  /**
   * @throws IllegalArgumentException when a part is missing or empty: names come from the wire
   *     (commit notices, events, snapshot events), and a name that {@link #parse} would not read
   *     back must not become a store key
   */
  public TableName {
    if (namespace == null || namespace.isEmpty()) {
      throw new IllegalArgumentException(
          "A table name needs a namespace: " + catalog + "." + table);
    }
    if (isEmpty(catalog) || isEmpty(table) || namespace.stream().anyMatch(TableName::isEmpty)) {
      List<String> parts = new ArrayList<>();
      parts.add(String.valueOf(catalog));
      namespace.forEach(level -> parts.add(String.valueOf(level)));
      parts.add(String.valueOf(table));
      throw new IllegalArgumentException(
          "Table name '" + String.join(".", parts) + "' has an empty part");
    }
    namespace = List.copyOf(namespace);
  }

  private static boolean isEmpty(String part) {
    return part == null || part.isBlank();
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
