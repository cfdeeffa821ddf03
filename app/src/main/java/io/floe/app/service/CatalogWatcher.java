package io.floe.app.service;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.app.views.ViewRecords;
import io.floe.schemas.ViewRecord;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fallback for catalogs that announce nothing: checks the metadata location of every source
 * table of the registered views (and of any extra tables) each interval, and publishes a commit
 * notice when one has moved. Views come from the {@code floe.views} topic, so views created through
 * the API are watched as well as those of the views file.
 */
public final class CatalogWatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CatalogWatcher.class);

  private final CatalogConfig catalogs;
  private final CommitNotices notices;
  private final KafkaConsumer<String, byte[]> views;
  private final Deserializer<ViewRecord> records;
  private final Set<TableName> extraTables;
  private final ViewIndex registered = new ViewIndex();
  private final Map<TableName, String> seen = new HashMap<>();

  public CatalogWatcher(FloeConfig config, Set<TableName> extraTables) {
    this.catalogs = config.catalogs();
    this.notices = new CommitNotices(config, "floe-watch-catalog");
    this.extraTables = Set.copyOf(extraTables);
    Map<String, Object> settings = new HashMap<>(config.clientProperties());
    settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    this.records = config.serdes().viewRecord().deserializer();
    this.views =
        new KafkaConsumer<>(settings, new StringDeserializer(), new ByteArrayDeserializer());
    List<TopicPartition> partitions = new ArrayList<>();
    views
        .partitionsFor(config.topics().views(), Duration.ofSeconds(30))
        .forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
    views.assign(partitions);
    views.seekToBeginning(partitions);
  }

  /** The tables watched now: the sources of the registered views, and the extra tables. */
  public Set<TableName> tables() {
    // Read the views topic up to its end as of now, so that a view registered before this call
    // is watched by it.
    Map<TopicPartition, Long> end = views.endOffsets(views.assignment());
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    do {
      for (ConsumerRecord<String, byte[]> record : views.poll(Duration.ofMillis(100))) {
        if (record.key() == null) {
          continue;
        }
        if (record.value() == null) {
          StoredView.apply(registered, record.key(), null, record.offset());
          continue;
        }
        ViewRecord view = ViewRecords.decode(records, record);
        if (view != null) {
          StoredView.apply(registered, record.key(), view, record.offset());
        }
      }
    } while (end.entrySet().stream().anyMatch(e -> views.position(e.getKey()) < e.getValue())
        && System.nanoTime() < deadline);
    Set<TableName> tables = new TreeSet<>(java.util.Comparator.comparing(TableName::toString));
    tables.addAll(extraTables);
    tables.addAll(registered.sources());
    return tables;
  }

  /** Checks every watched table once; returns the number of notices published. */
  public int check() throws InterruptedException {
    int published = 0;
    for (TableName name : tables()) {
      try {
        Table table = catalogs.catalog(name.catalog()).loadTable(name.identifier());
        String location =
            table instanceof HasTableOperations ops
                ? ops.operations().current().metadataFileLocation()
                : null;
        Snapshot current = table.currentSnapshot();
        String fingerprint = location != null ? location : String.valueOf(current);
        if (fingerprint.equals(seen.get(name))) {
          continue;
        }
        seen.put(name, fingerprint);
        notices.publish(name, current == null ? null : current.snapshotId(), location);
        published++;
        LOG.info(
            "{} moved to {}: published a commit notice",
            name,
            current == null ? "no snapshot" : "snapshot " + current.snapshotId());
      } catch (RuntimeException e) {
        LOG.warn("Cannot check {}: {}", name, e.getMessage());
      }
    }
    return published;
  }

  @Override
  public void close() throws Exception {
    views.close();
    notices.close();
    catalogs.close();
  }
}
