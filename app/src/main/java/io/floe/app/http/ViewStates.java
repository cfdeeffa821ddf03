package io.floe.app.http;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.app.config.FloeConfig;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.store.StoreNames;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the maintain stage's view states wherever they live: each instance holds the states of the
 * views it owns, so a state on another instance is fetched from that instance's HTTP server (Kafka
 * Streams interactive queries, with {@code application.server} as the address). That endpoint is
 * guarded like the API's reads (it shows every view's query, errors and refreshes), so the request
 * carries this instance's credentials ({@link HttpAccess#authorization}).
 */
final class ViewStates {

  private static final Logger LOG = LoggerFactory.getLogger(ViewStates.class);
  static final String INTERNAL_PATH = "/internal/view-states";
  static final ObjectMapper MAPPER =
      new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  private final KafkaStreams streams;
  private final HostInfo self;
  private final HttpAccess access;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  ViewStates(KafkaStreams streams, HostInfo self, HttpAccess access) {
    this.streams = streams;
    this.self = self;
    this.access = access;
  }

  /** The states this instance holds. */
  Map<String, ViewState> local() {
    Map<String, ViewState> states = new TreeMap<>();
    try {
      ReadOnlyKeyValueStore<String, ViewState> store =
          streams.store(
              StoreQueryParameters.fromNameAndType(
                  StoreNames.VIEW_STATE, QueryableStoreTypes.keyValueStore()));
      try (KeyValueIterator<String, ViewState> all = store.all()) {
        all.forEachRemaining(entry -> states.put(entry.key, entry.value));
      }
    } catch (InvalidStateStoreException e) {
      LOG.debug("View states are not queryable right now: {}", e.getMessage());
    }
    return states;
  }

  /** Every view's state, from every instance that answers. */
  Map<String, ViewState> all() {
    Map<String, ViewState> states = new TreeMap<>(local());
    for (StreamsMetadata instance : streams.metadataForAllStreamsClients()) {
      if (instance.hostInfo().equals(self)
          || !instance.stateStoreNames().contains(StoreNames.VIEW_STATE)) {
        continue;
      }
      fetch(instance.hostInfo(), INTERNAL_PATH)
          .ifPresent(
              body -> {
                try {
                  states.putAll(
                      MAPPER.readValue(body, new TypeReference<Map<String, ViewState>>() {}));
                } catch (Exception e) {
                  LOG.warn(
                      "Cannot read view states from {}: {}", instance.hostInfo(), e.getMessage());
                }
              });
    }
    return states;
  }

  /** The state of one view, from the instance that owns it. */
  Optional<ViewState> one(String view) {
    KeyQueryMetadata owner =
        streams.queryMetadataForKey(StoreNames.VIEW_STATE, view, Serdes.String().serializer());
    if (owner == null
        || owner.activeHost() == null
        || owner.activeHost().equals(self)
        || owner.activeHost().port() < 0) {
      return Optional.ofNullable(local().get(view));
    }
    return fetch(owner.activeHost(), INTERNAL_PATH)
        .map(
            body -> {
              try {
                Map<String, ViewState> remote =
                    MAPPER.readValue(body, new TypeReference<Map<String, ViewState>>() {});
                return remote.get(view);
              } catch (Exception e) {
                return null;
              }
            });
  }

  private Optional<String> fetch(HostInfo host, String path) {
    try {
      HttpRequest.Builder request =
          HttpRequest.newBuilder(URI.create("http://" + host.host() + ":" + host.port() + path))
              .timeout(Duration.ofSeconds(5));
      access.authorization().ifPresent(value -> request.header("Authorization", value));
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        // A 401 here means the instances were given different tokens: say so, not just "absent".
        LOG.warn(
            "Instance {} answered {} to {}{}",
            host,
            response.statusCode(),
            path,
            response.statusCode() == 401
                ? ": every instance of an application needs the same " + FloeConfig.HTTP_TOKEN
                : "");
        return Optional.empty();
      }
      return Optional.of(response.body());
    } catch (Exception e) {
      LOG.warn("Cannot reach instance {}: {}", host, e.getMessage());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return Optional.empty();
    }
  }
}
