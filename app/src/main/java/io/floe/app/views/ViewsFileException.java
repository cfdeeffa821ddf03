package io.floe.app.views;

/**
 * A views file that cannot be read as views: malformed YAML, a missing or unknown field, a
 * duplicate name. The message names the file, line and column, the view and the field, one problem
 * per line.
 */
public final class ViewsFileException extends Exception {

  public ViewsFileException(String message) {
    super(message);
  }
}
