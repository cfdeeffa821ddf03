package io.floe.topology.ingest;

import io.floe.topology.view.TableName;
import java.util.Optional;

/** Finds the watched table a metadata file belongs to, from the tables' locations. */
@FunctionalInterface
public interface TableLocator {

  /** The table whose metadata directory holds {@code metadataLocation}, if Floe watches it. */
  Optional<TableName> tableFor(String metadataLocation);
}
