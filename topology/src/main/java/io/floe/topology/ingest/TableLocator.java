package io.floe.topology.ingest;

import io.floe.topology.view.TableName;
import java.util.Optional;

/** The tables Floe watches (the sources of its views), and where they live. */
@FunctionalInterface
public interface TableLocator {

  /** The table whose metadata directory holds {@code metadataLocation}, if Floe watches it. */
  Optional<TableName> tableFor(String metadataLocation);

  /** Whether some view reads {@code table}; events about other tables are not worth a look. */
  default boolean watches(TableName table) {
    return true;
  }
}
