package io.floe.topology.refresh;

/**
 * A view cannot be refreshed as things stand: its source is gone, its query no longer fits the
 * source schema, or its target belongs to someone else. The view goes to an error status; it
 * recovers by itself when the cause goes away, and no other view is affected.
 */
public class ViewRefreshException extends RuntimeException {

  public ViewRefreshException(String message) {
    super(message);
  }

  /** The view's source table does not exist (yet: it may be the target of an upstream view). */
  public static final class SourceMissing extends ViewRefreshException {

    private final io.floe.topology.view.TableName source;

    public SourceMissing(String view, io.floe.topology.view.TableName source) {
      super("Cannot refresh view " + view + ": source table " + source + " does not exist");
      this.source = source;
    }

    public io.floe.topology.view.TableName source() {
      return source;
    }
  }
}
