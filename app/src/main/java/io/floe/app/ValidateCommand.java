package io.floe.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.floe.app.config.CatalogConfig;
import io.floe.app.views.ValidatedViewJson;
import io.floe.app.views.ViewsFile;
import io.floe.app.views.ViewsFileException;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewValidator;
import io.floe.topology.view.sql.FlatQuery;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code floe validate}: checks views files and prints what Floe derives from each query. */
@Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    description = {
      "Check views files and print, per view, what Floe derives from its query (source, bucket"
          + " column, granularity, group keys, output columns) or why it is invalid.",
      "With --config, each query is also checked against its source table's schema in the"
          + " configured catalogs; without it, only the query's structure is checked.",
      "Exit code: 0 when every view is valid, 1 otherwise."
    })
final class ValidateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "FILE", description = "Views files (YAML).")
  List<Path> files;

  @Mixin ConfigFile.Optional config;

  @Option(names = "--json", description = "Print a JSON array, one object per view.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<ViewDefinition> views;
    try {
      views = ViewsFile.loadAll(files);
    } catch (ViewsFileException e) {
      err.println(e.getMessage());
      return 1;
    }
    List<ValidatedView> results;
    if (config.path() == null) {
      results = withConflicts(ViewValidator.validateStructure(views), table -> Optional.empty());
    } else {
      try (CatalogConfig catalogs = config.loadCatalogs()) {
        if (catalogs.isEmpty()) {
          err.println(config + ": no catalog configured (floe.catalog.<name>.type=...)");
          return 1;
        }
        results =
            withConflicts(
                ViewValidator.validate(views, catalogs.schemaLookup()), catalogs.targets());
      } catch (IOException e) {
        err.println(config.unreadable(e));
        return 1;
      } catch (IllegalArgumentException | ConfigException e) {
        err.println(config + ": " + e.getMessage());
        return 1;
      }
    }
    if (json) {
      out.println(toJson(results));
    } else {
      printText(out, results, config.path() != null);
    }
    out.flush();
    return results.stream().allMatch(ValidatedView::isValid) ? 0 : 1;
  }

  /**
   * The results with the rules of a write applied to the file's views together, as {@code floe run}
   * applies them: shared targets, a view writing its source, cycles and, with catalogs, existing
   * tables Floe did not create for the view.
   */
  private static List<ValidatedView> withConflicts(
      List<ValidatedView> results, ViewConflicts.Targets targets) {
    List<ViewDefinition> writes =
        results.stream()
            .filter(r -> r.isValid() || r.sourceMissing())
            .map(ValidatedView::definition)
            .toList();
    Map<String, String> refused = ViewConflicts.check(List.of(), writes, targets);
    return results.stream()
        .map(
            r ->
                refused.containsKey(r.definition().name())
                    ? new ValidatedView(
                        r.definition(),
                        r.query(),
                        null,
                        refused.get(r.definition().name()),
                        false,
                        null)
                    : r)
        .toList();
  }

  private static void printText(PrintWriter out, List<ValidatedView> results, boolean withSchemas) {
    if (!withSchemas) {
      out.println(
          "No --config given: checked query structure only; column names and types were not"
              + " checked against the source tables.");
      out.println();
    }
    for (ValidatedView result : results) {
      ViewDefinition view = result.definition();
      out.println(view.name() + ": " + (result.isValid() ? "valid" : "INVALID"));
      if (!result.isValid()) {
        out.println("  error        " + result.error().replace("\n", "\n               "));
      }
      ParsedViewQuery query = result.query();
      if (query != null) {
        out.println("  source       " + query.source());
        out.println("  target       " + view.target());
        out.println(
            "  bucket       "
                + query
                    .granularity()
                    .expression(
                        result.plan() != null ? result.plan().bucketColumn() : query.bucketColumn())
                + " AS "
                + query.bucketOutput()
                + " in "
                + view.zone().getId());
        out.println(
            "  group keys   "
                + (query.groupKeys().isEmpty() ? "(none)" : String.join(", ", query.groupKeys())));
        ViewPlan plan = result.plan();
        if (plan != null) {
          out.println(
              "  columns      "
                  + plan.outputSchema().columns().stream()
                      .map(c -> c.name() + " " + c.type())
                      .collect(Collectors.joining(", ")));
          out.println("  reads        " + String.join(", ", plan.requiredColumns()));
          for (ViewPlan.Dimension dimension : plan.dimensions()) {
            out.println(
                "  joins        "
                    + dimension.kind()
                    + " "
                    + dimension.table()
                    + " ON "
                    + joinKeys(dimension)
                    + ", reading "
                    + String.join(", ", dimension.requiredColumns()));
          }
          out.println("  flat query   " + FlatQuery.of(plan).replace("\n", "\n               "));
          out.println(
              "  appends      "
                  + (CompiledQuery.keepsPartialStates(plan)
                      ? "folded into the partial states of their groups (delta path)"
                      : CompiledQuery.foldsAppends(plan)
                          ? "folded into the rows of their groups (delta path)"
                          : "recompute their buckets (an aggregate needs every row, or the"
                              + " buckets are shorter than an hour)"));
        } else {
          out.println("  columns      " + String.join(", ", query.outputColumns()));
        }
        if (!view.targetPartitioning().isEmpty()) {
          out.println(
              "  partitioned  "
                  + view.targetPartitioning().stream()
                      .map(Object::toString)
                      .collect(Collectors.joining(", ")));
        }
      }
      out.println();
    }
    long invalid = results.stream().filter(r -> !r.isValid()).count();
    out.println(
        results.size() + (results.size() == 1 ? " view, " : " views, ") + invalid + " invalid");
  }

  private static String toJson(List<ValidatedView> results) throws IOException {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ArrayNode array = mapper.createArrayNode();
    results.forEach(result -> array.add(ValidatedViewJson.of(result)));
    return mapper.writeValueAsString(array);
  }

  /** The join's equalities, fact key = dimension key. */
  private static String joinKeys(ViewPlan.Dimension dimension) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < dimension.factKeys().size(); i++) {
      keys.add(dimension.factKeys().get(i) + " = " + dimension.keys().get(i));
    }
    return String.join(" AND ", keys);
  }
}
