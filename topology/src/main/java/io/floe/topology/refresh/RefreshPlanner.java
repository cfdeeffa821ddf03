package io.floe.topology.refresh;

import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.Digests;
import io.floe.topology.view.SourceColumns;
import java.util.List;
import java.util.Objects;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Decides what one refresh must read and why (DESIGN §3): from the request, the pinned source
 * snapshot and the target's bookmark, whether the change is already applied, whether the target is
 * already past it, or which buckets to recompute and how. A bookmark whose view version, source
 * table or source columns ({@link SourceColumns}: field ids and types) differ from the refresh's
 * recomputes every bucket. Pure apart from reading the source's metadata (snapshot ancestry, and
 * the manifests of snapshots it must detect again).
 */
final class RefreshPlanner {

  /**
   * Beyond this many snapshots since the bookmark, detecting them again costs more than it saves.
   */
  static final int MAX_CATCH_UP_SNAPSHOTS = 1000;

  private RefreshPlanner() {}

  /** What a refresh will do. */
  sealed interface Plan permits AlreadyApplied, TargetAhead, Superseded, StalePin, Recompute {}

  /** The target already holds this refresh: an earlier run committed it. */
  record AlreadyApplied() implements Plan {}

  /** The target is past this refresh; nothing to do. */
  record TargetAhead(String reason) implements Plan {}

  /**
   * Another definition of the view, at a larger revision, wrote the target ({@link
   * CommitGuard#isSupersededBy}): harmless for a refresh of a definition no longer in force, a
   * conflict to report for the one in force.
   */
  record Superseded(String reason) implements Plan {}

  /** The pinned snapshot is no longer one the source's main branch holds; nothing to do. */
  record StalePin(String reason) implements Plan {}

  /**
   * Recompute {@code dirty} ({@link RefreshOutcome.Mode#FULL} or {@link
   * RefreshOutcome.Mode#INCREMENTAL}), or fold the rows appended after {@code deltaBase} into the
   * target rows of their groups ({@link RefreshOutcome.Mode#DELTA}).
   *
   * @param reason why the refresh is full, or null
   * @param deltaBase the bookmark the delta path folds onto; null unless the mode is delta
   */
  record Recompute(RefreshOutcome.Mode mode, DirtyBuckets dirty, String reason, Long deltaBase)
      implements Plan {

    static Recompute full(String reason) {
      return new Recompute(RefreshOutcome.Mode.FULL, DirtyBuckets.all(reason), reason, null);
    }
  }

  /**
   * Whether {@code pinned} may still be read: it exists, belongs to the table the request pinned it
   * in, and is on the source's main branch (the current snapshot or one of its ancestors).
   */
  static StalePin checkPin(RefreshRequest request, Table source, Snapshot pinned) {
    long pin = request.sourceSnapshotId();
    if (request.sourceTableUuid() != null
        && !request.sourceTableUuid().equals(source.uuid().toString())) {
      return new StalePin(
          "source table " + source.name() + " was dropped and recreated since snapshot " + pin);
    }
    if (pinned == null) {
      return new StalePin("source snapshot " + pin + " of " + source.name() + " has expired");
    }
    Snapshot current = source.currentSnapshot();
    if (current != null
        && current.snapshotId() != pin
        && !SnapshotUtil.isAncestorOf(source, current.snapshotId(), pin)) {
      return new StalePin(
          "source snapshot "
              + pin
              + " is no longer in the history of "
              + source.name()
              + " (rolled back to "
              + current.snapshotId()
              + ")");
    }
    return null;
  }

