package io.floe.schemas;

import io.floe.schemas.registry.RegistryAvroSerde;
import io.floe.schemas.registry.SchemaRegistryClient;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/**
 * The serdes of Floe's topic values, one per record type: Avro's single-object encoding, or the
 * Schema Registry wire format when {@code schema.registry.url} is set. Either way a reader also
 * accepts the other encoding where it can (see {@link RegistryAvroSerde}).
 */
public final class FloeSerdes {

  private static final FloeSerdes SINGLE_OBJECT = new FloeSerdes(null);

  private final SchemaRegistryClient registry;
  private final Map<Class<?>, Serde<?>> serdes = new ConcurrentHashMap<>();

  private FloeSerdes(SchemaRegistryClient registry) {
    this.registry = registry;
  }

  /** Avro single-object encoding, no registry. */
  public static FloeSerdes singleObject() {
    return SINGLE_OBJECT;
  }

  /** The Schema Registry wire format, through {@code registry}. */
  public static FloeSerdes withRegistry(SchemaRegistryClient registry) {
    return new FloeSerdes(registry);
  }

  /** The registry's wire format when the settings name a registry, else single-object encoding. */
  public static FloeSerdes fromConfig(Map<String, ?> config) {
    return SchemaRegistryClient.fromConfig(config)
        .map(FloeSerdes::withRegistry)
        .orElse(SINGLE_OBJECT);
  }

  public boolean usesRegistry() {
    return registry != null;
  }

  /** Values of {@code floe.commits}. */
  public Serde<TableCommitted> tableCommitted() {
    return serde(TableCommitted.class);
  }

  /** Values of {@code floe.snapshots}. */
  public Serde<SnapshotEvent> snapshotEvent() {
    return serde(SnapshotEvent.class);
  }

  /** Values of {@code floe.views}. */
  public Serde<ViewRecord> viewRecord() {
    return serde(ViewRecord.class);
  }

  /** Values of {@code floe.requests}. */
  public Serde<ViewCommand> viewCommand() {
    return serde(ViewCommand.class);
  }

  /** Values of {@code floe.refreshes}. */
  public Serde<RefreshEvent> refreshEvent() {
    return serde(RefreshEvent.class);
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> Serde<T> serde(Class<T> type) {
    return (Serde<T>)
        serdes.computeIfAbsent(
            type,
            t -> registry == null ? AvroSerde.of(type) : new RegistryAvroSerde<>(type, registry));
  }
}
