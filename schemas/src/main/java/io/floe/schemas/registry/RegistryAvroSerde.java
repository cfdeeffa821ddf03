package io.floe.schemas.registry;

import io.floe.schemas.AvroSerde;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serde for one of Floe's record types in the Schema Registry wire format: a zero magic byte,
 * the 4-byte big-endian schema id, then the Avro binary body. The schema is registered under {@code
 * <topic>-value} (the registry's topic-name strategy). Reading resolves the writer's schema
 * (fetched by id) against this type's, so that older and newer writers are read; records in Avro's
 * single-object encoding are read too, so that a topic can move to the registry without a gap.
 *
 * @param <T> the generated record class
 */
public final class RegistryAvroSerde<T extends SpecificRecord>
    implements Serde<T>, Serializer<T>, Deserializer<T> {

  static final byte MAGIC = 0;

  private final Class<T> type;
  private final SchemaRegistryClient registry;
  private final SpecificData model;
  private final Schema schema;
  private final AvroSerde<T> singleObject;
  private final Map<Integer, SpecificDatumReader<T>> readers = new ConcurrentHashMap<>();

  public RegistryAvroSerde(Class<T> type, SchemaRegistryClient registry) {
    this.type = type;
    this.registry = registry;
    this.model = SpecificData.getForClass(type);
    this.schema = model.getSchema(type);
    this.singleObject = AvroSerde.of(type);
  }

  @Override
  public byte[] serialize(String topic, T record) {
    if (record == null) {
      return null;
    }
    int id = registry.idFor(topic + "-value", schema);
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(MAGIC);
      out.write(ByteBuffer.allocate(4).putInt(id).array());
      BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
      new SpecificDatumWriter<T>(schema, model).write(record, encoder);
      encoder.flush();
      return out.toByteArray();
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
    if (data.length == 0 || data[0] != MAGIC) {
      return singleObject.deserialize(topic, data);
    }
    if (data.length < 5) {
      throw new SerializationException(
          "Cannot decode " + type.getSimpleName() + " from topic " + topic + ": truncated header");
    }
    int id = ByteBuffer.wrap(data, 1, 4).getInt();
    try {
      SpecificDatumReader<T> reader =
          readers.computeIfAbsent(
              id, known -> new SpecificDatumReader<>(registry.schema(known), schema, model));
      return reader.read(null, DecoderFactory.get().binaryDecoder(data, 5, data.length - 5, null));
    } catch (IOException | AvroRuntimeException e) {
      throw new SerializationException(
          "Cannot decode "
              + type.getSimpleName()
              + " (schema id "
              + id
              + ") from topic "
              + topic
              + ": "
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
