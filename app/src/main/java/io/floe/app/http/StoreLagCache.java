package io.floe.app.http;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The readiness probe's answer to "how many store partitions are behind", kept for {@link
 * #INTERVAL}: Kafka Streams' {@code allLocalStorePartitionLags()} asks the broker for the
 * changelogs' end offsets at every call, so without it a burst of probes, or probes against a slow
 * broker, would pile up one request each. Probes meanwhile share the answer, and those that arrive
 * while it is looked up wait for that one lookup.
 */
final class StoreLagCache {

  /**
   * How long an answer is reused: well below a probe's period (10 s by Kubernetes' default, rarely
   * under 1 s), so that readiness still follows the stores within about a second.
   */
  static final Duration INTERVAL = Duration.ofSeconds(1);

  // Keyed by the Kafka Streams instance asked: an answer of one the server no longer serves is not
  // reused for the next.
  private final Cache<Object, OptionalLong> answers;

  StoreLagCache() {
    this(Ticker.systemTicker());
  }

  StoreLagCache(Ticker ticker) {
    this.answers =
        Caffeine.newBuilder().expireAfterWrite(INTERVAL).maximumSize(1).ticker(ticker).build();
  }

  /**
   * The answer for {@code streams} (the {@link KafkaStreams} instance asked), looked up by {@code
   * lookup} unless one is recent.
   */
  OptionalLong behind(Object streams, Supplier<OptionalLong> lookup) {
    return answers.get(streams, ignored -> lookup.get());
  }
}
