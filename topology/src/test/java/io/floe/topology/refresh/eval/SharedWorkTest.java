package io.floe.topology.refresh.eval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SharedWorkTest {

  /** Collects the items it processed. */
  private static final class Collecting implements SharedWork.Worker<Integer> {
    final List<Integer> items = new ArrayList<>();

    @Override
    public void process(Integer item) {
      items.add(item);
    }
  }

  @Test
  void shouldProcessEveryItemOnceAcrossTheCallerAndItsHelpers() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Integer> items = IntStream.range(0, 10_000).boxed().toList();
      List<Collecting> workers = SharedWork.drain(items, Collecting::new, pool, 4);

      List<Integer> all = new ArrayList<>();
      workers.forEach(w -> all.addAll(w.items));
      assertThat(all).hasSize(items.size()).containsExactlyInAnyOrderElementsOf(items);
      assertThat(workers).hasSizeBetween(1, 4);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shouldFinishOnTheCallerWhenTheExecutorRunsNothingInTime() throws Exception {
    // An executor whose threads are all busy: the helpers start after the work is done
    ExecutorService busy = Executors.newSingleThreadExecutor();
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    busy.execute(
        () -> {
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    try {
      List<Collecting> workers = SharedWork.drain(List.of(1, 2, 3), Collecting::new, busy, 3);

      assertThat(workers).hasSize(1);
      assertThat(workers.get(0).items).containsExactly(1, 2, 3);
    } finally {
      release.countDown();
      busy.shutdown();
      assertThat(busy.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void shouldThrowAWorkersFailureToTheCaller() {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      assertThatThrownBy(
              () ->
                  SharedWork.<Integer, SharedWork.Worker<Integer>>drain(
                      IntStream.range(0, 1_000).boxed().toList(),
                      () ->
                          item -> {
                            if (item % 100 == 7) {
                              throw new IllegalStateException("item " + item);
                            }
                          },
                      pool,
                      3))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("item ");
    } finally {
      pool.shutdownNow();
    }
  }
}
