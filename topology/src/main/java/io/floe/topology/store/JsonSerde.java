package io.floe.topology.store;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * JSON serde for the values of Floe's state stores and internal repartition topic: they never leave
 * the application, and JSON keeps them readable in a changelog dump. Unknown fields are ignored so
 * that a newer instance's values can be read by an older one during an upgrade.
 *
 * @param <T> a record type
 */
public final class JsonSerde<T> implements Serde<T>, Serializer<T>, Deserializer<T> {

  private static final ObjectMapper MAPPER =
      new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  private final Class<T> type;

  private JsonSerde(Class<T> type) {
    this.type = type;
  }

  public static <T> JsonSerde<T> of(Class<T> type) {
    return new JsonSerde<>(type);
  }

  @Override
  public byte[] serialize(String topic, T value) {
    if (value == null) {
      return null;
    }
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new SerializationException("Cannot encode " + type.getSimpleName(), e);
    }
  }

  @Override
  public T deserialize(String topic, byte[] data) {
    if (data == null) {
      return null;
    }
    try {
      return MAPPER.readValue(data, type);
    } catch (IOException e) {
      throw new SerializationException(
          "Cannot decode " + type.getSimpleName() + " from " + topic + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {}

  @Override
  public void close() {}

  @Override
  public Serializer<T> serializer() {
    return this;
  }

  @Override
  public Deserializer<T> deserializer() {
    return this;
  }
}
