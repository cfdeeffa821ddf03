package io.floe.topology.view;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The views in force on this instance, compiled (DESIGN §6): one index, fed by floe.views, that
 * answers "by name", "which views read table T" and "which view writes table T" without parsing SQL
 * or scanning every view. Every stream thread, the HTTP API and the watchers share it.
 *
 * <p>Reads see an immutable snapshot and never block; the rare updates replace the snapshot. A
 * definition that cannot be compiled is logged once and skipped, never fatal: the view's earlier
 * definition, if any, stays in force, and the rejection is kept with its reason for the API.
 */
public final class ViewIndex {

  private static final Logger LOG = LoggerFactory.getLogger(ViewIndex.class);

  /** Everything the index answers, at one moment. */
  private record Snapshot(
      Map<String, CompiledView> byName,
      Map<TableName, List<CompiledView>> bySource,
      Map<TableName, List<CompiledView>> byDimension,
      Map<TableName, CompiledView> byTarget,
      Map<String, Rejected> rejected,
      long generation) {

    static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), 0);

    static Snapshot of(
        Map<String, CompiledView> byName, Map<String, Rejected> rejected, long generation) {
      Map<TableName, List<CompiledView>> bySource = new HashMap<>();
      Map<TableName, List<CompiledView>> byDimension = new HashMap<>();
      Map<TableName, CompiledView> byTarget = new HashMap<>();
      for (CompiledView view : byName.values()) {
        bySource.computeIfAbsent(view.source(), t -> new ArrayList<>()).add(view);
        for (TableName dimension : view.dimensions()) {
          byDimension.computeIfAbsent(dimension, t -> new ArrayList<>()).add(view);
        }
        byTarget.merge(view.target(), view, (a, b) -> a.revision() <= b.revision() ? a : b);
      }
      bySource.replaceAll((table, views) -> List.copyOf(views));
      byDimension.replaceAll((table, views) -> List.copyOf(views));
      return new Snapshot(
          Map.copyOf(byName),
          Map.copyOf(bySource),
          Map.copyOf(byDimension),
          Map.copyOf(byTarget),
          Map.copyOf(rejected),
          generation);
    }
  }

  /**
   * A definition of floe.views that is not in force because it cannot be compiled.
   *
   * @param revision its place among the view's definitions
   * @param reason why, with the position of the problem when it is in the query
   */
  public record Rejected(long revision, String reason) {}

  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /**
   * Puts a definition in force, replacing the view's earlier one. A definition older than the one
   * in force (a smaller revision) is ignored.
   */
  public synchronized void put(ViewDefinition definition, long revision) {
    Snapshot now = snapshot;
    CompiledView current = now.byName().get(definition.name());
    if (current != null && current.revision() > revision) {
      return;
    }
    CompiledView compiled;
    try {
      compiled =
          current == null
              ? CompiledView.compile(definition, revision)
              : current.redefine(definition, revision);
    } catch (InvalidViewException e) {
      reject(definition.name(), revision, e.getMessage());
      return;
    }
    Map<String, CompiledView> byName = new HashMap<>(now.byName());
    byName.put(compiled.name(), compiled);
    Map<String, Rejected> rejected = new HashMap<>(now.rejected());
    rejected.remove(compiled.name());
    replace(Snapshot.of(byName, rejected, now.generation() + 1));
  }

  /**
   * Records that the view's definition at {@code revision} cannot be used: it is skipped, and the
   * view's earlier definition, if any, stays in force; logged once per definition.
   */
  public synchronized void reject(String name, long revision, String reason) {
    Snapshot now = snapshot;
    Rejected known = now.rejected().get(name);
    if (known != null && known.revision() == revision) {
      return;
    }
    CompiledView current = now.byName().get(name);
    LOG.warn(
        "Skipping the definition of view {} at revision {}: {}{}",
        name,
        revision,
        reason,
        current == null ? "" : "; revision " + current.revision() + " stays in force");
    Map<String, CompiledView> byName = new HashMap<>(now.byName());
    Map<String, Rejected> rejected = new HashMap<>(now.rejected());
    rejected.put(name, new Rejected(revision, reason));
    replace(Snapshot.of(byName, rejected, now.generation() + 1));
  }

  /** Takes a view out of force: it was deleted. */
  public synchronized void remove(String name) {
    Snapshot now = snapshot;
    if (!now.byName().containsKey(name) && !now.rejected().containsKey(name)) {
      return;
    }
    Map<String, CompiledView> byName = new HashMap<>(now.byName());
    byName.remove(name);
    Map<String, Rejected> rejected = new HashMap<>(now.rejected());
    rejected.remove(name);
    replace(Snapshot.of(byName, rejected, now.generation() + 1));
  }

  /** Publishes a new snapshot and wakes the writers waiting for a revision to arrive. */
  private void replace(Snapshot next) {
    snapshot = next;
    notifyAll();
  }

  /**
   * The newest revision of the view's definition that the index has taken in, in force or rejected;
   * empty when the view has none (never defined, or deleted).
   */
  public OptionalLong revision(String name) {
    Snapshot now = snapshot;
    CompiledView view = now.byName().get(name);
    Rejected rejected = now.rejected().get(name);
    if (view == null && rejected == null) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(
        Math.max(
            view == null ? Long.MIN_VALUE : view.revision(),
            rejected == null ? Long.MIN_VALUE : rejected.revision()));
  }

  /**
   * Waits until the index has taken in the view's definition at {@code revision} or a newer one
   * (DESIGN §3.6: a view's revisions only grow), for at most {@code timeout}; woken by the update
   * that brings it, not by polling.
   *
   * @return whether the revision arrived in time
   */
  public synchronized boolean awaitRevision(String name, long revision, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (revision(name).orElse(Long.MIN_VALUE) < revision) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** The view in force named {@code name}. */
  public Optional<CompiledView> view(String name) {
    return Optional.ofNullable(snapshot.byName().get(name));
  }

  /**
   * The views in force whose source (their bucketed fact table) is {@code table}: a change of it
   * dirties the buckets its files' statistics name.
   */
  public List<CompiledView> readingTable(TableName table) {
    return snapshot.bySource().getOrDefault(table, List.of());
  }

  /**
   * The views in force that join {@code table} as a dimension (DESIGN §3.10): a change of it
   * dirties the buckets whose fact rows carry a changed key.
   */
  public List<CompiledView> joiningTable(TableName table) {
    return snapshot.byDimension().getOrDefault(table, List.of());
  }

  /** The view in force whose target is {@code table}. */
  public Optional<CompiledView> writingTable(TableName table) {
    return Optional.ofNullable(snapshot.byTarget().get(table));
  }

  /** The views in force that read {@code table}, as their source or as a dimension. */
  public List<CompiledView> dependingOn(TableName table) {
    Snapshot now = snapshot;
    List<CompiledView> reading = new ArrayList<>(now.bySource().getOrDefault(table, List.of()));
    reading.addAll(now.byDimension().getOrDefault(table, List.of()));
    return List.copyOf(reading);
  }

  /** True when some view in force reads {@code table}, as its source or as a dimension. */
  public boolean isWatched(TableName table) {
    Snapshot now = snapshot;
    return now.bySource().containsKey(table) || now.byDimension().containsKey(table);
  }

  /** Every view in force, by name. */
  public Collection<CompiledView> views() {
    return new TreeMap<>(snapshot.byName()).values();
  }

  /** The tables the views in force read: their sources and the dimensions they join. */
  public Collection<TableName> sources() {
    Snapshot now = snapshot;
    Set<TableName> tables = new HashSet<>(now.bySource().keySet());
    tables.addAll(now.byDimension().keySet());
    return Set.copyOf(tables);
  }

  /** The latest definition of each view that was skipped because it cannot be used, by name. */
  public Map<String, Rejected> rejected() {
    return snapshot.rejected();
  }

  /** A number that changes with every change of the index, so that callers notice changes. */
  public long generation() {
    return snapshot.generation();
  }
}
