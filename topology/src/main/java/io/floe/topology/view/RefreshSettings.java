package io.floe.topology.view;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * When a view refreshes and how large refreshes are cut up (DESIGN §6).
 *
 * @param debounce a refresh starts once the view has been quiet this long after its last change
 * @param maxDelay or once its oldest pending change has waited this long, however busy the source
 * @param chunkBuckets buckets per chunk of a full refresh; empty to derive it from the granularity
 */
public record RefreshSettings(Duration debounce, Duration maxDelay, OptionalInt chunkBuckets) {

  public static final Duration DEFAULT_DEBOUNCE = Duration.ofSeconds(1);
  public static final Duration DEFAULT_MAX_DELAY = Duration.ofSeconds(30);

  public static final RefreshSettings DEFAULTS =
      new RefreshSettings(DEFAULT_DEBOUNCE, DEFAULT_MAX_DELAY, OptionalInt.empty());

  public RefreshSettings {
    if (debounce.isNegative() || maxDelay.isNegative()) {
      throw new IllegalArgumentException("debounce and max_delay must not be negative");
    }
    if (maxDelay.compareTo(debounce) < 0) {
      throw new IllegalArgumentException(
          "max_delay ("
              + maxDelay.toMillis()
              + " ms) must not be shorter than debounce ("
              + debounce.toMillis()
              + " ms)");
    }
    if (chunkBuckets.isPresent() && chunkBuckets.getAsInt() < 1) {
      throw new IllegalArgumentException("chunk_buckets must be at least 1");
    }
  }
}
