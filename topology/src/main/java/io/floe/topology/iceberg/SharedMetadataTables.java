package io.floe.topology.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * Loads of a source table that share its parsed metadata: every load asks the catalog which
 * metadata file is current, as {@link Catalog#loadTable} does, but the {@link TableMetadata} parsed
 * from a metadata file, and with it the table's {@link org.apache.iceberg.Snapshot}s and what they
 * cache (manifest lists, a snapshot's added and removed files), is shared by every load that finds
 * the same file current. The views of one source refresh after each of its commits, and resolve,
 * detect and each view's plan load it in turn; each load used to parse the same new metadata JSON
 * and read the same manifest lists again. A metadata file is never rewritten in place, so what was
 * parsed from it stays exact.
 *
 * <p>One {@link TableOperations} per table, loaded by the catalog and never handed out, tracks the
 * current metadata: its {@code refresh()} is the catalog's own lookup, which parses a metadata file
 * only when the location moved (Iceberg's metastore catalogs: JDBC, Hive, Glue, Nessie; Hadoop
 * tables by their version hint; a REST catalog answers with the metadata itself). The tables handed
 * out are read-only: a commit through one fails. A lookup that fails (the table was dropped, or
 * recreated with a new UUID that Iceberg's refresh refuses) drops the tracker and loads the table
 * anew, so that errors and their types are those of {@link Catalog#loadTable}. A tracker unused for
 * {@link #IDLE} is dropped, so that the metadata of a table no longer read is not kept.
 */
public final class SharedMetadataTables {

  /** How long the metadata of a table nobody loads is kept. */
  static final Duration IDLE = Duration.ofMinutes(1);

  private static final Cache<Key, Tracker> TRACKERS =
      Caffeine.newBuilder().expireAfterAccess(IDLE).build();

  private SharedMetadataTables() {}

  /**
   * The table {@code id} of {@code catalog} as the catalog holds it now, read-only, with metadata
   * shared with the other loads that found the same metadata file current.
   *
   * @throws NoSuchTableException when the table does not exist
   */
  public static Table load(Catalog catalog, TableIdentifier id) {
    Key key = new Key(catalog, id);
    Tracker tracker = TRACKERS.getIfPresent(key);
    if (tracker != null) {
      TableMetadata current = tracker.lookUp();
      if (current != null) {
        return tracker.table(current);
      }
      TRACKERS.asMap().remove(key, tracker);
    }
    Table loaded = catalog.loadTable(id);
    if (!(loaded instanceof BaseTable base)) {
      return loaded;
    }
    Tracker fresh = new Tracker(key, base);
    TRACKERS.put(key, fresh);
    return fresh.table(base.operations().current());
  }

  /** A catalog instance (by identity, as catalogs compare) and a table in it. */
  private record Key(Catalog catalog, TableIdentifier id) {}

  /** The operations that track a table's current metadata, used by one thread at a time. */
  private static final class Tracker {
    private final Key key;
    private final BaseTable loaded;
    private final TableOperations operations;

    Tracker(Key key, BaseTable loaded) {
      this.key = key;
      this.loaded = loaded;
      this.operations = loaded.operations();
    }

    /** The current metadata, or null when the lookup failed and the table is to be loaded anew. */
    synchronized TableMetadata lookUp() {
      try {
        return operations.refresh();
      } catch (RuntimeException e) {
        return null;
      }
    }

    Table table(TableMetadata current) {
      return new BaseTable(new ReadOnlyOperations(this, current), loaded.name(), loaded.reporter());
    }
  }

  /** A table's operations at the metadata it was loaded or last refreshed with; no commits. */
  private static final class ReadOnlyOperations implements TableOperations {
    private final Tracker tracker;
    private volatile TableMetadata current;

    ReadOnlyOperations(Tracker tracker, TableMetadata current) {
      this.tracker = tracker;
      this.current = current;
    }

    @Override
    public TableMetadata current() {
      return current;
    }

    @Override
    public TableMetadata refresh() {
      TableMetadata refreshed = tracker.lookUp();
      if (refreshed == null) {
        // Loaded anew, as load() does: the catalog's own failure, or the recreated table.
        Table reloaded = load(tracker.key.catalog(), tracker.key.id());
        refreshed = ((HasTableOperations) reloaded).operations().current();
      }
      current = refreshed;
      return refreshed;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      throw new UnsupportedOperationException(
          "Cannot commit to " + tracker.loaded.name() + ": loaded read-only, for its metadata");
    }

    @Override
    public FileIO io() {
      return tracker.operations.io();
    }

    @Override
    public EncryptionManager encryption() {
      return tracker.operations.encryption();
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return tracker.operations.metadataFileLocation(fileName);
    }

    @Override
    public LocationProvider locationProvider() {
      TableMetadata metadata = current;
      return LocationProviders.locationsFor(metadata.location(), metadata.properties());
    }

    @Override
    public long newSnapshotId() {
      return tracker.operations.newSnapshotId();
    }
  }
}
