package io.floe.topology.store;

import io.floe.schemas.ViewRecord;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A view definition as the maintain stage stores it, with its version, its revision (-1 when it did
 * not come from floe.views) and its source table (null when it was not compiled).
 *
 * @param maxStalenessMs the view's staleness objective, or null for Floe's default
 */
public record StoredView(
    String name,
    String query,
    String target,
    List<String> targetPartitioning,
    String timezone,
    long lingerMs,
    long minIntervalMs,
    Integer chunkBuckets,
    Long chunkRows,
    String version,
    long revision,
    String source,
    Long maxStalenessMs) {

  /** The stored form of a definition from floe.views. */
  public static StoredView of(ViewRecord record) {
    StoredView view =
        new StoredView(
            record.getName(),
            record.getQuery(),
            record.getTarget(),
            List.copyOf(record.getTargetPartitioning()),
            record.getTimezone(),
            record.getLingerMs(),
            record.getMinIntervalMs(),
            record.getChunkBuckets(),
            record.getChunkRows(),
            null,
            -1,
            null,
            record.getMaxStalenessMs());
    return view.withVersion(view.toDefinition().version());
  }

  /**
   * The revision of a definition read from floe.views at {@code offset} (DESIGN §3.6): the one the
   * record carries, or, in a record of an earlier release that carries none, its offset, as those
   * releases ordered definitions.
   */
  public static long revision(ViewRecord record, long offset) {
    return record.getRevision() != null ? record.getRevision() : offset;
  }

  /**
   * The revision a writer gives a new definition of a view: one more than the largest of the
   * revision in force on floe.views and the revision its target records ({@code
   * floe.view-revision}), so that a view's revisions only grow, whatever offsets the topic has: a
   * topic recreated empty continues from the target.
   *
   * @param inForce the revision of the view's definition on floe.views, if any
   * @param target the revision its target records, if any
   */
  public static long nextRevision(OptionalLong inForce, OptionalLong target) {
    return Math.max(inForce.orElse(-1), target.orElse(-1)) + 1;
  }

  /**
   * Applies a record of floe.views to an index of the views in force: a tombstone removes the view,
   * a definition that cannot be read or compiled takes it out of force with the reason.
   *
   * @param revision the definition's revision ({@link #revision}), which orders the definitions of
   *     a view
   */
  public static void apply(ViewIndex index, String name, ViewRecord record, long revision) {
    if (record == null) {
      index.remove(name);
      return;
    }
    ViewDefinition definition;
    try {
      definition = of(record).toDefinition();
    } catch (RuntimeException e) {
      index.reject(name, revision, e.getMessage());
      return;
    }
    if (!definition.name().equals(name)) {
      index.reject(
          name, revision, "the record is keyed " + name + " but defines view " + definition.name());
      return;
    }
    index.put(definition, revision);
  }

  /** The stored form of a compiled view, with its revision. */
  public static StoredView of(CompiledView view) {
    StoredView stored = of(toRecord(view.definition(), "api", Instant.EPOCH));
    return new StoredView(
        stored.name,
        stored.query,
        stored.target,
        stored.targetPartitioning,
        stored.timezone,
        stored.lingerMs,
        stored.minIntervalMs,
        stored.chunkBuckets,
        stored.chunkRows,
        view.version(),
        view.revision(),
        view.source().toString(),
        stored.maxStalenessMs);
  }

  /** The view's staleness objective: its own, or {@code fallback} (Floe's default). */
  public Duration maxStaleness(Duration fallback) {
    return maxStalenessMs == null ? fallback : Duration.ofMillis(maxStalenessMs);
  }

  private StoredView withVersion(String v) {
    return new StoredView(
        name,
        query,
        target,
        targetPartitioning,
        timezone,
        lingerMs,
        minIntervalMs,
        chunkBuckets,
        chunkRows,
        v,
        revision,
        source,
        maxStalenessMs);
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
            Duration.ofMillis(lingerMs),
            Duration.ofMillis(minIntervalMs),
            chunkBuckets == null ? OptionalInt.empty() : OptionalInt.of(chunkBuckets),
            chunkRows == null ? OptionalLong.empty() : OptionalLong.of(chunkRows),
            Optional.ofNullable(maxStalenessMs).map(Duration::ofMillis)));
  }

  /** The floe.views record of a definition at {@code revision} ({@link #nextRevision}). */
  public static ViewRecord toRecord(
      ViewDefinition view, String origin, Instant updatedAt, long revision) {
    ViewRecord record = toRecord(view, origin, updatedAt);
    record.setRevision(revision);
    return record;
  }

  /**
   * The floe.views record of a definition, without a revision: read back, it takes its offset as
   * records of earlier releases do.
   */
  public static ViewRecord toRecord(ViewDefinition view, String origin, Instant updatedAt) {
    return ViewRecord.newBuilder()
        .setName(view.name())
        .setQuery(view.query())
        .setTarget(view.target().toString())
        .setTargetPartitioning(view.targetPartitioning().stream().map(Object::toString).toList())
        .setTimezone(view.zone().getId())
        .setLingerMs(view.refresh().linger().toMillis())
        .setMinIntervalMs(view.refresh().minInterval().toMillis())
        .setChunkBuckets(
            view.refresh().chunkBuckets().isPresent()
                ? view.refresh().chunkBuckets().getAsInt()
                : null)
        .setChunkRows(
            view.refresh().chunkRows().isPresent() ? view.refresh().chunkRows().getAsLong() : null)
        .setMaxStalenessMs(view.refresh().maxStaleness().map(Duration::toMillis).orElse(null))
        .setOrigin(origin)
        .setUpdatedAt(updatedAt)
        .build();
  }
}
