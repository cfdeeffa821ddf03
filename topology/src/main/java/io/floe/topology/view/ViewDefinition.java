package io.floe.topology.view;

import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

/**
 * A view as its user declares it, in a views file or through the API.
 *
 * @param name unique name of the view
 * @param query the view query, in Trino's SQL dialect
 * @param target the Iceberg table that holds the view
 * @param targetPartitioning partition fields of the target when Floe creates it; empty for none
 * @param zone time zone of bucket boundaries; UTC unless set
 * @param refresh when to refresh and how to cut large refreshes
 */
public record ViewDefinition(
    String name,
    String query,
    TableName target,
    List<TargetPartitionField> targetPartitioning,
    ZoneId zone,
    RefreshSettings refresh) {

  /** The default zone, named as users write it. */
  public static final ZoneId UTC = ZoneId.of("UTC");

  public ViewDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(target, "target");
    targetPartitioning = List.copyOf(targetPartitioning);
    zone = zone == null ? UTC : zone;
    refresh = refresh == null ? RefreshSettings.DEFAULTS : refresh;
  }

  /** A view with default partitioning, zone and refresh settings. */
  public static ViewDefinition of(String name, String query, TableName target) {
    return new ViewDefinition(name, query, target, List.of(), UTC, null);
  }

  /**
   * The view version: a hash of everything that decides the view's rows (query, time zone) and
   * where they live (target, partitioning). Whitespace in the query does not count. Recorded as
   * {@code floe.view-version} in every target commit; a new version means a full refresh.
   */
  public String version() {
    String canonical =
        String.join(
            "\n",
            query.trim().replaceAll("\\s+", " "),
            zone.getId(),
            target.toString(),
            targetPartitioning.toString());
    return Digests.sha256Prefix(canonical, 8);
  }
}
