package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.bucket.Granularity;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts the dirty buckets of a refresh into bucket-aligned chunks of at most a given number of
 * buckets, each recomputed and committed on its own, so that the memory of a refresh is bounded by
 * the groups of one chunk (DESIGN §5). The cut depends only on its inputs, so a refresh resumed
 * after a crash cuts the same chunks.
 */
final class Chunks {

  /**
   * One chunk: the ranges to recompute, whether it includes the null bucket, and how many buckets
   * of the source's extent it covers (for progress reports).
   */
  record Chunk(BucketRangeSet ranges, boolean nullBucket, int buckets) {}

  /** The values a full refresh must cover: the non-null bucket-column extent, if known. */
  record Extent(long min, long max) {}

  private Chunks() {}

  /** Default buckets per chunk: a day of minutes, a week of hours, a month of days, ... */
  static int defaultSize(Granularity granularity) {
    return switch (granularity) {
      case MINUTE -> 1440;
      case HOUR -> 168;
      case DAY -> 31;
      case WEEK -> 13;
      case MONTH -> 12;
      case QUARTER -> 8;
      case YEAR -> 4;
    };
  }

  /**
   * The chunks of a refresh.
   *
   * @param extent for a full refresh, the extent of non-null bucket values in the source, or null
   *     when the source holds none
   */
  static List<Chunk> plan(DirtyBuckets dirty, Bucketing bucketing, int size, Extent extent) {
    return dirty.full() ? full(bucketing, size, extent) : incremental(dirty, bucketing, size);
  }

  /**
   * Covers every possible value: the first chunk reaches down to the smallest long and the last up
   * to the largest, so that target rows of buckets the source no longer has are removed too.
   */
  private static List<Chunk> full(Bucketing bucketing, int size, Extent extent) {
    List<Chunk> chunks = new ArrayList<>();
    if (extent == null) {
      chunks.add(new Chunk(all(), true, 0));
      return chunks;
    }
    long start = bucketing.floor(extent.min());
    long end = bucketing.next(bucketing.floor(extent.max()));
    long chunkStart = Long.MIN_VALUE;
    long cursor = start;
    while (true) {
      long chunkEnd = advance(bucketing, cursor, size, end);
      int buckets = count(bucketing, cursor, chunkEnd);
      if (chunkEnd >= end) {
        chunks.add(
            new Chunk(
                BucketRangeSet.of(new BucketRange(chunkStart, Long.MAX_VALUE)), true, buckets));
        return chunks;
      }
      chunks.add(
          new Chunk(BucketRangeSet.of(new BucketRange(chunkStart, chunkEnd)), false, buckets));
      chunkStart = chunkEnd;
      cursor = chunkEnd;
    }
  }

  private static List<Chunk> incremental(DirtyBuckets dirty, Bucketing bucketing, int size) {
    List<Chunk> chunks = new ArrayList<>();
    List<BucketRange> current = new ArrayList<>();
    int buckets = 0;
    for (BucketRange range : dirty.ranges().ranges()) {
      long cursor = range.start();
      while (cursor < range.end()) {
        long chunkEnd = advance(bucketing, cursor, size - buckets, range.end());
        buckets += count(bucketing, cursor, chunkEnd);
        current.add(new BucketRange(cursor, chunkEnd));
        cursor = chunkEnd;
        if (buckets >= size) {
          chunks.add(new Chunk(BucketRangeSet.of(current), false, buckets));
          current = new ArrayList<>();
          buckets = 0;
        }
      }
    }
    if (!current.isEmpty() || dirty.nullBucket() || chunks.isEmpty()) {
      chunks.add(new Chunk(BucketRangeSet.of(current), dirty.nullBucket(), buckets));
    }
    return chunks;
  }

  /**
   * A fingerprint of a chunk plan: the chunks' ranges and how they are computed. A refresh resumed
   * after a crash continues its chunks only if it cuts the same plan (DESIGN §3.6).
   */
  static String fingerprint(List<Chunk> chunks, RefreshOutcome.Mode mode, Long deltaBase) {
    StringBuilder text = new StringBuilder(mode.label()).append('|').append(deltaBase);
    for (Chunk chunk : chunks) {
      text.append('|').append(chunk.ranges()).append(chunk.nullBucket() ? "+null" : "");
    }
    try {
      byte[] digest =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(digest, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JRE", e);
    }
  }

  /** The start of the bucket {@code n} buckets after {@code from}, but no further than limit. */
  private static long advance(Bucketing bucketing, long from, int n, long limit) {
    long cursor = from;
    for (int i = 0; i < n && cursor < limit; i++) {
      cursor = bucketing.next(cursor);
    }
    return Math.min(cursor, limit);
  }

  private static int count(Bucketing bucketing, long from, long to) {
    int n = 0;
    for (long cursor = from; cursor < to; cursor = bucketing.next(cursor)) {
      n++;
    }
    return n;
  }

  private static BucketRangeSet all() {
    return BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE));
  }
}
