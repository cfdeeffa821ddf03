package io.floe.app.views;

import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewValidator;
import java.time.ZoneId;
import java.util.List;

/**
 * A view as a validate request gives it ({@link ViewsFile#draft}), read with the fields and checks
 * of a views file entry except that the name and target may be left out: the UI checks a query
 * while its user is still typing it.
 *
 * @param name the view's name, or null when the request gives none
 * @param query the view query
 * @param target the view's target, or null when the request gives none
 * @param targetPartitioning partition fields of the target; empty for none
 * @param zone time zone of bucket boundaries
 * @param refresh when to refresh and how to cut large refreshes
 */
public record ViewDraft(
    String name,
    String query,
    TableName target,
    List<TargetPartitionField> targetPartitioning,
    ZoneId zone,
    RefreshSettings refresh) {

  /** Checks the draft as it is, against its source's schema when {@code lookup} is given. */
  public ValidatedView validate(ViewValidator.SchemaLookup lookup) {
    return ViewValidator.validateDraft(query, targetPartitioning, zone, lookup);
  }
}
