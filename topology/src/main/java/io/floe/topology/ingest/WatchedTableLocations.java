package io.floe.topology.ingest;

import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.sql.ViewQueryParser;
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

  /** The views (name and query) the sources were parsed from, and those sources. */
  private Set<String> parsedDefinitions = Set.of();

  private Set<TableName> sources = Set.of();

  /** The sources whose locations were loaded. */
  private Set<TableName> located = null;

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
    Set<TableName> watched = sources();
    long now = System.currentTimeMillis();
    // A new or changed view is looked up at once; a table that appeared later (the target of an
    // upstream view, say) within a minute.
    if (!watched.equals(located) || now - loadedAt >= RELOAD_INTERVAL_MS) {
      reload(watched);
      loadedAt = now;
      found = find(location);
    }
    return found;
  }

  @Override
  public boolean watches(TableName table) {
    return sources().contains(table);
  }

  /** The source tables of the views now; the queries are parsed again only when views change. */
  private Set<TableName> sources() {
    Set<String> definitions = new HashSet<>();
    List<ViewRecord> current = new ArrayList<>();
    for (ViewRecord view : views.get()) {
      current.add(view);
      definitions.add(view.getName() + "\n" + view.getQuery());
    }
    if (!definitions.equals(parsedDefinitions)) {
      Set<TableName> parsed = new HashSet<>();
      for (ViewRecord record : current) {
        try {
          parsed.add(ViewQueryParser.parse(StoredView.of(record).toDefinition().query()).source());
        } catch (InvalidViewException | RuntimeException e) {
          LOG.debug("Skipping view {}: {}", record.getName(), e.getMessage());
        }
      }
      sources = Set.copyOf(parsed);
      parsedDefinitions = definitions;
    }
    return sources;
  }

  private Optional<TableName> find(String metadataLocation) {
    int cut = metadataLocation.lastIndexOf("/metadata/");
    return cut < 0
        ? Optional.empty()
        : Optional.ofNullable(byLocation.get(metadataLocation.substring(0, cut)));
  }

  private void reload(Set<TableName> watched) {
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
    located = watched;
    LOG.debug("Watched table locations: {}", byLocation);
  }

  /** s3a:// and s3n:// name the same objects as s3://. */
  public static String normalize(String location) {
    return location.replaceFirst("^s3[an]://", "s3://");
  }
}
