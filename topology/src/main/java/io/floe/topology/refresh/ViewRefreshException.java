package io.floe.topology.refresh;

/**
 * A view cannot be refreshed as things stand: its source is gone, its query no longer fits the
 * source schema, or its target belongs to someone else. The view goes to an error status; it
 * recovers by itself when the cause goes away, and no other view is affected.
 */
public final class ViewRefreshException extends RuntimeException {

  public ViewRefreshException(String message) {
    super(message);
  }
}
