package io.floe.topology.ingest;

import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locations of the tables Floe watches (the views' sources), loaded from their catalogs and
 * cached. A metadata file of an unknown location reloads them when the views changed since, and
 * otherwise at most once a minute, so that a new view's source is found without a restart.
 */
public final class WatchedTableLocations implements TableLocator {

  private static final Logger LOG = LoggerFactory.getLogger(WatchedTableLocations.class);
  private static final long RELOAD_INTERVAL_MS = 60_000;

  private final ViewIndex views;
  private final Function<String, Catalog> catalogs;
  private final Map<String, TableName> byLocation = new HashMap<>();

  /** When the locations were last loaded: never, so the first unknown location loads them. */
  private long loadedAt = -RELOAD_INTERVAL_MS;

  /** The generation of the view index whose sources were located; none yet. */
  private long located = -1;

  public WatchedTableLocations(ViewIndex views, Function<String, Catalog> catalogs) {
    this.views = views;
    this.catalogs = catalogs;
  }

  @Override
  public Optional<TableName> tableFor(String metadataLocation) {
    String location = normalize(metadataLocation);
    Optional<TableName> found = find(location);
    if (found.isPresent()) {
      return found;
    }
    long generation = views.generation();
    long now = System.currentTimeMillis();
    // A new or changed view is looked up at once; a table that appeared later (the target of an
    // upstream view, say) within a minute.
    if (generation != located || now - loadedAt >= RELOAD_INTERVAL_MS) {
      reload(Set.copyOf(views.sources()), generation);
      loadedAt = now;
      found = find(location);
    }
    return found;
  }

  @Override
  public boolean watches(TableName table) {
    return views.isWatched(table);
  }

  private Optional<TableName> find(String metadataLocation) {
    int cut = metadataLocation.lastIndexOf("/metadata/");
    return cut < 0
        ? Optional.empty()
        : Optional.ofNullable(byLocation.get(metadataLocation.substring(0, cut)));
  }

  private void reload(Set<TableName> watched, long generation) {
    byLocation.clear();
    for (TableName source : watched) {
      try {
        String location =
            catalogs.apply(source.catalog()).loadTable(source.identifier()).location();
        byLocation.put(normalize(location).replaceAll("/+$", ""), source);
      } catch (RuntimeException e) {
        LOG.debug("Cannot load the location of {}: {}", source, e.getMessage());
      }
    }
    located = generation;
    LOG.debug("Watched table locations: {}", byLocation);
  }

  /** s3a:// and s3n:// name the same objects as s3://. */
  public static String normalize(String location) {
    return location.replaceFirst("^s3[an]://", "s3://");
  }
}
