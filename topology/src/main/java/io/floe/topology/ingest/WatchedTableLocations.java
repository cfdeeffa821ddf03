package io.floe.topology.ingest;

import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locations of the tables Floe watches (the views' sources), loaded from their catalogs on
 * Floe's I/O executor and cached, so that decoding an S3 notification never waits for a catalog. A
 * metadata file of an unknown location starts a reload when the views changed since, and otherwise
 * at most once a minute, so that a new view's source is found without a restart; while a reload
 * runs, {@link #isLoading} says that an unknown location may still turn out to be watched.
 */
public final class WatchedTableLocations implements TableLocator {

  private static final Logger LOG = LoggerFactory.getLogger(WatchedTableLocations.class);
  private static final long RELOAD_INTERVAL_MS = 60_000;

  private final ViewIndex views;
  private final Function<String, Catalog> catalogs;
  private final Executor io;
  private volatile Map<String, TableName> byLocation = Map.of();
  private final AtomicBoolean loading = new AtomicBoolean();

  /** When the locations were last loaded: never, so the first unknown location loads them. */
  private volatile long loadedAt = -RELOAD_INTERVAL_MS;

  /** The generation of the view index whose sources were located; none yet. */
  private volatile long located = -1;

  /**
   * @param io the executor that reads the catalogs
   */
  public WatchedTableLocations(ViewIndex views, Function<String, Catalog> catalogs, Executor io) {
    this.views = views;
    this.catalogs = catalogs;
    this.io = io;
  }

  @Override
  public Optional<TableName> tableFor(String metadataLocation) {
    String location = normalize(metadataLocation);
    Optional<TableName> found = find(location);
    // A new view's source is looked up at once; a table that appeared later (the target of an
    // upstream view, say) within a minute. An executor that runs the reload at once answers now.
    if (found.isEmpty()
        && reloadIf(
            views.generation() != located
                || System.currentTimeMillis() - loadedAt >= RELOAD_INTERVAL_MS)) {
      found = find(location);
    }
    return found;
  }

  /** Loads the locations again now if the views changed since they were last loaded. */
  public void refreshIfViewsChanged() {
    reloadIf(views.generation() != located);
  }

  /** True while a reload runs: an unknown location may yet be a watched table's. */
  public boolean isLoading() {
    return loading.get();
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

  /** Starts a reload if it is due and none runs; returns whether it started one. */
  private boolean reloadIf(boolean due) {
    if (!due || !loading.compareAndSet(false, true)) {
      return false;
    }
    long generation = views.generation();
    Set<TableName> watched = Set.copyOf(views.sources());
    try {
      io.execute(() -> reload(watched, generation));
    } catch (RuntimeException e) {
      loading.set(false);
      throw e;
    }
    return true;
  }

  /** Runs on the I/O executor. */
  private void reload(Set<TableName> watched, long generation) {
    try {
      Map<String, TableName> found = new HashMap<>();
      for (TableName source : watched) {
        try {
          String location =
              catalogs.apply(source.catalog()).loadTable(source.identifier()).location();
          found.put(normalize(location).replaceAll("/+$", ""), source);
        } catch (RuntimeException e) {
          LOG.debug("Cannot load the location of {}: {}", source, e.getMessage());
        }
      }
      byLocation = Map.copyOf(found);
      located = generation;
      loadedAt = System.currentTimeMillis();
      LOG.debug("Watched table locations: {}", found);
    } finally {
      loading.set(false);
    }
  }

  /** s3a:// and s3n:// name the same objects as s3://. */
  public static String normalize(String location) {
    return location.replaceFirst("^s3[an]://", "s3://");
  }
}
