package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.view.CompiledView;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The direction of the dependencies between the topology's packages, read from the compiled classes
 * (every class, descriptor and signature a class file names, so a fully qualified name in code
 * counts as much as an import, and a name only Javadoc mentions does not): a cycle would make
 * neither side testable or replaceable alone.
 */
class PackageDependenciesTest {

  private static final String ROOT = "io.floe.topology";

  /**
   * Subpackages that are a private part of their parent (STYLE.md: {@code view/sql} is
   * package-private behind {@code view/}): counted as the parent, and used by nothing else.
   */
  private static final Map<String, String> PRIVATE_PARTS =
      Map.of(ROOT + ".view.sql", ROOT + ".view");

  @Test
  void shouldHaveNoCycleBetweenPackages() {
    // Given the package graph of the main classes
    Map<String, Set<String>> graph = packageGraph();

    // When its strongly connected components are found
    List<Set<String>> cycles = cyclesOf(graph);

    // Then none has more than one package (the edges say where to look)
    assertThat(cycles).as("package cycles, edges: %s", edgesWithin(graph, cycles)).isEmpty();
  }

  @Test
  void shouldKeepTheViewPackageFreeOfTheEngine() {
    // Given the package graph of the main classes
    Map<String, Set<String>> graph = packageGraph();

    // Then view/ (with view/sql/) reaches nothing of refresh/: the engine depends on the view's
    // plan, not the reverse
    assertThat(graph.get(ROOT + ".view")).noneMatch(p -> p.startsWith(ROOT + ".refresh"));
  }

  @Test
  void shouldKeepThePrivatePartsOfAPackageToItself() {
    // Given the dependencies of every main class on a private part (view/sql/)
    Map<String, Set<String>> users = new TreeMap<>();
    classDependencies()
        .forEach(
            (from, to) ->
                to.stream()
                    .filter(PRIVATE_PARTS::containsKey)
                    .filter(part -> !packageOf(from).startsWith(PRIVATE_PARTS.get(part)))
                    .forEach(part -> users.computeIfAbsent(part, p -> new TreeSet<>()).add(from)));

    // Then only the parent package and the part itself use it
    assertThat(users).isEmpty();
  }

  @Test
  void shouldSeeADependencyNamedOnlyByAFullyQualifiedName() {
    // Given a class of this test that names a view class without an import
    Set<String> packages = packagesNamedBy(classFile(Probe.class));

    // Then the reading finds it, as an import would
    assertThat(packages).contains(ROOT + ".view");
  }

  /** Names {@code io.floe.topology.view.TableName} without importing it. */
  private static final class Probe {
    @SuppressWarnings("unused")
    private io.floe.topology.view.TableName name;
  }

  /** Package -> the packages it depends on, private parts counted as their parent. */
  private static Map<String, Set<String>> packageGraph() {
    Map<String, Set<String>> graph = new TreeMap<>();
    classDependencies()
        .forEach(
            (from, to) -> {
              String source = component(packageOf(from));
              Set<String> targets = graph.computeIfAbsent(source, p -> new TreeSet<>());
              to.stream().map(PackageDependenciesTest::component).forEach(targets::add);
              targets.remove(source);
            });
    return graph;
  }

  /** Each main class (by name) -> the topology packages its class file names. */
  private static Map<String, Set<String>> classDependencies() {
    Path classes = mainClasses();
    Map<String, Set<String>> dependencies = new TreeMap<>();
    try (Stream<Path> files = Files.walk(classes)) {
      files
          .filter(f -> f.toString().endsWith(".class"))
          .forEach(
              f -> {
                String name = classes.relativize(f).toString().replace('/', '.');
                dependencies.put(name.substring(0, name.length() - 6), packagesNamedBy(f));
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(dependencies).as("main classes under %s", classes).hasSizeGreaterThan(100);
    return dependencies;
  }

  private static Path mainClasses() {
    try {
      return Path.of(
          CompiledView.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Path classFile(Class<?> type) {
    try {
      Path root = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
      return root.resolve(type.getName().replace('.', '/') + ".class");
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Internal names ({@code io/floe/topology/view/TableName}) in names, descriptors, signatures. */
  private static final Pattern NAME = Pattern.compile("io/floe/topology((?:/[a-z0-9_]+)*)/[A-Z]");

  /** The topology packages the constant pool of a class file names (JVMS 4.4). */
  private static Set<String> packagesNamedBy(Path classFile) {
    Set<String> packages = new TreeSet<>();
    try (InputStream in = Files.newInputStream(classFile);
        DataInputStream data = new DataInputStream(in)) {
      data.readInt(); // magic
      data.readInt(); // minor, major
      int count = data.readUnsignedShort();
      for (int i = 1; i < count; i++) {
        int tag = data.readUnsignedByte();
        switch (tag) {
          case 1 -> {
            Matcher m = NAME.matcher(data.readUTF());
            while (m.find()) {
              packages.add(ROOT + m.group(1).replace('/', '.'));
            }
          }
          case 7, 8, 16, 19, 20 -> data.skipBytes(2);
          case 15 -> data.skipBytes(3);
          case 3, 4, 9, 10, 11, 12, 17, 18 -> data.skipBytes(4);
          case 5, 6 -> {
            data.skipBytes(8);
            i++; // a long or double takes two entries
          }
          default ->
              throw new IllegalStateException("Unknown constant tag " + tag + " in " + classFile);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return packages;
  }

  private static String packageOf(String className) {
    return className.substring(0, className.lastIndexOf('.'));
  }

  private static String component(String pkg) {
    return PRIVATE_PARTS.getOrDefault(pkg, pkg);
  }

  /** The strongly connected components of more than one package (Tarjan). */
  private static List<Set<String>> cyclesOf(Map<String, Set<String>> graph) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<Set<String>> cycles = new ArrayList<>();
    for (String start : graph.keySet()) {
      if (!index.containsKey(start)) {
        connect(start, graph, index, low, stack, onStack, cycles);
      }
    }
    return cycles;
  }

  private static void connect(
      String node,
      Map<String, Set<String>> graph,
      Map<String, Integer> index,
      Map<String, Integer> low,
      Deque<String> stack,
      Set<String> onStack,
      List<Set<String>> cycles) {
    index.put(node, index.size());
    low.put(node, index.get(node));
    stack.push(node);
    onStack.add(node);
    for (String next : graph.getOrDefault(node, Set.of())) {
      if (!index.containsKey(next)) {
        connect(next, graph, index, low, stack, onStack, cycles);
        low.put(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.contains(next)) {
        low.put(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node).equals(index.get(node))) {
      Set<String> component = new TreeSet<>();
      String member;
      do {
        member = stack.pop();
        onStack.remove(member);
        component.add(member);
      } while (!member.equals(node));
      if (component.size() > 1) {
        cycles.add(component);
      }
    }
  }

  private static List<String> edgesWithin(
      Map<String, Set<String>> graph, List<Set<String>> cycles) {
    List<String> edges = new ArrayList<>();
    for (Set<String> cycle : cycles) {
      for (String from : cycle) {
        for (String to : graph.getOrDefault(from, Set.of())) {
          if (cycle.contains(to)) {
            edges.add(from.substring(ROOT.length()) + " -> " + to.substring(ROOT.length()));
          }
        }
      }
    }
    return edges;
  }
}
