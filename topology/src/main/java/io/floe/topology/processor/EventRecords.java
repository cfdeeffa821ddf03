package io.floe.topology.processor;

import io.floe.schemas.BucketRange;
import io.floe.schemas.DimensionSnapshot;
import io.floe.schemas.ObjectStoreRequests;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.SnapshotEvent;
import io.floe.schemas.TableCommitted;
import io.floe.schemas.TableRef;
import io.floe.schemas.TargetCompaction;
import io.floe.schemas.ViewCommand;
import io.floe.schemas.ViewCommandType;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.iceberg.RequestCounts;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.maintain.ViewMaintainer;
import io.floe.topology.maintain.ViewMaintainer.Report;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshOutcome;
import io.floe.topology.store.DirtyUpdate;
import io.floe.topology.store.QueuedSnapshots;
import io.floe.topology.store.StoredView;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.TableName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Avro form of what the processors publish and read (schemas/): snapshot events, refresh
 * events, view commands and table references, built and decoded here only, so that a field of a
 * schema is filled in one place.
 */
public final class EventRecords {

  /** The scope of a refresh of the buckets source commits changed. */
  public static final String SCOPE_CHANGES = "changes";

  /** The scope of a refresh that also recomputed a time range a user asked for. */
  public static final String SCOPE_RANGE = "range";

  /** The scope of a refresh of every bucket. */
  public static final String SCOPE_FULL = "full";

  private static final Logger LOG = LoggerFactory.getLogger(EventRecords.class);

  private EventRecords() {}

  /** The reference to {@code table}, with its UUID when known. */
  static TableRef tableRef(TableName table, String uuid) {
    return TableRef.newBuilder()
        .setCatalog(table.catalog())
        .setNamespace(table.namespace())
        .setName(table.table())
        .setUuid(uuid)
        .build();
  }

  /**
   * The table {@code ref} names.
   *
   * @throws IllegalArgumentException if it names no valid table
   */
  static TableName tableOf(TableRef ref) {
    return new TableName(ref.getCatalog(), ref.getNamespace(), ref.getName());
  }

  /**
   * The event of one snapshot of {@code table}.
   *
   * @param metadataLocation the table's metadata file the snapshot was read from, if known
   * @param broken why the table's history breaks before this snapshot, or null
   */
  static SnapshotEvent snapshot(
      TableName table, String uuid, Snapshot snapshot, String metadataLocation, String broken) {
    return SnapshotEvent.newBuilder()
        .setTable(tableRef(table, uuid))
        .setSnapshotId(snapshot.snapshotId())
        .setParentId(snapshot.parentId())
        .setSequenceNumber(snapshot.sequenceNumber())
        .setTimestamp(Instant.ofEpochMilli(snapshot.timestampMillis()))
        .setOperation(snapshot.operation())
        .setSummary(snapshot.summary())
        .setManifestList(snapshot.manifestListLocation())
        .setSchemaId(snapshot.schemaId())
        .setMetadataLocation(metadataLocation)
        .setHistoryBroken(broken != null)
        .setHistoryBrokenReason(broken)
        .build();
  }

  /** A snapshot event as the detect stage queues it. */
  static QueuedSnapshots.Queued queued(SnapshotEvent event) {
    return new QueuedSnapshots.Queued(
        SourceSnapshot.of(event), event.getHistoryBroken() ? event.getHistoryBrokenReason() : null);
  }

  /** The commit a notice names, awaited until {@code until}; null when it names none. */
  static TableCursor.Awaited awaited(TableCommitted notice, long until) {
    return notice.getSnapshotId() == null && notice.getMetadataLocation() == null
        ? null
        : new TableCursor.Awaited(notice.getSnapshotId(), notice.getMetadataLocation(), until);
  }

  /** Floe's own request that {@code view} refresh, for {@code reason}. */
  static ViewCommand refreshCommand(String view, String reason, long now) {
    return ViewCommand.newBuilder()
        .setView(view)
        .setCommand(ViewCommandType.REFRESH)
        .setRequestedAt(Instant.ofEpochMilli(now))
        .setRequestedBy("floe: " + reason)
        .build();
  }

  /**
   * A command of the requests topic as the maintain stage reads it. A time range with one end
   * missing, or empty, is left out with a warning and the command stays a refresh: any tool may
   * write the topic, and a malformed range must not stop the stream thread (the HTTP API refuses
   * such a range with the reason).
   */
  public static DirtyUpdate request(ViewCommand command) {
    return new DirtyUpdate.Request(
        command.getCommand() == ViewCommandType.FULL_REFRESH
            ? DirtyUpdate.Request.Kind.FULL_REFRESH
            : DirtyUpdate.Request.Kind.REFRESH,
        command.getRequestedAt().toEpochMilli(),
        command.getRequestedBy(),
        rangeOf(command));
  }

