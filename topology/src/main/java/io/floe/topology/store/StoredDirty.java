package io.floe.topology.store;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link DirtyBuckets} as stored: ranges as {@code [start, end]} pairs of stored bucket-column
 * values.
 */
public record StoredDirty(List<long[]> ranges, boolean nullBucket, boolean full, String reason) {

  public static StoredDirty of(DirtyBuckets dirty) {
    List<long[]> ranges = new ArrayList<>();
    for (BucketRange range : dirty.ranges().ranges()) {
      ranges.add(new long[] {range.start(), range.end()});
    }
    return new StoredDirty(ranges, dirty.nullBucket(), dirty.full(), dirty.reason());
  }

  public DirtyBuckets toDirtyBuckets() {
    if (full) {
      return DirtyBuckets.all(reason);
    }
    List<BucketRange> list = new ArrayList<>();
    for (long[] range : ranges) {
      list.add(new BucketRange(range[0], range[1]));
    }
    return DirtyBuckets.of(BucketRangeSet.of(list), nullBucket);
  }
}
