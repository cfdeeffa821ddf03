package io.floe.app.views;

import io.floe.app.config.CatalogConfig;
import io.floe.schemas.FloeSerdes;
import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ValidatedView;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewValidator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import org.apache.iceberg.Schema;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the views of a views file to the floe.views topic, where every instance picks them up.
 * Views are checked first (against the source schemas where the source exists), and the views the
 * file adds or changes are checked against every view in force, the file's own included ({@link
 * ViewConflicts}); an invalid or conflicting view is logged with the problem and not published, so
 * the other views keep running and an earlier valid version of it stays in force. Views the file no
 * longer declares, and that the file had declared, are deleted.
 *
 * <p>A view is published only when its definition differs from the one on the topic, with the next
 * revision ({@link StoredView#nextRevision}) after the one on the topic and the one its target
 * records: a topic recreated empty, to which the file is published again, continues the revisions
 * its targets hold.
 */
public final class ViewsPublisher {

  private static final Logger LOG = LoggerFactory.getLogger(ViewsPublisher.class);
  static final String ORIGIN_FILE = "file";

  private final Map<String, Object> clients;
  private final String topic;
  private final FloeSerdes serdes;

  public ViewsPublisher(Map<String, Object> clients, String topic, FloeSerdes serdes) {
    this.clients = clients;
    this.topic = topic;
    this.serdes = serdes;
  }

  /** What a publication did. */
  public record Result(
      List<String> published, List<String> deleted, List<ValidatedView> rejected) {}

  /** Publishes the file's views, checked against source schemas and targets in {@code catalogs}. */
  public Result publish(List<ViewDefinition> views, CatalogConfig catalogs)
      throws InterruptedException {
    Map<String, ViewRecord> current = read();
    List<ValidatedView> checked =
        ViewValidator.validate(views, loadedOnce(catalogs.schemaLookup()));
    ViewConflicts.Targets targets = loadedOnce(catalogs.targets());
    Map<String, String> conflicts = conflicts(current, views, checked, targets);
    List<String> published = new ArrayList<>();
    List<String> deleted = new ArrayList<>();
    List<ValidatedView> rejected = new ArrayList<>();
    Map<String, Object> producerConfig = new HashMap<>(clients);
    producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
    producerConfig.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    try (KafkaProducer<String, ViewRecord> producer =
        new KafkaProducer<>(
            producerConfig, new StringSerializer(), serdes.viewRecord().serializer())) {
      for (ValidatedView view : checked) {
        String name = view.definition().name();
        if (!view.isValid() && !view.sourceMissing()) {
          rejected.add(view);
          LOG.error(
              "View {} in the views file is invalid and not published: {}", name, view.error());
          continue;
        }
        if (conflicts.containsKey(name)) {
          rejected.add(
              new ValidatedView(
                  view.definition(), view.query(), null, conflicts.get(name), false, null));
          LOG.error("View {} in the views file is not published: {}", name, conflicts.get(name));
          continue;
        }
        if (view.sourceMissing()) {
          LOG.warn("View {}: {}; it will refresh once the table exists", name, view.error());
        }
        ViewRecord record = StoredView.toRecord(view.definition(), ORIGIN_FILE, Instant.now());
        ViewRecord existing = current.get(name);
        if (!sameDefinition(existing, record)) {
          record.setRevision(
              StoredView.nextRevision(
                  existing == null ? OptionalLong.empty() : OptionalLong.of(existing.getRevision()),
                  targets.revision(view.definition())));
          producer.send(new ProducerRecord<>(topic, name, record)).get();
          published.add(name);
        }
      }
      for (ViewRecord existing : current.values()) {
        boolean declared = views.stream().anyMatch(v -> v.name().equals(existing.getName()));
        if (ORIGIN_FILE.equals(existing.getOrigin()) && !declared) {
          producer.send(new ProducerRecord<>(topic, existing.getName(), null)).get();
          deleted.add(existing.getName());
        }
      }
      producer.flush();
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "Cannot publish views to " + topic + ": " + e.getCause().getMessage(), e);
    }
    if (!published.isEmpty() || !deleted.isEmpty()) {
      LOG.info("Views file: published {}, deleted {}", published, deleted);
    }
    return new Result(published, deleted, rejected);
  }

  /**
   * Each source table loaded once per publication: views over the same source would each load it, a
   * catalog round trip apiece.
   */
  static ViewValidator.SchemaLookup loadedOnce(ViewValidator.SchemaLookup lookup) {
    Map<TableName, Optional<Schema>> loaded = new HashMap<>();
    return new ViewValidator.SchemaLookup() {
      @Override
      public Optional<Schema> schemaOf(TableName table) {
        return loaded.computeIfAbsent(table, lookup::schemaOf);
      }

      @Override
      public Optional<String> tooLargeToJoin(ViewPlan.Dimension dimension) {
        return lookup.tooLargeToJoin(dimension);
      }
    };
  }

  /**
   * Each target loaded once per publication: the rules of view writes and the revisions ask for the
   * same tables.
   */
  static ViewConflicts.Targets loadedOnce(ViewConflicts.Targets targets) {
    Map<TableName, Optional<ViewConflicts.ExistingTable>> loaded = new HashMap<>();
    return table -> loaded.computeIfAbsent(table, targets::existing);
  }

  /**
   * The views the file adds or changes that break a rule with the views in force: those of the
   * topic that stay (all but the file's views it no longer declares) and the file's others. A view
   * the file leaves as it is counts as in force, not as a write, so that it keeps its place when a
   * new view conflicts with it.
   */
  private static Map<String, String> conflicts(
      Map<String, ViewRecord> current,
      List<ViewDefinition> declared,
      List<ValidatedView> checked,
      ViewConflicts.Targets targets) {
    List<ViewDefinition> inForce = new ArrayList<>();
    for (ViewRecord existing : current.values()) {
      boolean stillDeclared = declared.stream().anyMatch(v -> v.name().equals(existing.getName()));
      if (stillDeclared || !ORIGIN_FILE.equals(existing.getOrigin())) {
        inForce.add(StoredView.of(existing).toDefinition());
      }
    }
    List<ViewDefinition> writes = new ArrayList<>();
    for (ValidatedView view : checked) {
      ViewDefinition definition = view.definition();
      boolean publishable = view.isValid() || view.sourceMissing();
      ViewRecord record = StoredView.toRecord(definition, ORIGIN_FILE, Instant.now());
      if (publishable && !sameDefinition(current.get(definition.name()), record)) {
        writes.add(definition);
      }
    }
    return ViewConflicts.check(inForce, writes, targets);
  }

  private static boolean sameDefinition(ViewRecord existing, ViewRecord record) {
    if (existing == null) {
      return false;
    }
    ViewRecord copy =
        ViewRecord.newBuilder(record)
            .setUpdatedAt(existing.getUpdatedAt())
            .setRevision(existing.getRevision())
            .build();
    return copy.equals(existing);
  }

  /**
   * The current contents of the views topic, read to its end, each record with its revision filled
   * in ({@link StoredView#revision}).
   */
  public Map<String, ViewRecord> read() {
    Map<String, Object> consumerConfig = new HashMap<>(clients);
    consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Map<String, ViewRecord> views = new HashMap<>();
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(
            consumerConfig, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          if (record.value() == null) {
            views.remove(record.key());
            continue;
          }
          ViewRecord view = ViewRecords.decode(serdes.viewRecord().deserializer(), record);
          if (view != null) {
            view.setRevision(StoredView.revision(view, record.offset()));
            views.put(record.key(), view);
          }
        }
      }
    }
    return views;
  }
}
