package io.floe.topology.view;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * When a view refreshes and how large refreshes are cut up (DESIGN §6).
 *
 * @param linger a refresh starts this long after the first change it has not covered yet (as
 *     Kafka's {@code linger.ms} batches a producer's records), or as soon as the view's running
 *     refresh ends if changes arrived meanwhile, whichever is later: a burst of commits becomes one
 *     target snapshot, and a source that commits continuously is followed within about {@code
 *     linger} plus two refresh durations
 * @param minInterval the shortest time between two refreshes of the view, for users who want fewer
 *     target snapshots; zero for none
 * @param chunkBuckets the most buckets holding data that one chunk of a large refresh may hold;
 *     empty for no cap, chunks being sized by {@code chunkRows}
 * @param chunkRows about how many source rows one chunk of a large refresh holds (its memory is
 *     bounded by the groups of those rows); empty for the default, two million
 * @param maxStaleness the view's staleness objective: the longest its target may lag behind the
 *     oldest source commit it does not reflect before the view counts as stale; empty for Floe's
 *     default ({@code floe.refresh.max-staleness.ms})
 */
public record RefreshSettings(
    Duration linger,
    Duration minInterval,
    OptionalInt chunkBuckets,
    OptionalLong chunkRows,
    Optional<Duration> maxStaleness) {

  public static final Duration DEFAULT_LINGER = Duration.ofMillis(200);
  public static final Duration DEFAULT_MIN_INTERVAL = Duration.ZERO;

  public static final RefreshSettings DEFAULTS =
      new RefreshSettings(
          DEFAULT_LINGER,
          DEFAULT_MIN_INTERVAL,
          OptionalInt.empty(),
          OptionalLong.empty(),
          Optional.empty());

  /** Settings with the default chunk size in rows. */
  public RefreshSettings(Duration linger, Duration minInterval, OptionalInt chunkBuckets) {
    this(linger, minInterval, chunkBuckets, OptionalLong.empty());
  }

  /** Settings with Floe's default staleness objective. */
  public RefreshSettings(
      Duration linger, Duration minInterval, OptionalInt chunkBuckets, OptionalLong chunkRows) {
    this(linger, minInterval, chunkBuckets, chunkRows, Optional.empty());
  }

  public RefreshSettings {
    if (linger.isNegative() || minInterval.isNegative()) {
      throw new IllegalArgumentException("linger and min_interval must not be negative");
    }
    if (chunkBuckets.isPresent() && chunkBuckets.getAsInt() < 1) {
      throw new IllegalArgumentException("chunk_buckets must be at least 1");
    }
    if (chunkRows.isPresent() && chunkRows.getAsLong() < 1) {
      throw new IllegalArgumentException("chunk_rows must be at least 1");
    }
    if (maxStaleness.isPresent()
        && (maxStaleness.get().isNegative() || maxStaleness.get().isZero())) {
      throw new IllegalArgumentException("max_staleness must be positive");
    }
  }
}
