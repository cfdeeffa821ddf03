package io.floe.topology.store;

import io.floe.schemas.ViewRecord;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.OptionalInt;

/** A view definition as the maintain stage stores it, with its version. */
public record StoredView(
    String name,
    String query,
    String target,
    List<String> targetPartitioning,
    String timezone,
    long debounceMs,
    long maxDelayMs,
    Integer chunkBuckets,
    String version) {

  /** The stored form of a definition from floe.views. */
  public static StoredView of(ViewRecord record) {
    StoredView view =
        new StoredView(
            record.getName(),
            record.getQuery(),
            record.getTarget(),
            List.copyOf(record.getTargetPartitioning()),
            record.getTimezone(),
            record.getDebounceMs(),
            record.getMaxDelayMs(),
            record.getChunkBuckets(),
            null);
    return view.withVersion(view.toDefinition().version());
  }

  /** The stored form of a definition. */
  public static StoredView of(ViewDefinition view) {
    return of(toRecord(view, "api", Instant.EPOCH));
  }

  private StoredView withVersion(String v) {
    return new StoredView(
        name, query, target, targetPartitioning, timezone, debounceMs, maxDelayMs, chunkBuckets, v);
  }

  /**
   * The definition.
   *
   * @throws IllegalArgumentException when a field does not parse (target, zone, partitioning)
   */
  public ViewDefinition toDefinition() {
    return new ViewDefinition(
        name,
        query,
        TableName.parse(target),
        targetPartitioning.stream().map(TargetPartitionField::parse).toList(),
        ZoneId.of(timezone),
        new RefreshSettings(
            Duration.ofMillis(debounceMs),
            Duration.ofMillis(maxDelayMs),
            chunkBuckets == null ? OptionalInt.empty() : OptionalInt.of(chunkBuckets)));
  }

  /** The floe.views record of a definition. */
  public static ViewRecord toRecord(ViewDefinition view, String origin, Instant updatedAt) {
    return ViewRecord.newBuilder()
        .setName(view.name())
        .setQuery(view.query())
        .setTarget(view.target().toString())
        .setTargetPartitioning(view.targetPartitioning().stream().map(Object::toString).toList())
        .setTimezone(view.zone().getId())
        .setDebounceMs(view.refresh().debounce().toMillis())
        .setMaxDelayMs(view.refresh().maxDelay().toMillis())
        .setChunkBuckets(
            view.refresh().chunkBuckets().isPresent()
                ? view.refresh().chunkBuckets().getAsInt()
                : null)
        .setOrigin(origin)
        .setUpdatedAt(updatedAt)
        .build();
  }
}
