package io.floe.app.service;

import io.floe.topology.refresh.TargetTables;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one view's definition as every single-view writer must: checked against every view in
 * force ({@link ViewConflicts}), published to floe.views with the view's next revision (DESIGN
 * §3.6: one more than the largest of floe.views' and its target's), and finished once this
 * instance's {@link ViewIndex} holds that revision, so that the next write through this instance is
 * checked against it and a read returns it. The wait is woken by the index's update, not by
 * polling.
 *
 * <p>Writes are serialized: two writes through this instance cannot both pass the check and then
 * conflict.
 */
public final class ViewWrites {

  private static final Logger LOG = LoggerFactory.getLogger(ViewWrites.class);

  /** Writes to floe.views: {@link ViewCommands} in the service. */
  public interface Publisher {
    /** Publishes a definition at {@code revision}. */
    void define(ViewDefinition view, String origin, long revision) throws InterruptedException;

    /** Publishes the deletion of a view. */
    void delete(String view) throws InterruptedException;
  }

  /** A write that would break a rule, or create a view that exists; nothing was published. */
  public static final class RefusedException extends Exception {
    RefusedException(String message) {
      super(message);
    }
  }

  /**
   * A published definition.
   *
   * @param created whether the view did not exist before
   * @param shown whether the index showed the revision before the wait ran out
   */
  public record Written(ViewDefinition view, long revision, boolean created, boolean shown) {}

  private final ViewIndex index;
  private final ViewConflicts.Targets targets;
  private final Function<String, Catalog> catalogs;
  private final Publisher publisher;
  private final String origin;
  private final Duration wait;

  /**
   * @param catalogs the catalog of each name, which drops the target of a deleted view
   * @param origin what the definitions are marked as written by ({@code api})
   * @param wait how long a write waits for the index to show it
   */
  public ViewWrites(
      ViewIndex index,
      ViewConflicts.Targets targets,
      Function<String, Catalog> catalogs,
      Publisher publisher,
      String origin,
      Duration wait) {
    this.index = index;
    this.targets = targets;
    this.catalogs = catalogs;
    this.publisher = publisher;
    this.origin = origin;
    this.wait = wait;
  }

  /** Creates a view, refused when one of that name exists. */
  public synchronized Written create(ViewDefinition view)
      throws RefusedException, InterruptedException {
    if (index.revision(view.name()).isPresent()) {
      throw new RefusedException("view '" + view.name() + "' already exists; PUT to change it");
    }
    return write(view);
  }

  /** Creates a view or replaces its definition. */
  public synchronized Written put(ViewDefinition view)
      throws RefusedException, InterruptedException {
    return write(view);
  }

  /** Deletes a view: it is no longer maintained; its target stays. */
  public synchronized void delete(String name) throws InterruptedException {
    publisher.delete(name);
  }

  /**
   * Deletes a view and drops its target, but only a table whose {@code floe.view} property names
   * this view: otherwise nothing is deleted. The view's state table goes with its target ({@link
   * TargetTables#drop}).
   *
   * @return whether a table was dropped (there may be none yet)
   * @throws RefusedException when the table is not the view's to drop
   */
  public synchronized boolean deleteWithTarget(String name, TableName target)
      throws RefusedException, InterruptedException {
    Optional<ViewConflicts.ExistingTable> table = targets.existing(target);
    if (table.isPresent() && !name.equals(table.get().createdFor())) {
      throw new RefusedException(
          "Cannot drop "
              + target
              + ", the target of view '"
              + name
              + "': "
              + (table.get().createdFor() == null
                  ? "Floe did not create it"
                  : "Floe created it for view '" + table.get().createdFor() + "'")
              + ", so it is not this view's to drop; nothing was deleted (delete without"
              + " dropTarget to keep the table)");
    }
    publisher.delete(name);
    if (table.isEmpty()) {
      return false;
    }
    boolean dropped = TargetTables.drop(catalogs.apply(target.catalog()), target, name);
    LOG.info("Dropped target {} of deleted view {}", target, name);
    return dropped;
  }

  private Written write(ViewDefinition view) throws RefusedException, InterruptedException {
    Map<String, String> refused = ViewConflicts.check(index, List.of(view), targets);
    if (!refused.isEmpty()) {
      throw new RefusedException(refused.get(view.name()));
    }
    OptionalLong current = index.revision(view.name());
    long revision = StoredView.nextRevision(current, targets.revision(view));
    publisher.define(view, origin, revision);
    LOG.info(
        "View {} written by {} (version {}, revision {})",
        view.name(),
        origin,
        view.version(),
        revision);
    boolean shown = index.awaitRevision(view.name(), revision, wait);
    if (!shown) {
      LOG.warn(
          "View {} was written but this instance's views do not show revision {} after {} s",
          view.name(),
          revision,
          wait.toSeconds());
    }
    return new Written(view, revision, current.isEmpty(), shown);
  }
}
