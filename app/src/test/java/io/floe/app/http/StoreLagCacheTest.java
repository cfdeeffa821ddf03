package io.floe.app.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The readiness probe's store lags, looked up at most once per interval. */
class StoreLagCacheTest {

  private final AtomicLong nanos = new AtomicLong();
  private final AtomicInteger lookups = new AtomicInteger();
  private final StoreLagCache cache = new StoreLagCache(nanos::get);
  // The Kafka Streams instance the answers are kept for: only its identity counts.
  private final Object streams = new Object();

  private OptionalLong lookUp() {
    return OptionalLong.of(lookups.incrementAndGet());
  }

  @Test
  void shouldMakeOneLagLookupForTwoProbesWithinTheInterval() {
    // Given a probe answered
    OptionalLong first = cache.behind(streams, this::lookUp);

    // When another probe comes just before the interval ends
    nanos.addAndGet(StoreLagCache.INTERVAL.toNanos() - 1);
    OptionalLong second = cache.behind(streams, this::lookUp);

    // Then the broker was asked once, and both probes have its answer
    assertThat(lookups).hasValue(1);
    assertThat(second).isEqualTo(first);
  }

  @Test
  void shouldLookTheLagsUpAgainOnceTheIntervalHasPassed() {
    // Given a probe answered
    cache.behind(streams, this::lookUp);

    // When the next probe comes after the interval
    nanos.addAndGet(StoreLagCache.INTERVAL.toNanos());
    OptionalLong second = cache.behind(streams, this::lookUp);

    // Then it has a new answer
    assertThat(lookups).hasValue(2);
    assertThat(second).hasValue(2);
  }
}
