package io.floe.app.service;

import io.floe.topology.store.StoredView;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
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

  /** Publishes a definition to floe.views: {@link ViewCommands#define} in the service. */
  @FunctionalInterface
  public interface Publisher {
    void define(ViewDefinition view, String origin, long revision) throws InterruptedException;
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
  private final Publisher publisher;
  private final String origin;
  private final Duration wait;

  /**
   * @param origin what the definitions are marked as written by ({@code api})
   * @param wait how long a write waits for the index to show it
   */
  public ViewWrites(
      ViewIndex index,
      ViewConflicts.Targets targets,
      Publisher publisher,
      String origin,
      Duration wait) {
    this.index = index;
    this.targets = targets;
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