  /**
   * The plan of a refresh whose pin passed {@link #checkPin}.
   *
   * @param reads the identity of the source columns the refresh reads, in the schema it reads the
   *     pinned snapshot with
   * @param dimensions what the changes of the dimensions the refresh pinned since the bookmark's
   *     states dirty (DESIGN §3.10: the buckets whose fact rows carry a changed key, or every
   *     bucket where that cannot be bounded)
   * @param bucketing the view's bucket arithmetic, which turns a requested time range into buckets
   * @param decomposable whether the view can take the delta path
   * @param manifests where a catch-up over snapshots on a remote store reads their manifests ahead
   *     of detection's walk
   */
  static Plan plan(
      RefreshRequest request,
      Table source,
      Snapshot pinned,
      Bookmark bookmark,
      SourceColumns reads,
      DimensionChange dimensions,
      BucketedView buckets,
      Bucketing bucketing,
      boolean decomposable,
      ManifestWork manifests) {
    RefreshId id = request.id();
    long pin = pinned.snapshotId();
    CompiledView view = request.view();
    if (CommitGuard.isSupersededBy(bookmark, view.revision(), view.version())) {
      return new Superseded(
          CommitGuard.supersededReason(view.name(), bookmark, view.revision(), view.version()));
    }
    if (bookmark.isEmpty()) {
      if (bookmark.viewVersion() == null) {
        return Recompute.full("first refresh of the view");
      }
      // A change of the target's schema records the definition it shaped the target for, and no
      // rows yet: for a new definition, or for new output types after a source column's promotion
      // (the same columns read, another type).
      SourceColumns recorded = bookmark.parsedSourceColumns();
      String changed =
          recorded != null && recorded.namesTheSameColumnsAs(reads)
              ? reads.changesSince(recorded)
              : null;
      return Recompute.full(changed == null ? "view definition changed" : changed);
    }
    if (!request.view().version().equals(bookmark.viewVersion())) {
      return Recompute.full("view definition changed");
    }
    if (bookmark.sourceTableUuid() != null
        && !bookmark.sourceTableUuid().equals(source.uuid().toString())) {
      return Recompute.full("source table " + source.name() + " was dropped and recreated");
    }
    RefreshProgress progress = bookmark.parsedProgress();
    if (bookmark.progress() != null
        && (progress == null || !progress.lastCommitted().refresh().equals(id))) {
      // Chunks of another refresh hold rows of a snapshot this one may not reach.
      return Recompute.full(
          "a chunked refresh (" + bookmark.progress() + ") was left half applied");
    }
    long reflected = bookmark.sourceSnapshotId();
    if (source.snapshot(reflected) == null) {
      return Recompute.full(
          "the target reflects source snapshot " + reflected + ", which has expired");
    }
    Snapshot current = source.currentSnapshot();
    if (current != null
        && current.snapshotId() != reflected
        && !SnapshotUtil.isAncestorOf(source, current.snapshotId(), reflected)) {
      return Recompute.full(
          "the target reflects source snapshot "
              + reflected
              + ", which is no longer in the history of "
              + source.name()
              + " (rolled back)");
    }
    if (reflected != pin && SnapshotUtil.isAncestorOf(source, reflected, pin)) {
      return new TargetAhead("the target already reflects source snapshot " + reflected);
    }
    if (request.scope() instanceof RefreshRequest.Forced forced) {
      if (reflected == pin && progress == null && id.equals(bookmark.refreshId())) {
        return new AlreadyApplied();
      }
      return Recompute.full(forced.reason());
    }
    // Schema changes create no snapshot: even a target at the pinned snapshot may hold values of
    // columns the source no longer has. A target of an earlier release records no identity; its
    // next commit records one.
    String changed = sourceColumnsChange(bookmark, reads);
    if (changed != null) {
      return Recompute.full(changed);
    }
    // A dimension commit creates no fact snapshot either: the fact's bookmark alone cannot tell a
    // target that joined another version of a dimension.
    if (dimensions.dirty().full()) {
      return Recompute.full(dimensions.dirty().reason());
    }
    boolean ranged = request.scope() instanceof RefreshRequest.Ranged;
    if (reflected == pin
        && progress == null
        && !dimensions.moved()
        && (!ranged || id.equals(bookmark.refreshId()))) {
      return new AlreadyApplied();
    }
    DirtyBuckets dirty;
    if (reflected == pin) {
      // Resuming this refresh's chunks, or a range asked for at the snapshot the target reflects,
      // or a change of the dimensions: what it recomputes is what it planned.
      dirty = known(request.scope(), bucketing);
      if (dimensions.moved()) {
        // Nothing known of the fact besides: its buckets come from the dimensions' changed keys
        // (none when they touch no fact row: the commit then only records the dimensions' states).
        dirty = dirty.full() ? DirtyBuckets.none() : dirty;
      } else if (dirty.isEmpty() || dirty.full()) {
        dirty = Recompute.full("resuming a chunked refresh").dirty();
      }
    } else if (!SnapshotUtil.isAncestorOf(source, pin, reflected)) {
      return Recompute.full(
          "the target reflects source snapshot "
              + reflected
              + ", which is not an ancestor of snapshot "
              + pin);
    } else if (request.scope() instanceof RefreshRequest.Changes changes
        && !changes.dirty().full()
        && Objects.equals(request.watermark(), reflected)) {
      dirty = changes.dirty();
    } else {
      List<Long> between = SnapshotUtil.snapshotIdsBetween(source, reflected, pin);
      if (between.size() > MAX_CATCH_UP_SNAPSHOTS) {
        return Recompute.full(
            between.size() + " source snapshots since the target's bookmark " + reflected);
      }
      dirty = known(request.scope(), bucketing);
      dirty = dirty.full() ? DirtyBuckets.none() : dirty;
      dirty = dirty.union(detect(source, between, buckets, manifests));
    }
    dirty = dirty.union(dimensions.dirty());
    if (dirty.full()) {
      return new Recompute(RefreshOutcome.Mode.FULL, dirty, dirty.reason(), null);
    }
    // The delta path adds to the target's rows, which a range refresh is asked to replace; folding
    // appended fact rows in is exact only while no fact row carries a changed dimension key.
    if (decomposable
        && !ranged
        && progress == null
        && dimensions.dirty().isEmpty()
        && reflected != pin
        && appendsOnly(source, reflected, pinned)) {
      return new Recompute(RefreshOutcome.Mode.DELTA, dirty, null, reflected);
    }
    return new Recompute(RefreshOutcome.Mode.INCREMENTAL, dirty, null, null);
  }

