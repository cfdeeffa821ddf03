package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.Digests;
import io.floe.topology.view.SourceColumns;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * The chunks of a refresh (DESIGN §5): bucket-aligned parts of the dirty buckets, each recomputed
 * and committed on its own, so that the memory of a refresh is bounded by the groups of one chunk.
 *
 * <p>A chunk holds about {@code chunkRows} source rows by the manifest record counts of the files
 * ({@link DataExtent}; a file's rows are spread evenly over its buckets, and a cut inside a file
 * falls on a bucket boundary) and, when a view sets {@code chunk_buckets}, at most that many
 * buckets that hold data. Chunks are cut only where data is, so a lone outlier in year 1 or 9999
 * adds one bucket to a chunk, not the thousands of years in between.
 *
 * <p>Every dirty bucket is in exactly one chunk. For a full refresh the chunks partition the whole
 * value range: the first reaches down to {@code Long.MIN_VALUE}, the last up to {@code
 * Long.MAX_VALUE} and each gap between data belongs to the chunk before it, so that target rows of
 * buckets the source no longer holds are removed by some chunk; the null bucket rides in the last
 * chunk (or in its own, after it, when it would overfill the last). Buckets without data never make
 * a chunk of their own.
 *
 * <p>The plan is a pure function of its inputs (the extent of one pinned snapshot is fixed), so a
 * refresh resumed after a crash cuts the same chunks; {@link #fingerprint} says whether a recorded
 * plan is still this one.
 *
 * @param chunks the chunks in commit order; never empty
 * @param fingerprint a stable digest of the chunk boundaries and the settings that cut them
 */
record ChunkPlan(List<Chunk> chunks, String fingerprint) {

  /**
   * Source rows per chunk by default. Memory is bounded by the groups of one chunk, and at worst
   * every row is a group of its own: at a few hundred bytes per group (key, accumulators, the
   * output row) two million fit a 512 MiB heap with room for the reader and writer. Views that
   * aggregate many rows per group, the usual kind, use a fraction of that; a first run over days of
   * trades is one commit.
   */
  static final long DEFAULT_CHUNK_ROWS = 2_000_000L;

  private static final BucketRange EVERYTHING = new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE);

  /**
   * How far over {@code chunkRows} a chunk may grow to take in all that is left, so that no sliver
   * of a chunk (a rounding remainder, a few null rows) costs a commit of its own.
   */
  private static final double TAIL_SLACK = 1.1;

  /**
   * One chunk.
   *
   * @param ranges the bucket ranges to recompute (and whose target rows to replace)
   * @param nullBucket whether the chunk includes the null bucket
   * @param buckets the buckets of the chunk that count as its work, for progress reports: those
   *     holding data in a full refresh, the dirty ones in an incremental refresh
   * @param rows the source rows the chunk is estimated to read
   */
  record Chunk(BucketRangeSet ranges, boolean nullBucket, long buckets, long rows) {}

  ChunkPlan {
    chunks = List.copyOf(chunks);
    if (chunks.isEmpty()) {
      throw new IllegalArgumentException("A chunk plan has at least one chunk");
    }
  }

  /**
   * The fingerprint a chunked refresh records in {@code floe.progress} ({@link RefreshProgress}):
   * this plan's, and how its chunks are computed ({@code mode}, on the delta path the bookmark the
   * appended rows fold onto, and the source columns they read), so that a resumed refresh continues
   * only the very same work: chunks computed before a schema change are not resumed after it.
   */
  String fingerprint(RefreshOutcome.Mode mode, Long deltaBase, SourceColumns reads) {
    return fingerprint(mode, deltaBase, reads, DimensionStates.NONE);
  }

  /**
   * The fingerprint of this plan run in {@code mode} reading {@code reads} of the fact and the
   * dimensions at {@code dimensions}: chunks committed under other dimension states are not resumed
   * (a target never mixes two versions of a dimension).
   */
  String fingerprint(
      RefreshOutcome.Mode mode, Long deltaBase, SourceColumns reads, DimensionStates dimensions) {
    String read =
        dimensions.isEmpty() ? reads.format() : reads.format() + "|" + dimensions.format();
    return Digests.sha256Prefix(fingerprint + "|" + mode.label() + "|" + deltaBase + "|" + read, 8);
  }

  /** The buckets of all chunks. */
  long buckets() {
    return chunks.stream().mapToLong(Chunk::buckets).sum();
  }

  /**
   * The plan of a refresh.
   *
   * @param dirty the buckets to recompute; everything for a full refresh
   * @param bucketing the view's buckets
   * @param extent the source rows, from the files of the pinned snapshot that may hold dirty rows
   * @param chunkRows about how many source rows a chunk may hold (at least one bucket each)
   * @param chunkBuckets the most buckets holding data that a chunk may hold, if capped
   */
  static ChunkPlan of(
      DirtyBuckets dirty,
      Bucketing bucketing,
      DataExtent extent,
      long chunkRows,
      OptionalInt chunkBuckets) {
    Limits limits = new Limits(chunkRows, chunkBuckets);
    List<Chunk> chunks = new Cutter(dirty, bucketing, extent, limits).cut();
    return new ChunkPlan(chunks, fingerprint(dirty, bucketing, limits, chunks));
  }

  /**
   * How large a chunk may grow.
   *
   * @param rows about how many source rows a chunk may hold (at least one bucket each)
   * @param buckets the most buckets holding data that a chunk may hold, if capped
   */
  private record Limits(long rows, OptionalInt buckets) {
    Limits {
      if (rows < 1) {
        throw new IllegalArgumentException("Chunks must hold at least one row, not " + rows);
      }
      if (buckets.isPresent() && buckets.getAsInt() < 1) {
        throw new IllegalArgumentException(
            "Chunks must hold at least one bucket, not " + buckets.getAsInt());
      }
    }
  }

  /** A run of buckets holding data, with its estimated rows per bucket. */
  private record Piece(long start, long end, double rowsPerBucket) {}

  /** The greedy cut: one pass over the pieces of data in bucket order. */
  private static final class Cutter {
    private final DirtyBuckets dirty;
    private final Bucketing bucketing;
    private final DataExtent extent;
    private final Limits limits;
    private final BucketRangeSet universe;
    private final List<Chunk> chunks = new ArrayList<>();

    // The chunk being filled: it covers the universe from `cut` on.
    private long cut = Long.MIN_VALUE;
    private long buckets;
    private double rows;
    private boolean filled;
    // Rows not yet in a chunk, the null bucket's included.
    private double rowsLeft;

    Cutter(DirtyBuckets dirty, Bucketing bucketing, DataExtent extent, Limits limits) {
      this.dirty = dirty;
      this.bucketing = bucketing;
      this.extent = extent;
      this.limits = limits;
      this.universe = dirty.full() ? BucketRangeSet.of(EVERYTHING) : dirty.ranges();
    }

    List<Chunk> cut() {
      boolean nullBucket = dirty.full() || dirty.nullBucket();
      if (!extent.isKnown()) {
        // Without statistics the rows could be anywhere: one chunk covers everything.
        return List.of(new Chunk(universe, nullBucket, dirtyBuckets(universe), 0));
      }
      List<Piece> pieces = pieces();
      long nullRows = nullBucket ? extent.nullRows() : 0;
      rowsLeft = nullRows;
      for (Piece piece : pieces) {
        rowsLeft += bucketing.countBuckets(piece.start(), piece.end()) * piece.rowsPerBucket();
      }
      for (Piece piece : pieces) {
        take(piece);
      }
      boolean nullsApart =
          buckets > 0 && nullRows > 0 && rows + nullRows > limits.rows() * TAIL_SLACK;
      BucketRangeSet last = cover(Long.MAX_VALUE);
      if (nullsApart) {
        chunks.add(chunk(last, false));
        chunks.add(new Chunk(BucketRangeSet.empty(), true, 0, nullRows));
      } else {
        rows += nullRows;
        chunks.add(chunk(last, nullBucket));
      }
      return chunks;
    }

    private void take(Piece piece) {
      long start = piece.start();
      while (start < piece.end()) {
        if (filled) {
          // The gap up to this data belongs to the chunk that is full.
          chunks.add(chunk(cover(start), false));
          cut = start;
          buckets = 0;
          rows = 0;
          filled = false;
        }
        long available = bucketing.countBuckets(start, piece.end());
        long taken = available;
        if (limits.buckets().isPresent()) {
          taken = Math.min(taken, limits.buckets().getAsInt() - buckets);
        }
        boolean takesTheRest = rows + rowsLeft <= limits.rows() * TAIL_SLACK;
        if (piece.rowsPerBucket() > 0 && !takesTheRest) {
          double fit = Math.floor((limits.rows() - rows) / piece.rowsPerBucket());
          taken = (long) Math.min(taken, Math.max(fit, 0));
        }
        if (taken <= 0 && buckets == 0) {
          // One bucket holding more rows than a chunk should: it cannot be split.
          taken = 1;
        }
        if (taken <= 0) {
          filled = true;
          continue;
        }
        long end = taken == available ? piece.end() : bucketing.advance(start, taken);
        if (end <= start || end > piece.end()) {
          throw new IllegalStateException(
              "Cannot advance "
                  + taken
                  + " buckets from "
                  + start
                  + " within ["
                  + piece.start()
                  + ", "
                  + piece.end()
                  + ") by "
                  + bucketing);
        }
        buckets += taken;
        rows += taken * piece.rowsPerBucket();
        rowsLeft -= taken * piece.rowsPerBucket();
        start = end;
        boolean capped = limits.buckets().isPresent() && buckets >= limits.buckets().getAsInt();
        filled = capped || (rows >= limits.rows() && !takesTheRest);
      }
    }

    /** The universe from the current cut up to {@code end}. */
    private BucketRangeSet cover(long end) {
      return universe.intersect(new BucketRange(cut, end));
    }

    private Chunk chunk(BucketRangeSet ranges, boolean nullBucket) {
      long work = dirty.full() ? buckets : dirtyBuckets(ranges);
      return new Chunk(ranges, nullBucket, work, Math.round(rows));
    }

    private long dirtyBuckets(BucketRangeSet ranges) {
      if (dirty.full()) {
        return 0;
      }
      long count = 0;
      for (BucketRange range : ranges.ranges()) {
        count += bucketing.countBuckets(range.start(), range.end());
      }
      return count;
    }

    /**
     * The runs of buckets that hold data, inside the universe, with rows per bucket: each file's
     * rows are spread evenly over its buckets, and overlapping files add up.
     */
    private List<Piece> pieces() {
      // Sorted, so that the floating-point sums run in one order whatever order files came in.
      List<DataExtent.FileRange> files = new ArrayList<>(extent.files());
      files.sort(
          Comparator.comparing(DataExtent.FileRange::range)
              .thenComparingLong(DataExtent.FileRange::rows));
      TreeMap<Long, Double> density = new TreeMap<>();
      TreeMap<Long, Integer> coverage = new TreeMap<>();
      for (DataExtent.FileRange file : files) {
        if (file.rows() == 0) {
          continue;
        }
        BucketRange range = file.range();
        double perBucket =
            file.rows() / (double) bucketing.countBuckets(range.start(), range.end());
        density.merge(range.start(), perBucket, Double::sum);
        density.merge(range.end(), -perBucket, Double::sum);
        coverage.merge(range.start(), 1, Integer::sum);
        coverage.merge(range.end(), -1, Integer::sum);
      }
      List<Piece> pieces = new ArrayList<>();
      double running = 0;
      int covering = 0;
      Long previous = null;
      for (Map.Entry<Long, Integer> boundary : coverage.entrySet()) {
        long at = boundary.getKey();
        if (previous != null && covering > 0) {
          addInsideUniverse(pieces, previous, at, Math.max(running, 0));
        }
        covering += boundary.getValue();
        // Reset at every gap so that rounding never leaks from one run of data into the next.
        running = covering == 0 ? 0 : running + density.get(at);
        previous = at;
      }
      return pieces;
    }

    private void addInsideUniverse(List<Piece> pieces, long start, long end, double perBucket) {
      for (BucketRange inside : universe.intersect(new BucketRange(start, end)).ranges()) {
        pieces.add(new Piece(inside.start(), inside.end(), perBucket));
      }
    }
  }

  private static String fingerprint(
      DirtyBuckets dirty, Bucketing bucketing, Limits limits, List<Chunk> chunks) {
    StringBuilder plan = new StringBuilder("floe-chunk-plan/1\n");
    plan.append(bucketing).append('\n');
    plan.append(dirty.full() ? "full" : "incremental").append('\n');
    plan.append("chunk-rows=").append(limits.rows()).append('\n');
    plan.append("chunk-buckets=")
        .append(
            limits.buckets().isPresent() ? Integer.toString(limits.buckets().getAsInt()) : "none")
        .append('\n');
    for (Chunk chunk : chunks) {
      plan.append(chunk.ranges()).append(chunk.nullBucket() ? " null" : "").append('\n');
    }
    return Digests.sha256Prefix(plan.toString(), 8);
  }
}
