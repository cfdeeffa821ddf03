package io.floe.topology.ingest;

import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewQueryParser;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
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

  private final Supplier<Iterable<ViewRecord>> views;
  private final Function<String, Catalog> catalogs;
  private final Map<String, TableName> byLocation = new HashMap<>();

  /** When the locations were last loaded: never, so the first unknown location loads them. */
  private long loadedAt = -RELOAD_INTERVAL_MS;

  /** The views (name and query) the locations were loaded for. */
  private Set<String> loadedDefinitions = Set.of();

  public WatchedTableLocations(
      Supplier<Iterable<ViewRecord>> views, Function<String, Catalog> catalogs) {
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
    List<ViewRecord> current = new ArrayList<>();
    views.get().forEach(current::add);
    Set<String> definitions = definitions(current);
    long now = System.currentTimeMillis();
    // A new or changed view is looked up at once; a table that appeared later (the target of an
    // upstream view, say) within a minute.
    if (!definitions.equals(loadedDefinitions) || now - loadedAt >= RELOAD_INTERVAL_MS) {
      reload(current);
      loadedAt = now;
      loadedDefinitions = definitions;
      found = find(location);
    }
    return found;
  }

  private static Set<String> definitions(List<ViewRecord> views) {
    Set<String> definitions = new HashSet<>();
    for (ViewRecord view : views) {
      definitions.add(view.getName() + "\n" + view.getQuery());
    }
    return definitions;
  }

  private Optional<TableName> find(String metadataLocation) {
    int cut = metadataLocation.lastIndexOf("/metadata/");
    return cut < 0
        ? Optional.empty()
        : Optional.ofNullable(byLocation.get(metadataLocation.substring(0, cut)));
  }

  private void reload(List<ViewRecord> current) {
    byLocation.clear();
    for (ViewRecord record : current) {
      TableName source;
      try {
        source = ViewQueryParser.parse(StoredView.of(record).toDefinition().query()).source();
      } catch (InvalidViewException | RuntimeException e) {
        LOG.debug("Skipping view {}: {}", record.getName(), e.getMessage());
        continue;
      }
      try {
        String location =
            catalogs.apply(source.catalog()).loadTable(source.identifier()).location();
        byLocation.put(normalize(location).replaceAll("/+$", ""), source);
      } catch (RuntimeException e) {
        LOG.debug("Cannot load the location of {}: {}", source, e.getMessage());
      }
    }
    LOG.debug("Watched table locations: {}", byLocation);
  }

  /** s3a:// and s3n:// name the same objects as s3://. */
  static String normalize(String location) {
    return location.replaceFirst("^s3[an]://", "s3://");
  }
}
