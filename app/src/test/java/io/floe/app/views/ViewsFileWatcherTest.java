package io.floe.app.views;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The views file watcher, one reload interval at a time: each {@code check()} is one tick of its
 * timer, and the file is written between ticks as an editor would.
 */
class ViewsFileWatcherTest {

  private static final String FULL = "views:\n" + entry("volume") + entry("hourly");

  @TempDir Path dir;
  private Path file;
  private final List<List<String>> published = new ArrayList<>();
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private RuntimeException failNextPublication;
  private ViewsFileWatcher watcher;

  private static String entry(String name) {
    return "  - name: "
        + name
        + "\n    query: SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM lake.m.t GROUP BY 1"
        + "\n    target: lake.analytics."
        + name
        + "\n";
  }

  @BeforeEach
  void setUp() throws Exception {
    file = Files.writeString(dir.resolve("views.yaml"), FULL);
    watcher =
        new ViewsFileWatcher(
            file,
            FULL,
            views -> {
              if (failNextPublication != null) {
                RuntimeException failure = failNextPublication;
                failNextPublication = null;
                throw failure;
              }
              List<String> names = views.stream().map(ViewDefinition::name).toList();
              published.add(names);
              List<String> deleted =
                  names.isEmpty() ? List.of("volume", "hourly") : List.<String>of();
              return new ViewsPublisher.Result(names, deleted, List.of());
            });
    log.start();
    ((Logger) LoggerFactory.getLogger(ViewsFileWatcher.class)).addAppender(log);
  }

  @AfterEach
  void tearDown() {
    ((Logger) LoggerFactory.getLogger(ViewsFileWatcher.class)).detachAppender(log);
    watcher.close();
  }

  private void write(String content) throws Exception {
    Files.writeString(file, content);
  }

  private List<String> logged(Level level) {
    return log.list.stream()
        .filter(e -> e.getLevel() == level)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  @Test
  void shouldPublishAChangeOnceItHasStoodStillForAnInterval() throws Exception {
    write(FULL + entry("daily"));

    watcher.check();
    assertThat(published).isEmpty();
    watcher.check();
    assertThat(published).containsExactly(List.of("volume", "hourly", "daily"));
    watcher.check();
    assertThat(published).hasSize(1);
  }

  @Test
  void shouldNeverPublishAFileCaughtHalfWritten() throws Exception {
    // Cut between two views: valid YAML that would delete the second one.
    write("views:\n" + entry("volume"));
    watcher.check();
    write(FULL);
    watcher.check();
    watcher.check();

    assertThat(published).isEmpty();
    assertThat(logged(Level.ERROR)).isEmpty();
  }

  @Test
  void shouldKeepTheViewsWhenTheFileIsEmptiedAndSaySoOnce() throws Exception {
    write("");
    watcher.check();
    watcher.check();
    watcher.check();

    assertThat(published).isEmpty();
    assertThat(logged(Level.ERROR))
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("Views file " + file + " changed but cannot be read as views; keeping the")
        .contains(file + ": the views file is empty");

    write(FULL);
    watcher.check();
    watcher.check();
    assertThat(published).isEmpty();
  }

  @Test
  void shouldKeepTheViewsWhileTheFileIsMissing() throws Exception {
    Files.delete(file);
    watcher.check();
    watcher.check();

    assertThat(published).isEmpty();
    assertThat(logged(Level.ERROR))
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith(file + ": cannot read views file: ")
        .endsWith("; keeping the current views");
  }

  @Test
  void shouldRemoveEveryViewForAnExplicitEmptyListAndSayHowMany() throws Exception {
    write("views: []\n");
    watcher.check();
    watcher.check();

    assertThat(published).containsExactly(List.of());
    assertThat(logged(Level.WARN))
        .containsExactly(
            "Views file "
                + file
                + " declares no views (views: []): removed the 2 views it had published"
                + " [volume, hourly]");
  }

  @Test
  void shouldTryAFailedPublicationAgainAtTheNextInterval() throws Exception {
    write(FULL + entry("daily"));
    failNextPublication = new IllegalStateException("Cannot publish views to floe.views");
    watcher.check();
    watcher.check();
    assertThat(published).isEmpty();

    watcher.check();

    assertThat(published).containsExactly(List.of("volume", "hourly", "daily"));
  }
}
