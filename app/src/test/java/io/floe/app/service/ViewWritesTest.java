package io.floe.app.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.app.config.CatalogConfig;
import io.floe.testing.IcebergFixture;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewIndex;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  private final List<String> deleted = new CopyOnWriteArrayList<>();

  /** A floe.views whose definitions go to {@code onDefine}; deletions are recorded. */
  private ViewWrites.Publisher publisher(Definitions onDefine) {
    return new ViewWrites.Publisher() {
      @Override
      public void define(ViewDefinition view, String origin, long revision) {
        published.add(revision);
        onDefine.define(view, revision);
      }

      @Override
      public void delete(String view) {
        deleted.add(view);
      }
    };
  }

  private interface Definitions {
    void define(ViewDefinition view, long revision);
  }

  /** A floe.views that the topology reads at once: the index takes each definition in. */
  private ViewWrites.Publisher appliedAtOnce() {
    return publisher(index::put);
  }

  private ViewWrites writes(
      ViewConflicts.Targets targets, ViewWrites.Publisher publisher, Duration wait) {
    return new ViewWrites(
        index,
        targets,
        catalog -> {
          throw new IllegalArgumentException("no catalog in this test");
        },
        publisher,
        "api",
        wait);
  }

  @Test
  void shouldReturnAsSoonAsTheIndexShowsTheWrittenRevision() throws Exception {
    // Given a write that may wait a minute, published to a floe.views the index has not read yet
    CompletableFuture<Long> sent = new CompletableFuture<>();
    ViewWrites writes =
        writes(
            NO_TABLES,
            publisher((view, revision) -> sent.complete(revision)),
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
        writes(NO_TABLES, publisher((view, revision) -> {}), Duration.ofMillis(200));

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
    ViewWrites writes = writes(NO_TABLES, appliedAtOnce(), Duration.ofMinutes(1));

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
    ViewWrites writes = writes(NO_TABLES, appliedAtOnce(), Duration.ofMinutes(1));

    assertThatThrownBy(() -> writes.create(view("daily", "hour", "lake.a.daily")))
        .isInstanceOf(ViewWrites.RefusedException.class)
        .hasMessage("view 'daily' already exists; PUT to change it");
    assertThat(published).isEmpty();
  }

  @Test
  void shouldRefuseAViewThatWritesTheTargetOfAnotherAndPublishNothing() {
    index.put(view("daily", "day", "lake.a.daily"), 0);
    ViewWrites writes = writes(NO_TABLES, appliedAtOnce(), Duration.ofMinutes(1));

    assertThatThrownBy(() -> writes.put(view("hourly", "hour", "lake.a.daily")))
        .isInstanceOf(ViewWrites.RefusedException.class)
        .hasMessageContaining("daily")
        .hasMessageContaining("hourly");
    assertThat(published).isEmpty();
  }

  @Test
  void shouldRefuseToDropATargetFloeDidNotCreateForTheViewAndDeleteNothing() {
    // Given a view whose target Floe created for another view
    index.put(view("daily", "day", "lake.a.daily"), 0);
    ViewConflicts.Targets createdForOther =
        table ->
            Optional.of(new ViewConflicts.ExistingTable("weekly", java.util.OptionalLong.empty()));
    ViewWrites writes = writes(createdForOther, appliedAtOnce(), Duration.ofMinutes(1));

    // When the view is deleted with its target, then nothing is deleted
    assertThatThrownBy(() -> writes.deleteWithTarget("daily", TableName.parse("lake.a.daily")))
        .isInstanceOf(ViewWrites.RefusedException.class)
        .hasMessageContaining("Floe created it for view 'weekly'")
        .hasMessageContaining("nothing was deleted");
    assertThat(deleted).isEmpty();
  }

  @Test
  void shouldDeleteAViewWhoseTargetDoesNotExistYetAndDropNothing() throws Exception {
    index.put(view("daily", "day", "lake.a.daily"), 0);
    ViewWrites writes = writes(NO_TABLES, appliedAtOnce(), Duration.ofMinutes(1));

    boolean dropped = writes.deleteWithTarget("daily", TableName.parse("lake.a.daily"));

    assertThat(dropped).isFalse();
    assertThat(deleted).containsExactly("daily");
  }

  @Test
  void shouldDropTheStateTableOfAViewDeletedWithItsTarget(@TempDir Path dir) throws Exception {
    // Given a view with averages over a real JDBC catalog, refreshed once: its target and its
    // state table exist
    try (IcebergFixture lake = IcebergFixture.create(dir);
        CatalogConfig catalogs = catalogsOf(lake)) {
      Table trades = lake.createTrades("market", "trades");
      lake.append(trades, lake.randomTrades(new Random(1), 50, "2026-04-07", 8, 18));
      ViewDefinition view =
          ViewDefinition.of(
              "daily_avg",
              "SELECT symbol, date_trunc('day', ts) AS day, avg(price) AS mean"
                  + " FROM lake.market.trades GROUP BY 1, 2",
              TableName.parse("lake.analytics.daily_avg"));
      new ViewRefresher(catalogs::catalog)
          .refresh(
              RefreshRequest.of(
                  CompiledView.compile(view, 0),
                  trades.currentSnapshot().snapshotId(),
                  null,
                  DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
      index.put(view, 0);
      TableIdentifier state = TableIdentifier.of("analytics", "daily_avg__floe_state");
      assertThat(lake.catalog().tableExists(state)).isTrue();
      ViewWrites writes =
          new ViewWrites(
              index,
              catalogs.targets(),
              catalogs::catalog,
              appliedAtOnce(),
              "api",
              Duration.ofMinutes(1));

      // When the view is deleted with its target
      boolean dropped = writes.deleteWithTarget("daily_avg", view.target());

      // Then the target and the state table are both dropped
      assertThat(dropped).isTrue();
      assertThat(deleted).containsExactly("daily_avg");
      assertThat(lake.catalog().tableExists(view.target().identifier())).isFalse();
      assertThat(lake.catalog().tableExists(state)).isFalse();
    }
  }

  /** Floe's catalogs, configured as the service configures them, over the fixture's catalog. */
  private static CatalogConfig catalogsOf(IcebergFixture lake) {
    Properties properties = new Properties();
    lake.catalogProperties()
        .forEach(
            (key, value) -> properties.setProperty(CatalogConfig.PREFIX + "lake." + key, value));
    return CatalogConfig.from(properties);
  }
}