  /** The buckets of {@code buckets} that the source's {@code snapshots} dirty, detected again. */
  static DirtyBuckets detect(
      Table source, List<Long> snapshots, BucketedView buckets, ManifestWork manifests) {
    DirtyBuckets dirty = DirtyBuckets.none();
    for (long snapshot : snapshots) {
      dirty =
          dirty.union(
              DirtyBucketDetector.detect(source, snapshot, List.of(buckets), manifests)
                  .get(buckets.view()));
    }
    return dirty;
  }

  private static DirtyBuckets known(RefreshRequest.Scope scope, Bucketing bucketing) {
    if (scope instanceof RefreshRequest.Ranged ranged) {
      return ranged.buckets(bucketing);
    }
    if (scope instanceof RefreshRequest.Changes changes) {
      return changes.dirty();
    }
    if (scope instanceof RefreshRequest.CatchUp catchUp) {
      return catchUp.known();
    }
    return DirtyBuckets.none();
  }

  /**
   * The delta path (DESIGN §5) is exact when every source snapshot since the bookmark only appended
   * rows (or compacted files, which changes no row) under the pinned snapshot's schema, and at
   * least one appended: the target rows of the dirty buckets plus the view over the appended rows
   * alone give the new target rows.
   */
  private static boolean appendsOnly(Table source, long reflected, Snapshot pinned) {
    boolean appended = false;
    for (long id : SnapshotUtil.snapshotIdsBetween(source, reflected, pinned.snapshotId())) {
      Snapshot between = source.snapshot(id);
      String operation = between == null ? null : between.operation();
      if (!DataOperations.APPEND.equals(operation) && !DataOperations.REPLACE.equals(operation)
          || !Objects.equals(between.schemaId(), pinned.schemaId())) {
        return false;
      }
      appended |= DataOperations.APPEND.equals(operation);
    }
    return appended;
  }

  /**
   * How the source columns the view reads differ from those the target was computed from, or null
   * when they do not or the target records none (a target of an earlier release; its next commit
   * records them).
   */
  private static String sourceColumnsChange(Bookmark bookmark, SourceColumns reads) {
    if (bookmark.sourceColumns() == null) {
      return null;
    }
    SourceColumns recorded = bookmark.parsedSourceColumns();
    if (recorded == null) {
      return "the source columns the target was computed from are unreadable ("
          + bookmark.sourceColumns()
          + ")";
    }
    return reads.changesSince(recorded);
  }

  /** Whether the dimensions a refresh pinned are other than those the target reflects. */
  private static boolean dimensionsDiffer(Bookmark bookmark, DimensionStates dimensions) {
    return !Objects.equals(bookmark.dimensionStates(), dimensions.format());
  }

  /**
   * The id of a refresh that reads the source columns {@code reads} and the dimensions {@code
   * dimensions} (see {@link #readId(RefreshId, Bookmark, SourceColumns)}): a dimension that changed
   * since the target's bookmark names a refresh of its own at the same fact snapshot, as a schema
   * change does.
   */
  static RefreshId readId(
      RefreshId requested, Bookmark bookmark, SourceColumns reads, DimensionStates dimensions) {
    if (dimensions.isEmpty() && bookmark.dimensionStates() == null) {
      return readId(requested, bookmark, reads);
    }
    if (bookmark.sourceSnapshotId() == null
        || bookmark.sourceSnapshotId() != requested.sourceSnapshotId()) {
      return requested;
    }
    RefreshId reread =
        requested.readingOtherColumns(
            Digests.sha256Prefix(reads.format() + "|" + dimensions.format(), 4));
    SourceColumns recorded = bookmark.parsedSourceColumns();
    boolean readOtherwise =
        bookmark.sourceColumns() != null && (recorded == null || !recorded.isSameAs(reads))
            || dimensionsDiffer(bookmark, dimensions);
    return readOtherwise || reread.equals(bookmark.refreshId()) ? reread : requested;
  }

  /**
   * The id of a refresh that reads the source columns {@code reads}, against the target's {@code
   * bookmark}: the requested one, or, when the target already reflects the refresh's snapshot but
   * read otherwise (a schema change or a name mapping set since, neither of which creates a
   * snapshot), one that names the columns read, so that the full refresh this causes at the same
   * snapshot is a refresh of its own (DESIGN §3.6). A run after a crash finds its own id recorded
   * and computes it again; every other refresh keeps the id it is requested under.
   */
  static RefreshId readId(RefreshId requested, Bookmark bookmark, SourceColumns reads) {
    if (bookmark.sourceSnapshotId() == null
        || bookmark.sourceSnapshotId() != requested.sourceSnapshotId()) {
      return requested;
    }
    RefreshId reread = requested.readingOtherColumns(reads.digest());
    SourceColumns recorded = bookmark.parsedSourceColumns();
    boolean readOtherwise =
        bookmark.sourceColumns() != null && (recorded == null || !recorded.isSameAs(reads));
    return readOtherwise || reread.equals(bookmark.refreshId()) ? reread : requested;
  }
}
