package io.floe.topology.view;

/**
 * The outcome of checking one view definition: what could be derived, and why it is invalid when it
 * is.
 *
 * @param definition the view as declared, or null for a draft checked before it names the view or
 *     its target ({@link ViewValidator#validateDraft})
 * @param query its structure, or null when the query does not parse or breaks a structural rule
 * @param plan its plan against the source schema, or null when the schema was not checked or the
 *     view is invalid
 * @param error why the view is invalid, or null
 * @param sourceMissing whether the only problem is that the source table does not exist (yet)
 * @param invalidQuery the query's problem with its rule and position, when that is the error
 */
public record ValidatedView(
    ViewDefinition definition,
    ParsedViewQuery query,
    ViewPlan plan,
    String error,
    boolean sourceMissing,
    InvalidViewException invalidQuery) {

  public boolean isValid() {
    return error == null;
  }

  /** True when the view was checked against its source table's schema, not just its structure. */
  public boolean isSchemaChecked() {
    return plan != null;
  }

  static ValidatedView invalid(ViewDefinition definition, ParsedViewQuery query, String error) {
    return new ValidatedView(definition, query, null, error, false, null);
  }

  static ValidatedView invalid(
      ViewDefinition definition, ParsedViewQuery query, InvalidViewException e) {
    return new ValidatedView(definition, query, null, e.getMessage(), false, e);
  }

  static ValidatedView valid(ViewDefinition definition, ParsedViewQuery query, ViewPlan plan) {
    return new ValidatedView(definition, query, plan, null, false, null);
  }
}