  private static TimeRange rangeOf(ViewCommand command) {
    Instant from = command.getRangeFrom();
    Instant to = command.getRangeTo();
    if (from == null && to == null) {
      return null;
    }
    try {
      if (from == null || to == null) {
        throw new IllegalArgumentException("both ends are required");
      }
      return TimeRange.of(from, to);
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "The refresh of view {} asks for the time range [{}, {}), which is left out: {}",
          command.getView(),
          from,
          to,
          e.getMessage());
      return null;
    }
  }

  /** The command asking for every bucket of {@code view} overlapping {@code range} now. */
  public static ViewCommand rangeCommand(
      String view, TimeRange range, Instant now, String requestedBy) {
    return ViewCommand.newBuilder()
        .setView(view)
        .setCommand(ViewCommandType.REFRESH)
        .setRequestedAt(now)
        .setRequestedBy(requestedBy)
        .setRangeFrom(range.from())
        .setRangeTo(range.to())
        .build();
  }

  /**
   * What a refresh was asked to cover, as {@link RefreshEvent#getScope} says it: {@value
   * #SCOPE_FULL} when it recomputed (or was to recompute) every bucket, {@value #SCOPE_RANGE} when
   * a user asked for a time range, {@value #SCOPE_CHANGES} otherwise.
   */
  static String scope(ViewState.InFlight refresh, RefreshOutcome outcome) {
    if ((outcome != null && outcome.recomputed().full())
        || (refresh != null && refresh.scope() == ViewState.Scope.FORCED)) {
      return SCOPE_FULL;
    }
    if (refresh != null && refresh.ranges() != null && !refresh.ranges().isEmpty()) {
      return SCOPE_RANGE;
    }
    return SCOPE_CHANGES;
  }

  /** The event of a refresh that brought the target to a new source snapshot. */
  private static RefreshEvent refreshed(Report.Refreshed refreshed) {
    return refreshEvent(
        refreshed.definition(),
        ViewMaintainer.sourceOf(refreshed.definition()),
        refreshed.refresh(),
        refreshed.outcome(),
        refreshed.mode(),
        refreshed.lagMs(),
        refreshed.stalenessMs(),
        null,
        refreshed.at());
  }

  /** The event of a failed refresh, or of a failed lookup of the source. */
  private static RefreshEvent failed(Report.Failed failed) {
    return refreshEvent(
        failed.definition(),
        ViewMaintainer.sourceOf(failed.definition()),
        failed.refresh(),
        null,
        RefreshMode.FAILED,
        null,
        null,
        failed.message(),
        failed.at());
  }

  /**
   * What is published of a report, at its time: a refresh event keyed by view, and for a refresh
   * that committed, the target's commit notice keyed by the target, so that views reading it
   * follow; nothing for a compaction, which its refresh's event describes.
   */
  static List<Record<String, Object>> of(Report report) {
    if (report instanceof Report.Failed failed) {
      return List.of(new Record<>(failed.view(), failed(failed), failed.at()));
    }
    if (!(report instanceof Report.Refreshed refreshed)) {
      return List.of();
    }
    long at = refreshed.at();
    Record<String, Object> event = new Record<>(refreshed.view(), refreshed(refreshed), at);
    RefreshOutcome outcome = refreshed.outcome();
    if (outcome.target().snapshotId() == null) {
      return List.of(event);
    }
    TableName target = TableName.parse(refreshed.definition().target());
    // A compaction after the refresh committed the target's newest snapshot.
    TableCommitted notice =
        CommitNotice.of(
            target,
            outcome.compaction() != null
                ? outcome.compaction().targetSnapshotId()
                : outcome.target().snapshotId(),
            outcome.target().metadataLocation(),
            Instant.ofEpochMilli(at),
            "floe");
    return List.of(event, new Record<>(target.toString(), notice, at));
  }

  /**
   * The event of a refresh of {@code view}: of its outcome, or, without one, of its failure with
   * {@code error}.
   *
   * @param source the view's source table
   * @param refresh the refresh in flight, null when the lookup of the source's snapshot failed
   */
  static RefreshEvent refreshEvent(
      StoredView view,
      TableName source,
      ViewState.InFlight refresh,
      RefreshOutcome outcome,
      RefreshMode mode,
      Long lag,
      Long staleness,
      String error,
      long now) {
    List<BucketRange> ranges = new ArrayList<>();
    boolean nullBucket = false;
    if (outcome != null && !outcome.recomputed().full() && outcome.bucketType() != null) {
      for (io.floe.topology.bucket.BucketRange range : outcome.recomputed().ranges().ranges()) {
        ranges.add(
            BucketRange.newBuilder()
                .setStart(micros(outcome.bucketType().toEpochMicros(range.start())))
                .setEnd(micros(outcome.bucketType().toEpochMicros(range.end())))
                .build());
      }
      nullBucket = outcome.recomputed().nullBucket();
    } else if (outcome != null && outcome.recomputed().full()) {
      nullBucket = true;
    }
    // A failure before the refresh started (the lookup of its source) has no refresh id: the event
    // names the view instead.
    RefreshId refreshId =
        outcome != null ? outcome.refreshId() : refresh == null ? null : refresh.refreshId();
    long sourceSnapshot =
        outcome != null
            ? outcome.source().snapshotId()
            : refresh == null || refresh.pin() == null ? -1L : refresh.pin().snapshotId();
    return RefreshEvent.newBuilder()
        .setRefreshId(refreshId == null ? view.name() : refreshId.toString())
        .setView(view.name())
        // The version the refresh ran, which the view may have left while it ran.
        .setViewVersion(refreshId == null ? view.version() : refreshId.version())
        .setTarget(
            tableRef(
                TableName.parse(view.target()),
                outcome == null ? null : outcome.target().tableUuid()))
        .setTargetSnapshotId(
            outcome == null || mode == RefreshMode.SKIPPED ? null : outcome.target().snapshotId())
        .setSource(tableRef(source, outcome == null ? null : outcome.source().tableUuid()))
        .setSourceSnapshotId(sourceSnapshot)
        .setMode(mode)
        .setReason(outcome == null ? null : outcome.reason())
        .setDirtyRanges(ranges)
        .setNullBucket(nullBucket)
        .setRowsWritten(outcome == null ? 0 : outcome.work().rowsWritten())
        .setRowsRemoved(outcome == null ? 0 : outcome.work().rowsRemoved())
        .setFilesAdded(outcome == null ? 0 : outcome.work().filesAdded())
        .setFilesRemoved(outcome == null ? 0 : outcome.work().filesRemoved())
        .setRowsRead(outcome == null ? 0 : outcome.work().rowsRead())
        .setBytesRead(outcome == null ? 0 : outcome.work().bytesRead())
        .setStartTime(Instant.ofEpochMilli(refresh == null ? now : refresh.startedAt()))
        .setFinishTime(Instant.ofEpochMilli(now))
        .setLagMs(lag)
        .setError(error)
        .setCompaction(outcome == null ? null : compaction(outcome.compaction()))
        .setStalenessMs(staleness)
        .setRequests(outcome == null ? null : requests(outcome.requests()))
        .setStoreBytesRead(outcome == null ? null : outcome.requests().bytesRead())
        .setStoreBytesWritten(outcome == null ? null : outcome.requests().bytesWritten())
        .setScope(scope(refresh, outcome))
        .setDimensions(
            outcome == null || mode == RefreshMode.SKIPPED
                ? null
                : dimensions(outcome.dimensions()))
        .build();
  }

  /** Each dimension a refresh joined, at the snapshot it read. */
  private static List<DimensionSnapshot> dimensions(List<RefreshOutcome.Dimension> read) {
    List<DimensionSnapshot> dimensions = new ArrayList<>();
    for (RefreshOutcome.Dimension dimension : read) {
      SourceSnapshot snapshot = dimension.snapshot();
      dimensions.add(
          DimensionSnapshot.newBuilder()
              .setTable(tableRef(dimension.table(), snapshot == null ? null : snapshot.tableUuid()))
              .setSnapshotId(snapshot == null ? null : snapshot.snapshotId())
              .setCommittedAt(
                  snapshot == null || snapshot.committedAt() <= 0
                      ? null
                      : Instant.ofEpochMilli(snapshot.committedAt()))
              .build());
    }
    return dimensions;
  }

  private static List<ObjectStoreRequests> requests(RequestCounts counts) {
    List<ObjectStoreRequests> requests = new ArrayList<>();
    for (RequestCounts.Entry entry : counts.entries()) {
      requests.add(
          ObjectStoreRequests.newBuilder()
              .setStage(entry.stage().label())
              .setKind(entry.kind().label())
              .setCount(entry.count())
              .build());
    }
    return requests;
  }

  private static TargetCompaction compaction(RefreshOutcome.Compaction done) {
    return done == null
        ? null
        : TargetCompaction.newBuilder()
            .setTargetSnapshotId(done.targetSnapshotId())
            .setPartitions(done.partitions())
            .setDataFilesRewritten(done.dataFilesRewritten())
            .setDeleteFilesRemoved(done.deleteFilesRemoved())
            .setFilesAdded(done.filesAdded())
            .setBytesRewritten(done.bytesRewritten())
            .setBytesWritten(done.bytesWritten())
            .setDurationMs(done.durationMs())
            .build();
  }

  private static Instant micros(long epochMicros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(epochMicros, 1_000_000L), Math.floorMod(epochMicros, 1_000_000L) * 1_000L);
  }
}
