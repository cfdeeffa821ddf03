package io.floe.topology.view;

import io.floe.topology.view.sql.ViewQueryParser;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The rules a write of views keeps with every view in force (DESIGN §7): a view never writes its
 * own source; a target belongs to one view; an existing table becomes a target only if Floe created
 * it for that view; chained views form no cycle. The views written together (one API request, one
 * views file) count as in force for each other, and a refused write leaves the view of its name as
 * it was, so the check is repeated until no further write is refused.
 *
 * <p>Table names are compared without regard to case, as most catalogs (and Trino) treat them.
 */
public final class ViewConflicts {

  /** What the catalogs hold at a view's target. */
  @FunctionalInterface
  public interface Targets {
    /**
     * The table called {@code name}, or empty when there is none.
     *
     * @throws IllegalArgumentException naming the problem when its catalog is unknown or cannot be
     *     reached
     */
    Optional<ExistingTable> existing(TableName name);

    /**
     * The revision the target of {@code view} records ({@code floe.view-revision}) when Floe
     * created it for that view; empty when there is none or it cannot be read (a writer then
     * continues from floe.views alone).
     */
    default OptionalLong revision(ViewDefinition view) {
      try {
        return existing(view.target())
            .filter(table -> view.name().equals(table.createdFor()))
            .map(ExistingTable::revision)
            .orElse(OptionalLong.empty());
      } catch (IllegalArgumentException e) {
        return OptionalLong.empty();
      }
    }
  }

  /**
   * A table that exists.
   *
   * @param createdFor the view its {@code floe.view} property names, or null when Floe did not
   *     create it
   * @param revision the definition revision it records ({@code floe.view-revision}), if any
   */
  public record ExistingTable(String createdFor, OptionalLong revision) {

    /** A table Floe did not create. */
    public static final ExistingTable FOREIGN = new ExistingTable(null);

    /** A table that records no revision. */
    public ExistingTable(String createdFor) {
      this(createdFor, OptionalLong.empty());
    }
  }

  /** The tables each query reads: its source, then the dimensions it joins; empty if it fails. */
  private final Map<String, List<TableName>> sources = new HashMap<>();

  private ViewConflicts() {}

  /**
   * The writes that break a rule, each with the reason, which names the views involved.
   *
   * @param inForce the views in force before the writes; a write replaces the view of its name
   * @param writes the views to write, each valid by itself
   * @param targets what the catalogs hold at the targets of the writes
   * @return the reason by view name of every write to refuse, in the order of {@code writes}; empty
   *     when every write may go ahead
   */
  public static Map<String, String> check(
      Collection<ViewDefinition> inForce, List<ViewDefinition> writes, Targets targets) {
    return new ViewConflicts().run(inForce, writes, targets);
  }

  /**
   * {@link #check} against the views of an index, whose sources are known without parsing their
   * queries again.
   */
  public static Map<String, String> check(
      ViewIndex inForce, List<ViewDefinition> writes, Targets targets) {
    ViewConflicts conflicts = new ViewConflicts();
    List<ViewDefinition> definitions = new ArrayList<>();
    for (CompiledView view : inForce.views()) {
      definitions.add(view.definition());
      List<TableName> read = new ArrayList<>();
      read.add(view.source());
      read.addAll(view.dimensions());
      conflicts.sources.put(view.definition().query(), List.copyOf(read));
    }
    return conflicts.run(definitions, writes, targets);
  }

  private Map<String, String> run(
      Collection<ViewDefinition> inForce, List<ViewDefinition> writes, Targets targets) {
    // The catalog is asked once per write; the other rules depend on which writes go ahead.
    Map<String, String> foreign = new HashMap<>();
    for (ViewDefinition write : writes) {
      String problem = ownership(write, targets);
      if (problem != null) {
        foreign.put(write.name(), problem);
      }
    }
    Map<String, String> refused = new HashMap<>();
    Map<String, ViewDefinition> accepted = new LinkedHashMap<>();
    writes.forEach(w -> accepted.put(w.name(), w));
    boolean refusedMore = true;
    while (refusedMore) {
      Map<String, ViewDefinition> views = new LinkedHashMap<>();
      inForce.forEach(v -> views.put(v.name(), v));
      views.putAll(accepted);
      Map<String, String> problems = new LinkedHashMap<>();
      for (ViewDefinition write : accepted.values()) {
        String problem = problem(write, views, foreign.get(write.name()));
        if (problem != null) {
          problems.put(write.name(), problem);
        }
      }
      problems.keySet().forEach(accepted::remove);
      refused.putAll(problems);
      refusedMore = !problems.isEmpty();
    }
    Map<String, String> ordered = new LinkedHashMap<>();
    for (ViewDefinition write : writes) {
      if (refused.containsKey(write.name())) {
        ordered.put(write.name(), refused.get(write.name()));
      }
    }
    return ordered;
  }

