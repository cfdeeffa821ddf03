package io.floe.topology.view;

/**
 * A view query that Floe cannot maintain, with the rule it breaks and the position of the offending
 * part of the SQL (1-based line and column within the query text).
 */
public final class InvalidViewException extends Exception {

  private final ViewRule rule;
  private final int line;
  private final int column;
  private final String detail;

  public InvalidViewException(ViewRule rule, int line, int column, String detail) {
    super(format(rule, line, column, detail));
    this.rule = rule;
    this.line = line;
    this.column = column;
    this.detail = detail;
  }

  private static String format(ViewRule rule, int line, int column, String detail) {
    String where = line > 0 ? " at line " + line + ", column " + column : "";
    String why = detail == null || detail.isBlank() ? "" : ": " + detail;
    return "Invalid view query" + where + ": " + rule.description() + why;
  }

  public ViewRule rule() {
    return rule;
  }

  /** 1-based line within the query, or 0 when the problem has no position. */
  public int line() {
    return line;
  }

  /** 1-based column within the line, or 0 when the problem has no position. */
  public int column() {
    return column;
  }

  /** What exactly broke the rule, for example the unknown column's name; may be null. */
  public String detail() {
    return detail;
  }
}
