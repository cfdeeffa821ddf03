package io.floe.topology.bucket;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * An immutable union of {@link BucketRange}s, kept as sorted, disjoint, non-adjacent ranges: adding
 * a range merges it with every range it overlaps or touches. This is the shape of a view's dirty
 * set (DESIGN §3.2): a late file and a fresh file dirty two small ranges, not everything between
 * them.
 */
public final class BucketRangeSet {

  private static final BucketRangeSet EMPTY = new BucketRangeSet(List.of());

  private final List<BucketRange> ranges;

  private BucketRangeSet(List<BucketRange> normalized) {
    this.ranges = normalized;
  }

  /** The empty set. */
  public static BucketRangeSet empty() {
    return EMPTY;
  }

  /** The union of the given ranges. */
  public static BucketRangeSet of(BucketRange... ranges) {
    return of(Arrays.asList(ranges));
  }

  /** The union of the given ranges, in any order, overlapping or not. */
  public static BucketRangeSet of(Collection<BucketRange> ranges) {
    if (ranges.isEmpty()) {
      return EMPTY;
    }
    List<BucketRange> sorted = new ArrayList<>(ranges);
    Collections.sort(sorted);
    List<BucketRange> merged = new ArrayList<>(sorted.size());
    BucketRange current = sorted.get(0);
    for (int i = 1; i < sorted.size(); i++) {
      BucketRange next = sorted.get(i);
      if (next.start() <= current.end()) {
        current = new BucketRange(current.start(), Math.max(current.end(), next.end()));
      } else {
        merged.add(current);
        current = next;
      }
    }
    merged.add(current);
    return new BucketRangeSet(List.copyOf(merged));
  }

  /** The sorted, disjoint, non-adjacent ranges of this set. */
  public List<BucketRange> ranges() {
    return ranges;
  }

  public boolean isEmpty() {
    return ranges.isEmpty();
  }

  /** This set with {@code range} added. */
  public BucketRangeSet add(BucketRange range) {
    List<BucketRange> all = new ArrayList<>(ranges.size() + 1);
    all.addAll(ranges);
    all.add(range);
    return of(all);
  }

  /** The union of this set and {@code other}. */
  public BucketRangeSet union(BucketRangeSet other) {
    if (other.isEmpty()) {
      return this;
    }
    if (isEmpty()) {
      return other;
    }
    List<BucketRange> all = new ArrayList<>(ranges.size() + other.ranges.size());
    all.addAll(ranges);
    all.addAll(other.ranges);
    return of(all);
  }

  /** The part of this set that lies inside {@code window}. */
  public BucketRangeSet intersect(BucketRange window) {
    List<BucketRange> inside = new ArrayList<>();
    for (BucketRange r : ranges) {
      long start = Math.max(r.start(), window.start());
      long end = Math.min(r.end(), window.end());
      if (start < end) {
        inside.add(new BucketRange(start, end));
      }
    }
    return new BucketRangeSet(List.copyOf(inside));
  }

  /** The part of this set that lies outside {@code removed}. */
  public BucketRangeSet minus(BucketRange removed) {
    List<BucketRange> outside = new ArrayList<>(ranges.size() + 1);
    for (BucketRange r : ranges) {
      if (!r.overlaps(removed)) {
        outside.add(r);
        continue;
      }
      if (r.start() < removed.start()) {
        outside.add(new BucketRange(r.start(), removed.start()));
      }
      if (removed.end() < r.end()) {
        outside.add(new BucketRange(removed.end(), r.end()));
      }
    }
    return new BucketRangeSet(List.copyOf(outside));
  }

  /** True if some range of this set contains {@code value}. */
  public boolean contains(long value) {
    int low = 0;
    int high = ranges.size() - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      BucketRange r = ranges.get(mid);
      if (value < r.start()) {
        high = mid - 1;
      } else if (value >= r.end() && !r.isOpenEnded()) {
        low = mid + 1;
      } else {
        return true;
      }
    }
    return false;
  }

  /** True if some range of this set shares a value with {@code range}. */
  public boolean overlaps(BucketRange range) {
    for (BucketRange r : ranges) {
      if (r.overlaps(range)) {
        return true;
      }
      if (r.start() >= range.end()) {
        return false;
      }
    }
    return false;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BucketRangeSet other && ranges.equals(other.ranges);
  }

  @Override
  public int hashCode() {
    return ranges.hashCode();
  }

  @Override
  public String toString() {
    return ranges.toString();
  }
}
