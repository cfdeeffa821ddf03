package io.floe.schemas;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serde for one of Floe's Avro record types, in Avro's single-object encoding: a two-byte
 * marker, the 8-byte fingerprint of the writer schema, then the Avro binary body. A record whose
 * bytes cannot be decoded fails with a {@link SerializationException} that names the type and the
 * topic, so that the caller can route it to the dead-letter topic.
 *
 * <p>The fingerprint names the writer's schema exactly, so a record written by an earlier release
 * (a schema with fewer fields) decodes only if the reader knows that schema: the released versions
 * ship in {@code /compat/v<n>/<Name>.avsc} ({@link #earlierVersions}) and every one is taught to
 * the decoder, which resolves it to today's schema with the new fields' defaults.
 *
 * @param <T> the generated record class
 */
public final class AvroSerde<T extends SpecificRecord>
    implements Serde<T>, Serializer<T>, Deserializer<T> {

  private final Class<T> type;
  private final BinaryMessageEncoder<T> encoder;
  private final BinaryMessageDecoder<T> decoder;

  private AvroSerde(Class<T> type) {
    this.type = type;
    SpecificData model = SpecificData.getForClass(type);
    Schema schema = model.getSchema(type);
    this.encoder = new BinaryMessageEncoder<>(model, schema);
    this.decoder = new BinaryMessageDecoder<>(model, schema);
    earlierVersions(schema.getName()).forEach(decoder::addSchema);
  }

  /**
   * The released versions of the schema called {@code name}, oldest first, as kept under {@code
   * /compat/v1}, {@code /compat/v2}, ...: a version that left the schema unchanged has no file.
   */
  public static List<Schema> earlierVersions(String name) {
    List<Schema> versions = new ArrayList<>();
    for (int v = 1; ; v++) {
      if (AvroSerde.class.getResource("/compat/v" + v + "/") == null) {
        return versions;
      }
      try (InputStream in =
          AvroSerde.class.getResourceAsStream("/compat/v" + v + "/" + name + ".avsc")) {
        if (in != null) {
          versions.add(new Schema.Parser().parse(in));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read version " + v + " of schema " + name, e);
      }
    }
  }

  /** A serde for the generated record class {@code type}. */
  public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
    return new AvroSerde<>(type);
  }

  @Override
  public byte[] serialize(String topic, T record) {
    if (record == null) {
      return null;
    }
    try {
      ByteBuffer buffer = encoder.encode(record);
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      return bytes;
    } catch (IOException | AvroRuntimeException e) {
      throw new SerializationException(
          "Cannot encode " + type.getSimpleName() + " for topic " + topic + ": " + e.getMessage(),
          e);
    }
  }

  @Override
  public T deserialize(String topic, byte[] data) {
    if (data == null) {
      return null;
    }
    if (data.length >= 5 && data[0] == 0) {
      throw new SerializationException(
          "Cannot decode "
              + type.getSimpleName()
              + " from topic "
              + topic
              + ": the record is in the Schema Registry wire format (schema id "
              + ByteBuffer.wrap(data, 1, 4).getInt()
              + ") but no schema.registry.url is configured");
    }
    try {
      return decoder.decode(data);
    } catch (IOException | AvroRuntimeException e) {
      throw new SerializationException(
          "Cannot decode "
              + type.getSimpleName()
              + " from topic "
              + topic
              + " ("
              + data.length
              + " bytes): "
              + e.getMessage(),
          e);
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