  /** Why the write's target may not be used, as the catalog shows it, or null. */
  private static String ownership(ViewDefinition write, Targets targets) {
    Optional<ExistingTable> table;
    try {
      table = targets.existing(write.target());
    } catch (IllegalArgumentException e) {
      return "Cannot check the target "
          + write.target()
          + " of view '"
          + write.name()
          + "': "
          + e.getMessage();
    }
    if (table.isEmpty() || write.name().equals(table.get().createdFor())) {
      return null;
    }
    return "View '"
        + write.name()
        + "' cannot write "
        + write.target()
        + ": the table exists and "
        + (table.get().createdFor() == null
            ? "Floe did not create it"
            : "Floe created it for view '" + table.get().createdFor() + "'")
        + "; choose another target, or drop the table";
  }

  /**
   * The first rule the write breaks among {@code views}, or null; {@code foreign} from the catalog.
   */
  private String problem(ViewDefinition write, Map<String, ViewDefinition> views, String foreign) {
    String target = key(write.target());
    TableName source = source(write);
    if (source != null && key(source).equals(target)) {
      return "View '" + write.name() + "' cannot write " + write.target() + ": it is its source";
    }
    for (TableName dimension : dimensions(write)) {
      if (key(dimension).equals(target)) {
        return "View '"
            + write.name()
            + "' cannot write "
            + write.target()
            + ": it is a dimension it joins";
      }
    }
    List<String> sharing = new ArrayList<>();
    for (ViewDefinition other : views.values()) {
      if (!other.name().equals(write.name()) && key(other.target()).equals(target)) {
        sharing.add("'" + other.name() + "'");
      }
    }
    if (!sharing.isEmpty()) {
      return "View '"
          + write.name()
          + "' cannot write "
          + write.target()
          + ": it is the target of view "
          + String.join(", ", sharing)
          + "; a target belongs to one view";
    }
    if (foreign != null) {
      return foreign;
    }
    List<String> cycle = cycleThrough(write, views);
    if (cycle != null) {
      return "View '"
          + write.name()
          + "' cannot read "
          + source
          + ": views would form a cycle, "
          + String.join(" -> ", cycle)
          + " (each reads the target of the one before)";
    }
    return null;
  }

  /** The names along a chain of views from {@code start} back to it, or null when none. */
  private List<String> cycleThrough(ViewDefinition start, Map<String, ViewDefinition> views) {
    Map<String, List<ViewDefinition>> readers = new HashMap<>();
    for (ViewDefinition view : views.values()) {
      // A dimension's commits drive the views that join it as a source's do: a view that joins
      // the target of a view downstream of it closes a cycle too.
      for (TableName read : reads(view)) {
        readers.computeIfAbsent(key(read), k -> new ArrayList<>()).add(view);
      }
    }
    List<String> path = new ArrayList<>();
    path.add(start.name());
    return walk(start, start.name(), readers, path, new HashSet<>()) ? path : null;
  }

  private static boolean walk(
      ViewDefinition from,
      String start,
      Map<String, List<ViewDefinition>> readers,
      List<String> path,
      Set<String> seen) {
    for (ViewDefinition reader : readers.getOrDefault(key(from.target()), List.of())) {
      if (reader.name().equals(start)) {
        path.add(start);
        return true;
      }
      if (seen.add(reader.name())) {
        path.add(reader.name());
        if (walk(reader, start, readers, path, seen)) {
          return true;
        }
        path.remove(path.size() - 1);
      }
    }
    return false;
  }

  /** The view's source table, or null when its query does not parse (it reads nothing then). */
  private TableName source(ViewDefinition view) {
    List<TableName> read = reads(view);
    return read.isEmpty() ? null : read.get(0);
  }

  /** The dimension tables the view joins; none when its query does not parse. */
  private List<TableName> dimensions(ViewDefinition view) {
    List<TableName> read = reads(view);
    return read.isEmpty() ? List.of() : read.subList(1, read.size());
  }

  /** The tables the view reads, its source first; none when its query does not parse. */
  private List<TableName> reads(ViewDefinition view) {
    return sources.computeIfAbsent(
        view.query(),
        query -> {
          try {
            ParsedViewQuery parsed = ViewQueryParser.parse(query);
            List<TableName> read = new ArrayList<>();
            read.add(parsed.source());
            parsed.dimensions().forEach(d -> read.add(d.table()));
            return List.copyOf(read);
          } catch (InvalidViewException e) {
            return List.of();
          }
        });
  }

  private static String key(TableName table) {
    return table.toString().toLowerCase(Locale.ROOT);
  }
}
