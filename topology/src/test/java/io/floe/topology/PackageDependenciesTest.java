package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The direction of the dependencies between Floe's domain packages, read from the imports of the
 * main sources: a cycle would make neither side testable or replaceable alone.
 */
class PackageDependenciesTest {

  private static final Path MAIN = Path.of("src/main/java/io/floe/topology");

  @Test
  void shouldKeepTheViewPackageFreeOfTheEngine() {
    // Given the sources of view/ and view/sql/
    // When their imports are read
    List<String> imports = importsUnder(MAIN.resolve("view"), "import io.floe.topology.refresh");

    // Then none reaches into refresh/ (the engine depends on the view's plan, not the reverse)
    assertThat(imports).isEmpty();
  }

  private static List<String> importsUnder(Path root, String prefix) {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.toString().endsWith(".java"))
          .flatMap(f -> lines(f).filter(l -> l.startsWith(prefix)).map(l -> f + ": " + l))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Stream<String> lines(Path file) {
    try {
      return Files.readAllLines(file).stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
