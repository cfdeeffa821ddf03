package io.floe.topology.refresh;

import io.floe.topology.iceberg.ForwardingTableOperations;
import io.floe.topology.iceberg.WriteBehindFileIO;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.io.FileIO;

/**
 * Table operations that make a commit conditional on the table's bookmark properties ({@link
 * CommitGuard}) and move them ({@link Bookmark#properties}) in the same atomic metadata swap
 * (DESIGN §3.6). Built by {@link GuardedCommit} alone.
 *
 * <p>Iceberg retries a commit that lost a race ({@code CommitFailedException}) by applying the
 * change again to the refreshed table; every attempt comes through {@link #commit}, whose {@code
 * base} is exactly the metadata the swap is conditional on. Checking the expected properties there
 * means a replayed or concurrent refresh can never apply a change twice or move a view backwards,
 * even when its change adds no file.
 *
 * <p>A commit's manifests and manifest list may be written through a FileIO that uploads them while
 * the commit goes on ({@link WriteBehindFileIO}, on a remote store): the swap waits for every one
 * of them, so the metadata it puts in place never names a file the store does not have.
 */
final class GuardedTableOperations extends ForwardingTableOperations {

  private final CommitGuard guard;
  private final UnaryOperator<Bookmark> bookmark;
  private final FileIO io;

  /**
   * @param guard what the table must be like when the commit applies
   * @param bookmark the bookmark the commit leaves, from the one of the metadata it replaces
   * @param io what the commit writes its manifests and manifest list through: the delegate's
   *     FileIO, or one that uploads them behind ({@link WriteBehindFileIO})
   */
  GuardedTableOperations(
      TableOperations delegate, CommitGuard guard, UnaryOperator<Bookmark> bookmark, FileIO io) {
    super(delegate);
    this.guard = guard;
    this.bookmark = bookmark;
    this.io = io;
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    guard.check(base);
    if (io instanceof WriteBehindFileIO behind) {
      // Before the metadata file that names them is written and swapped in.
      behind.awaitUploads();
    }
    Bookmark before = Bookmark.of(metadata.properties());
    Bookmark after = bookmark.apply(before);
    if (after.equals(before)) {
      delegate.commit(base, metadata);
      return;
    }
    Map<String, String> updates = new HashMap<>();
    Set<String> removals = new HashSet<>();
    after
        .properties()
        .forEach(
            (key, value) -> {
              if (value != null) {
                updates.put(key, value);
              } else if (metadata.property(key, null) != null) {
                removals.add(key);
              }
            });
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
  public FileIO io() {
    return io;
  }
}
