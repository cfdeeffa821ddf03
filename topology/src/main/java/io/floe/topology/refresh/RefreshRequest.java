package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.TimeRange;
import io.floe.topology.view.CompiledView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One refresh of a view: bring its target to the source snapshot its id names (DESIGN §3.5), pinned
 * before the refresh starts so that every run of it, a re-run after a crash included, reads exactly
 * that snapshot under exactly that id.
 *
 * @param view the definition in force when the refresh was started
 * @param id the deterministic id, naming the source snapshot
 * @param sourceTableUuid the UUID of the source table the snapshot was pinned in, or null when
 *     unknown; a table recreated since is not the one pinned
 * @param watermark the source snapshot Floe believes the target reflects, or null before the first
 *     refresh
 * @param scope what is known of the buckets to recompute
 * @param originCommittedAt the commit time (epoch millis) of the oldest root-source commit the
 *     refresh brings into the target, which its commits record ({@link
 *     FloeProperties#SOURCE_COMMITTED_AT}) for the views reading the target; null when unknown or
 *     when it brings in none
 */
public record RefreshRequest(
    CompiledView view,
    RefreshId id,
    String sourceTableUuid,
    Long watermark,
    Scope scope,
    Long originCommittedAt) {

  public RefreshRequest {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(scope, "scope");
  }

  /** A refresh whose origin is not known: its commits record none. */
  public RefreshRequest(
      CompiledView view, RefreshId id, String sourceTableUuid, Long watermark, Scope scope) {
    this(view, id, sourceTableUuid, watermark, scope, null);
  }

  /** What a refresh knows of the buckets it must recompute. */
  public sealed interface Scope permits Changes, CatchUp, Ranged, Forced {}

  /**
   * Every change between the watermark and the pinned snapshot was detected: {@code dirty} covers
   * them all (a full set: detection could not be precise, and the bookmark may narrow it).
   */
  public record Changes(DirtyBuckets dirty) implements Scope {}

  /**
   * The pinned snapshot is the source's current one, named by no change: the changes since the
   * target's bookmark are detected again. {@code known} are buckets known to be dirty besides them;
   * a full set only says that nothing is known.
   */
  public record CatchUp(DirtyBuckets known) implements Scope {}

  /**
   * A catch-up ({@link CatchUp}) that also recomputes every bucket overlapping {@code ranges},
   * which a user asked for even where no change is known (a repair after an outside write to the
   * target): it runs even when the target already reflects the pinned snapshot.
   */
  public record Ranged(DirtyBuckets known, List<TimeRange> ranges) implements Scope {

    public Ranged {
      ranges = List.copyOf(ranges);
      if (ranges.isEmpty()) {
        throw new IllegalArgumentException("a range refresh needs a range");
      }
    }

    /** The buckets of {@code bucketing} the ranges overlap, with those known to be dirty. */
    public DirtyBuckets buckets(Bucketing bucketing) {
      List<BucketRange> covered = new ArrayList<>();
      for (TimeRange range : ranges) {
        covered.add(bucketing.covering(range));
      }
      DirtyBuckets requested = DirtyBuckets.of(BucketRangeSet.of(covered), false);
      return known.full() ? requested : known.union(requested);
    }
  }

  /** A user asked for every bucket to be recomputed. */
  public record Forced(String reason) implements Scope {}

  /** A refresh of the detected changes between {@code watermark} and {@code sourceSnapshotId}. */
  public static RefreshRequest of(
      CompiledView view, long sourceSnapshotId, Long watermark, DirtyBuckets dirty) {
    return new RefreshRequest(
        view,
        RefreshId.of(view.name(), view.version(), sourceSnapshotId),
        null,
        watermark,
        new Changes(dirty));
  }

  /** This refresh under the id {@code other}, of the same source snapshot. */
  RefreshRequest withId(RefreshId other) {
    if (other.sourceSnapshotId() != id.sourceSnapshotId()) {
      throw new IllegalArgumentException(
          other + " is not a refresh of the snapshot " + id + " reads");
    }
    return new RefreshRequest(view, other, sourceTableUuid, watermark, scope, originCommittedAt);
  }

  /** The source snapshot the refresh reads. */
  public long sourceSnapshotId() {
    return id.sourceSnapshotId();
  }
}
