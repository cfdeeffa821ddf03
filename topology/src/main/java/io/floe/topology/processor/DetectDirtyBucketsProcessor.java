package io.floe.topology.processor;

import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.ViewRecord;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.StoreNames;
import io.floe.topology.store.StoredDirty;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.sql.ViewQueryParser;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The detect stage (DESIGN §2, §3.2–§3.4): for each snapshot event, the views whose source is the
 * snapshot's table are looked up in the global views store, and the snapshot's file statistics give
 * each of them its dirty buckets ({@link DirtyBucketDetector}). Emits one {@link DirtyUpdate} per
 * view that has any, keyed by view name for the maintain stage.
 *
 * <p>If detection itself fails (the table cannot be read), every view on the table is marked fully
 * dirty: the refresh then narrows that down from the target's bookmark, so nothing is lost and
 * little is wasted.
 */
public final class DetectDirtyBucketsProcessor
    implements Processor<String, SnapshotEvent, String, DirtyUpdate> {

  /** The node name. */
  public static final String NAME = "detect-dirty-buckets";

  private static final Logger LOG = LoggerFactory.getLogger(DetectDirtyBucketsProcessor.class);

  private final Function<String, Catalog> catalogs;
  private final Map<String, Parsed> parsed = new HashMap<>();
  private ProcessorContext<String, DirtyUpdate> context;
  private KeyValueStore<String, ViewRecord> views;

  /** A view's query parsed once; {@code bucketed} is null when the query is invalid. */
  private record Parsed(String query, TableName source, BucketedView bucketed) {}

  public DetectDirtyBucketsProcessor(Function<String, Catalog> catalogs) {
    this.catalogs = catalogs;
  }

  @Override
  public void init(ProcessorContext<String, DirtyUpdate> context) {
    this.context = context;
    this.views = context.getStateStore(StoreNames.VIEWS);
  }

  @Override
  public void process(Record<String, SnapshotEvent> record) {
    SnapshotEvent event = record.value();
    if (event == null) {
      return;
    }
    TableName table =
        new TableName(
            event.getTable().getCatalog(),
            event.getTable().getNamespace(),
            event.getTable().getName());
    List<BucketedView> onTable = viewsOn(table);
    if (onTable.isEmpty()) {
      return;
    }
    Map<String, DirtyBuckets> dirty = detect(table, event, onTable);
    for (Map.Entry<String, DirtyBuckets> entry : dirty.entrySet()) {
      if (entry.getValue().isEmpty()) {
        continue;
      }
      DirtyUpdate update =
          DirtyUpdate.change(
              table.toString(),
              event.getSnapshotId(),
              event.getSequenceNumber(),
              event.getTimestamp().toEpochMilli(),
              StoredDirty.of(entry.getValue()));
      context.forward(record.withKey(entry.getKey()).withValue(update));
      LOG.debug(
          "Snapshot {} of {} dirtied {} of view {}",
          event.getSnapshotId(),
          table,
          entry.getValue(),
          entry.getKey());
    }
  }

  private Map<String, DirtyBuckets> detect(
      TableName table, SnapshotEvent event, List<BucketedView> onTable) {
    if (event.getHistoryBroken()) {
      Map<String, DirtyBuckets> all = new LinkedHashMap<>();
      onTable.forEach(v -> all.put(v.view(), DirtyBuckets.all(event.getHistoryBrokenReason())));
      return all;
    }
    try {
      Table loaded = catalogs.apply(table.catalog()).loadTable(table.identifier());
      return DirtyBucketDetector.detect(loaded, event.getSnapshotId(), onTable);
    } catch (RuntimeException e) {
      LOG.warn(
          "Cannot read the changes of snapshot {} of {}; its views will catch up from their"
              + " targets' bookmarks",
          event.getSnapshotId(),
          table,
          e);
      Map<String, DirtyBuckets> all = new LinkedHashMap<>();
      onTable.forEach(
          v ->
              all.put(
                  v.view(),
                  DirtyBuckets.all(
                      "changes of snapshot " + event.getSnapshotId() + " could not be read")));
      return all;
    }
  }

  /** The valid views whose source is {@code table}. */
  private List<BucketedView> viewsOn(TableName table) {
    List<BucketedView> found = new ArrayList<>();
    try (KeyValueIterator<String, ViewRecord> all = views.all()) {
      while (all.hasNext()) {
        ViewRecord view = all.next().value;
        Parsed p = parse(view);
        if (p.bucketed() != null && p.source().equals(table)) {
          found.add(p.bucketed());
        }
      }
    }
    return found;
  }

  private Parsed parse(ViewRecord view) {
    Parsed known = parsed.get(view.getName());
    if (known != null
        && known.query().equals(view.getQuery())
        && (known.bucketed() == null
            || known.bucketed().zone().getId().equals(view.getTimezone()))) {
      return known;
    }
    Parsed p;
    try {
      ParsedViewQuery query = ViewQueryParser.parse(view.getQuery());
      p =
          new Parsed(
              view.getQuery(),
              query.source(),
              new BucketedView(
                  view.getName(),
                  query.bucketColumn(),
                  query.granularity(),
                  java.time.ZoneId.of(view.getTimezone())));
    } catch (InvalidViewException | RuntimeException e) {
      p = new Parsed(view.getQuery(), null, null);
    }
    parsed.put(view.getName(), p);
    return p;
  }
}
