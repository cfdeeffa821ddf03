package io.floe.app.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The write of a view over a real index, floe.views played by a publisher the test controls. */
class ViewWritesTest {

  private static final ViewConflicts.Targets NO_TABLES = table -> Optional.empty();

  private final ViewIndex index = new ViewIndex();
  private final List<Long> published = new CopyOnWriteArrayList<>();
  private final ExecutorService requests = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    requests.shutdownNow();
  }

  private static ViewDefinition view(String name, String unit, String target) {
    return new ViewDefinition(
        name,
        "SELECT date_trunc('" + unit + "', ts) AS b, count(*) AS n FROM lake.m.trades GROUP BY 1",
        TableName.parse(target),
        List.of(),
        null,
        RefreshSettings.DEFAULTS);
  }

  /** A floe.views that the topology reads at once: the index takes each definition in. */
  private ViewWrites.Publisher appliedAtOnce() {
    return (view, origin, revision) -> {
      published.add(revision);
      index.put(view, revision);
    };
  }

  @Test
  void shouldReturnAsSoonAsTheIndexShowsTheWrittenRevision() throws Exception {
    // Given a write that may wait a minute, published to a floe.views the index has not read yet
    CompletableFuture<Long> sent = new CompletableFuture<>();
    ViewWrites writes =
        new ViewWrites(
            index,
            NO_TABLES,
            (view, origin, revision) -> sent.complete(revision),
            "api",
            Duration.ofMinutes(1));
    ViewDefinition daily = view("daily", "day", "lake.a.daily");
    CompletableFuture<ViewWrites.Written> write =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return writes.put(daily);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            requests);
    long revision = sent.get(10, TimeUnit.SECONDS);
    assertThat(write).as("the write waits while the index lacks its revision").isNotDone();

    // When the index takes the revision in
    index.put(daily, revision);

    // Then the write returns then, not after its minute, and says the index shows it
    ViewWrites.Written written = write.get(10, TimeUnit.SECONDS);
    assertThat(written.shown()).isTrue();
    assertThat(written.created()).isTrue();
    assertThat(written.revision()).isZero();
  }

  @Test
  void shouldStopWaitingAfterItsTimeWhenTheIndexNeverShowsTheWrite() throws Exception {
    // Given a floe.views that this instance does not read
    ViewWrites writes =
        new ViewWrites(
            index,
            NO_TABLES,
            (view, origin, revision) -> published.add(revision),
            "api",
            Duration.ofMillis(200));

    // When a view is written
    ViewWrites.Written written = writes.put(view("daily", "day", "lake.a.daily"));

    // Then it was published, and the write says the index did not show it
    assertThat(published).containsExactly(0L);
    assertThat(written.shown()).isFalse();
  }

  @Test
  void shouldGiveTheNextRevisionAfterTheOneInForce() throws Exception {
    // Given a view in force at revision 3
    index.put(view("daily", "day", "lake.a.daily"), 3);
    ViewWrites writes =
        new ViewWrites(index, NO_TABLES, appliedAtOnce(), "api", Duration.ofMinutes(1));

    // When it is redefined
    ViewWrites.Written written = writes.put(view("daily", "hour", "lake.a.daily"));

    // Then the new definition is revision 4 and replaces the view
    assertThat(written.revision()).isEqualTo(4);
    assertThat(written.created()).isFalse();
    assertThat(index.view("daily").orElseThrow().query().granularity().unit()).isEqualTo("hour");
  }

  @Test
  void shouldRefuseToCreateAViewThatExistsAndPublishNothing() {
    index.put(view("daily", "day", "lake.a.daily"), 0);
    ViewWrites writes =
        new ViewWrites(index, NO_TABLES, appliedAtOnce(), "api", Duration.ofMinutes(1));

    assertThatThrownBy(() -> writes.create(view("daily", "hour", "lake.a.daily")))
        .isInstanceOf(ViewWrites.RefusedException.class)
        .hasMessage("view 'daily' already exists; PUT to change it");
    assertThat(published).isEmpty();
  }

  @Test
  void shouldRefuseAViewThatWritesTheTargetOfAnotherAndPublishNothing() {
    index.put(view("daily", "day", "lake.a.daily"), 0);
    ViewWrites writes =
        new ViewWrites(index, NO_TABLES, appliedAtOnce(), "api", Duration.ofMinutes(1));

    assertThatThrownBy(() -> writes.put(view("hourly", "hour", "lake.a.daily")))
        .isInstanceOf(ViewWrites.RefusedException.class)
        .hasMessageContaining("daily")
        .hasMessageContaining("hourly");
    assertThat(published).isEmpty();
  }
}
