package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.SharedMetadataTables;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredDirty;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.util.Tasks;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The detect stage (DESIGN §2, §3.2–§3.4): for each snapshot event, the views whose source is the
 * snapshot's table come from the {@link ViewIndex}, and the snapshot's file statistics give each of
 * them its dirty buckets ({@link DirtyBucketDetector}). Emits one {@link DirtyUpdate.Change} per
 * view that has any, keyed by view name for the maintain stage, in the table's commit order.
 *
 * <p>Reading manifests is I/O, so it runs on Floe's I/O executor: snapshots wait in the {@link
 * StoreNames#DETECT_QUEUE} store (a crash or a rebalance detects them again), and one job per table
 * detects the queued snapshots in order, loading the table once. If detection itself fails (the
 * table cannot be read), every view on the table is marked fully dirty: the refresh then narrows
 * that down from the target's bookmark, so nothing is lost and little is wasted.
 */
public final class DetectDirtyBucketsProcessor
    implements Processor<String, SnapshotEvent, String, DirtyUpdate> {

  /** The node name. */
  public static final String NAME = "detect-dirty-buckets";

  private static final Logger LOG = LoggerFactory.getLogger(DetectDirtyBucketsProcessor.class);
  private static final int ATTEMPTS = 3;

  private final Function<String, Catalog> catalogs;
  private final ViewIndex views;
  private final ManifestWork manifests;
  private final Duration tick;
  private final Jobs<String, List<Detected>> detections;
  private ProcessorContext<String, DirtyUpdate> context;
  private KeyValueStore<String, QueuedSnapshots> queue;

  /** The dirty buckets of one queued snapshot, per view. */
  private record Detected(QueuedSnapshots.Queued snapshot, Map<String, DirtyBuckets> dirty) {}

  /**
   * Reads manifests on the I/O executor of {@code services}, through its {@link ManifestWork}
   * (ahead of the walk for a table on a remote store), and collects finished detections every tick
   * of {@code settings}.
   */
  public DetectDirtyBucketsProcessor(TopologySettings settings, TopologyServices services) {
    this.catalogs = services.catalogs();
    this.manifests = services.manifests();
    this.views = services.views();
    this.tick = settings.tick();
    this.detections = new Jobs<>(services.io());
  }

  @Override
  public void init(ProcessorContext<String, DirtyUpdate> context) {
    this.context = context;
    this.queue = context.getStateStore(StoreNames.DETECT_QUEUE);
    List<String> waiting = new ArrayList<>();
    try (KeyValueIterator<String, QueuedSnapshots> all = queue.all()) {
      all.forEachRemaining(entry -> waiting.add(entry.key));
    }
    // Snapshots a previous owner of this task had not detected yet.
    waiting.forEach(this::startDetection);
    context.schedule(tick, PunctuationType.WALL_CLOCK_TIME, now -> applyFinished());
  }

  @Override
  public void process(Record<String, SnapshotEvent> record) {
    SnapshotEvent event = record.value();
    if (event == null) {
      return;
    }
    TableName table;
    try {
      table = EventRecords.tableOf(event.getTable());
    } catch (IllegalArgumentException e) {
      LOG.warn("Ignoring a snapshot event of an invalid table name: {}", e.getMessage());
      return;
    }
    requestRefreshesOfJoining(table, event);
    if (views.readingTable(table).isEmpty()) {
      return;
    }
    String key = table.toString();
    QueuedSnapshots queued = queue.get(key);
    List<QueuedSnapshots.Queued> snapshots =
        new ArrayList<>(queued == null ? List.of() : queued.snapshots());
    snapshots.add(EventRecords.queued(event));
    queue.put(key, new QueuedSnapshots(snapshots));
    if (!detections.isRunning(key)) {
      startDetection(key);
      applyFinished();
    }
  }

  /**
   * A snapshot of a dimension table asks each view that joins it to refresh (DESIGN §3.10): the
   * refresh pins the fact's current snapshot and the dimension's, and recomputes the buckets whose
   * fact rows may carry a key changed since the state the target records (nothing is read here, so
   * no I/O runs on the stream thread). A compaction changes no row and asks nothing.
   */
  private void requestRefreshesOfJoining(TableName table, SnapshotEvent event) {
    if (!event.getHistoryBroken() && DataOperations.REPLACE.equals(event.getOperation())) {
      return;
    }
    long committedAt = event.getTimestamp().toEpochMilli();
    for (CompiledView view : views.joiningTable(table)) {
      DirtyUpdate request =
          DirtyUpdate.Request.dimensionCommitted(table.toString(), SourceSnapshot.of(event));
      context.forward(new Record<>(view.name(), request, committedAt));
    }
  }

  private void startDetection(String key) {
    QueuedSnapshots queued = queue.get(key);
    if (queued == null || queued.snapshots().isEmpty()) {
      return;
    }
    TableName table = TableName.parse(key);
    List<BucketedView> onTable = views.readingTable(table).stream().map(BucketedView::of).toList();
    List<QueuedSnapshots.Queued> batch = queued.snapshots();
    detections.start(key, RequestStage.DETECT, () -> detect(table, batch, onTable));
  }

  /** Runs on the I/O executor: the dirty buckets of each snapshot, loading the table once. */
  private List<Detected> detect(
      TableName table, List<QueuedSnapshots.Queued> batch, List<BucketedView> onTable) {
    List<Detected> detected = new ArrayList<>();
    AtomicReference<Table> loaded = new AtomicReference<>();
    for (QueuedSnapshots.Queued snapshot : batch) {
      if (snapshot.brokenReason() != null) {
        detected.add(new Detected(snapshot, allDirty(onTable, snapshot.brokenReason())));
        continue;
      }
      Map<String, DirtyBuckets> dirty;
      try {
        dirty = dirtyOf(table, snapshot, onTable, loaded);
      } catch (RuntimeException failure) {
        LOG.warn(
            "Cannot read the changes of snapshot {} of {}; its views will catch up from their"
                + " targets' bookmarks",
            snapshot.snapshot().snapshotId(),
            table,
            failure);
        dirty =
            allDirty(
                onTable,
                "changes of snapshot " + snapshot.snapshot().snapshotId() + " could not be read");
      }
      detected.add(new Detected(snapshot, dirty));
    }
    return detected;
  }

  /**
   * The dirty buckets of one snapshot, tried a few times at once; {@code loaded} holds the table
   * while its reads succeed, and a try after a failure loads it again.
   */
  private Map<String, DirtyBuckets> dirtyOf(
      TableName table,
      QueuedSnapshots.Queued snapshot,
      List<BucketedView> onTable,
      AtomicReference<Table> loaded) {
    AtomicReference<Map<String, DirtyBuckets>> dirty = new AtomicReference<>();
    Tasks.foreach(snapshot)
        .retry(ATTEMPTS - 1)
        .exponentialBackoff(0, 0, Long.MAX_VALUE, 1)
        .run(
            queued -> {
              Table current = loaded.getAndSet(null);
              if (current == null) {
                current =
                    SharedMetadataTables.load(catalogs.apply(table.catalog()), table.identifier());
              }
              dirty.set(
                  DirtyBucketDetector.detect(
                      current, queued.snapshot().snapshotId(), onTable, manifests));
              loaded.set(current);
            });
    return dirty.get();
  }

  private static Map<String, DirtyBuckets> allDirty(List<BucketedView> views, String reason) {
    Map<String, DirtyBuckets> all = new LinkedHashMap<>();
    views.forEach(v -> all.put(v.view(), DirtyBuckets.all(reason)));
    return all;
  }

  private void applyFinished() {
    for (Jobs.Done<String, List<Detected>> done : detections.collect()) {
      String key = done.key();
      QueuedSnapshots queued = queue.get(key);
      if (queued == null) {
        continue;
      }
      if (done.failed()) {
        // detect() handles its own failures; anything else is a bug: try again on the next tick.
        LOG.error("Detection of the snapshots of {} failed", key, done.failure());
        startDetection(key);
        continue;
      }
      for (Detected detected : done.result()) {
        forward(key, detected);
      }
      List<QueuedSnapshots.Queued> rest =
          queued.snapshots().subList(done.result().size(), queued.snapshots().size());
      if (rest.isEmpty()) {
        queue.delete(key);
      } else {
        queue.put(key, new QueuedSnapshots(rest));
        startDetection(key);
      }
    }
  }

  private void forward(String table, Detected detected) {
    SourceSnapshot snapshot = detected.snapshot().snapshot();
    for (Map.Entry<String, DirtyBuckets> entry : detected.dirty().entrySet()) {
      if (entry.getValue().isEmpty()) {
        continue;
      }
      DirtyUpdate update =
          new DirtyUpdate.Change(table, snapshot, StoredDirty.of(entry.getValue()));
      context.forward(new Record<>(entry.getKey(), update, snapshot.committedAt()));
      LOG.debug(
          "Snapshot {} of {} dirtied {} of view {}",
          snapshot.snapshotId(),
          table,
          entry.getValue(),
          entry.getKey());
    }
  }

  @Override
  public void close() {
    // The queue keeps what was not detected, for the next owner of this task.
    detections.abandonAll();
  }
}
