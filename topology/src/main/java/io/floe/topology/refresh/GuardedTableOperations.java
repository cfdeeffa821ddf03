package io.floe.topology.refresh;

import java.util.Map;
import java.util.Set;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * Table operations that make a commit conditional on the table's bookmark properties ({@link
 * CommitGuard}) and update them in the same atomic metadata swap (DESIGN §3.6).
 *
 * <p>Iceberg retries a commit that lost a race ({@code CommitFailedException}) by applying the
 * change again to the refreshed table; every attempt comes through {@link #commit}, whose {@code
 * base} is exactly the metadata the swap is conditional on. Checking the expected properties there
 * means a replayed or concurrent refresh can never apply a change twice or move a view backwards,
 * even when its change adds no file.
 */
final class GuardedTableOperations implements TableOperations {

  private final TableOperations delegate;
  private final CommitGuard guard;
  private final Map<String, String> updates;
  private final Set<String> removals;

  /**
   * @param guard what the table must be like when the commit applies
   * @param updates properties the commit sets
   * @param removals properties the commit removes
   */
  GuardedTableOperations(
      TableOperations delegate,
      CommitGuard guard,
      Map<String, String> updates,
      Set<String> removals) {
    this.delegate = delegate;
    this.guard = guard;
    this.updates = updates;
    this.removals = removals;
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    guard.check(base);
    if (updates.isEmpty() && removals.isEmpty()) {
      delegate.commit(base, metadata);
      return;
    }
    TableMetadata.Builder withProperties = TableMetadata.buildFrom(metadata);
    if (!updates.isEmpty()) {
      withProperties.setProperties(updates);
    }
    if (!removals.isEmpty()) {
      withProperties.removeProperties(removals);
    }
    delegate.commit(base, withProperties.build());
  }

  @Override
  public TableMetadata current() {
    return delegate.current();
  }

  @Override
  public TableMetadata refresh() {
    return delegate.refresh();
  }

  @Override
  public FileIO io() {
    return delegate.io();
  }

  @Override
  public EncryptionManager encryption() {
    return delegate.encryption();
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return delegate.metadataFileLocation(fileName);
  }

  @Override
  public LocationProvider locationProvider() {
    return delegate.locationProvider();
  }

  @Override
  public TableOperations temp(TableMetadata uncommittedMetadata) {
    return delegate.temp(uncommittedMetadata);
  }

  @Override
  public long newSnapshotId() {
    return delegate.newSnapshotId();
  }

  @Override
  public boolean requireStrictCleanup() {
    return delegate.requireStrictCleanup();
  }
}
