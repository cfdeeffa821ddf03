package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The refresh executor's own pool. */
class RefreshExecutorTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldRunRefreshesOnDaemonThreadsNamedForRefreshes() throws Exception {
    // Given
    long snapshot =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 1.0, 1L, "B")));
    AtomicReference<Thread> worker = new AtomicReference<>();
    ViewRefresher refresher =
        new ViewRefresher(
            name -> {
              worker.compareAndSet(null, Thread.currentThread());
              return lake.catalog();
            });
    ViewDefinition view =
        ViewDefinition.of("ohlcv", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv"));

    // When
    RefreshOutcome outcome;
    try (RefreshExecutor executor = new RefreshExecutor(refresher, 2)) {
      outcome =
          executor
              .submit(ViewRefresherTest.request(view, snapshot, null, DirtyBuckets.none()))
              .join();
    }

    // Then
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(worker.get()).isNotSameAs(Thread.currentThread());
    assertThat(worker.get().getName()).matches("floe-refresh-\\d+");
    assertThat(worker.get().isDaemon()).isTrue();
  }

  @Test
  void shouldLeaveTheQuietWaitOnlyOnceTheRunningRefreshHasFinishedForTheQuietPeriod()
      throws Exception {
    // Given a refresh that holds its thread until it is let go
    long snapshot =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 1.0, 1L, "B")));
    CountDownLatch release = new CountDownLatch(1);
    ViewRefresher refresher =
        new ViewRefresher(
            name -> {
              try {
                release.await();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
              return lake.catalog();
            });
    ViewDefinition view =
        ViewDefinition.of("ohlcv", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv"));
    Duration quiet = Duration.ofMillis(200);
    try (RefreshExecutor executor = new RefreshExecutor(refresher, 1)) {
      CompletableFuture<RefreshOutcome> refresh =
          executor.submit(ViewRefresherTest.request(view, snapshot, null, DirtyBuckets.none()));
      AtomicLong quietFrom = new AtomicLong();
      Thread waiter =
          new Thread(
              () -> {
                try {
                  executor.awaitQuiet(quiet);
                  quietFrom.set(System.nanoTime());
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      waiter.start();
      // Until the refresh has waited a whole quiet period and more, the waiter still waits.
      long waitingSince = System.nanoTime();
      while (System.nanoTime() - waitingSince < 2 * quiet.toNanos()) {
        assertThat(waiter.isAlive()).isTrue();
        Thread.onSpinWait();
      }

      // When the refresh finishes
      release.countDown();
      refresh.join();
      long finished = System.nanoTime();
      waiter.join();

      // Then the waiter went on a quiet period after it, not before
      assertThat(refresh).isCompleted();
      assertThat(quietFrom.get() - finished).isGreaterThanOrEqualTo(quiet.toNanos() * 9 / 10);
    }
  }
}
