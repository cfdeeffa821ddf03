package io.floe.topology.refresh.eval.scan;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.iceberg.io.IOUtil;
import org.apache.iceberg.io.RangeReadable;
import org.apache.parquet.bytes.ByteBufferAllocator;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.ParquetFileRange;

/**
 * Parquet's stream over an Iceberg one that reads the byte ranges Parquet asks for together in as
 * few requests as it can: on an object store each request costs tens of milliseconds before its
 * first byte, and Parquet's own reader reads each run of column chunks or pages of a row group, and
 * each column's index, with a request of its own (issue 21 counted about 30 per data file).
 *
 * <p>Two ways in. {@link #readVectored} serves Parquet's vectored reads ({@code
 * ParquetReadOptions#useHadoopVectoredIo}): the ranges of one row group, the column chunks it needs
 * or, with pages filtered by the column index, the pages. {@link #prefetch} reads ranges that
 * Parquet will then read a piece at a time, the column and offset indexes. Either way the ranges
 * are coalesced as Trino's and Hadoop's vectored reads do: ranges whose gap is at most {@value
 * #MAX_GAP} bytes merge, as long as the merged range stays within {@value #MAX_MERGED} bytes (a
 * range larger than that is read alone). Each merged range is one positioned read where the stream
 * is {@link RangeReadable} (S3's, GCS's, ADLS's are), else a seek and a read. Memory is what
 * Parquet asked for, one row group's needed columns, plus the gaps read through.
 */
final class RangedReads extends DelegatingSeekableInputStream {

  /** Ranges this close together are read as one, the gap read through. */
  static final int MAX_GAP = 1024 * 1024;

  /** Ranges merge while the merged range stays this long at most. */
  static final int MAX_MERGED = 8 * 1024 * 1024;

  private final Positioned source;

  RangedReads(org.apache.iceberg.io.SeekableInputStream stream) {
    this(new Positioned(stream));
  }

  private RangedReads(Positioned source) {
    super(source);
    this.source = source;
  }

  @Override
  public long getPos() {
    return source.pos;
  }

  @Override
  public void seek(long newPos) {
    source.pos = newPos;
  }

  @Override
  public boolean readVectoredAvailable(ByteBufferAllocator allocator) {
    return true;
  }

  @Override
  public void readVectored(List<ParquetFileRange> ranges, ByteBufferAllocator allocator)
      throws IOException {
    List<long[]> missing = new ArrayList<>();
    for (ParquetFileRange range : ranges) {
      if (source.holding(range.getOffset(), range.getLength()) == null) {
        missing.add(new long[] {range.getOffset(), range.getLength()});
      }
    }
    // Read for this call only: what was not prefetched is a row group too large to read ahead.
    List<Buffered> read = new ArrayList<>();
    for (long[] merged : coalesce(missing)) {
      read.add(source.buffered(merged[0], (int) merged[1]));
    }
    for (ParquetFileRange range : ranges) {
      Buffered holding = source.holding(range.getOffset(), range.getLength());
      if (holding == null) {
        holding = holding(read, range.getOffset(), range.getLength());
      }
      ByteBuffer bytes = allocator.allocate(range.getLength());
      bytes.put(holding.bytes, (int) (range.getOffset() - holding.start), range.getLength());
      bytes.flip();
      range.setDataReadFuture(CompletableFuture.completedFuture(bytes));
    }
  }

  /** Whether every range ({@code {offset, length}}) was prefetched. */
  boolean holds(List<long[]> ranges) {
    for (long[] range : ranges) {
      if (source.holding(range[0], range[1]) == null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads the ranges ({@code {offset, length}}) now, coalesced, so that Parquet's reads within them
   * cost no request. Ranges prefetched before that end before these start are dropped: a file's row
   * groups are read in order, and its indexes, after them, stay.
   */
  void prefetch(List<long[]> ranges) throws IOException {
    if (ranges.isEmpty()) {
      return;
    }
    long start = Long.MAX_VALUE;
    for (long[] range : ranges) {
      start = Math.min(start, range[0]);
    }
    List<Buffered> kept = new ArrayList<>();
    for (Buffered buffer : source.buffers) {
      if (buffer.start + buffer.bytes.length > start) {
        kept.add(buffer);
      }
    }
    for (long[] merged : coalesce(ranges)) {
      kept.add(source.buffered(merged[0], (int) merged[1]));
    }
    source.buffers = kept;
  }

  /** The ranges sorted and merged across gaps of at most {@value #MAX_GAP} bytes. */
  static List<long[]> coalesce(List<long[]> ranges) {
    List<long[]> sorted = new ArrayList<>(ranges);
    sorted.sort(Comparator.comparingLong(range -> range[0]));
    List<long[]> merged = new ArrayList<>();
    long[] current = null;
    for (long[] range : sorted) {
      long end = range[0] + range[1];
      if (current != null
          && range[0] - (current[0] + current[1]) <= MAX_GAP
          && Math.max(end, current[0] + current[1]) - current[0] <= MAX_MERGED) {
        current[1] = Math.max(end, current[0] + current[1]) - current[0];
      } else {
        current = new long[] {range[0], range[1]};
        merged.add(current);
      }
    }
    return merged;
  }

  private static Buffered holding(List<Buffered> buffers, long offset, int length) {
    for (Buffered buffer : buffers) {
      if (buffer.holds(offset, length)) {
        return buffer;
      }
    }
    throw new IllegalStateException("No range read holds " + offset + "+" + length);
  }

  /** Bytes of the file from {@code start}. */
  private record Buffered(long start, byte[] bytes) {
    boolean holds(long offset, long length) {
      return offset >= start && offset + length <= start + bytes.length;
    }
  }

  /**
   * The Iceberg stream at a position of its own, serving reads from prefetched ranges where they
   * hold the position: Parquet's reads go through {@link DelegatingSeekableInputStream} to here.
   */
  private static final class Positioned extends InputStream {
    private final org.apache.iceberg.io.SeekableInputStream stream;
    private long pos;
    private List<Buffered> buffers = List.of();

    Positioned(org.apache.iceberg.io.SeekableInputStream stream) {
      this.stream = stream;
    }

    /** One request for {@code [start, start + length)}. */
    Buffered buffered(long start, int length) throws IOException {
      byte[] bytes = new byte[length];
      if (stream instanceof RangeReadable ranges) {
        ranges.readFully(start, bytes, 0, length);
      } else {
        stream.seek(start);
        IOUtil.readFully(stream, bytes, 0, length);
      }
      return new Buffered(start, bytes);
    }

    /** The prefetched range holding {@code [offset, offset + length)}, or null. */
    Buffered holding(long offset, long length) {
      for (Buffered buffer : buffers) {
        if (buffer.holds(offset, length)) {
          return buffer;
        }
      }
      return null;
    }

    @Override
    public int read() throws IOException {
      Buffered buffer = holding(pos, 1);
      if (buffer != null) {
        return buffer.bytes[(int) (pos++ - buffer.start)] & 0xFF;
      }
      position();
      int b = stream.read();
      if (b >= 0) {
        pos++;
      }
      return b;
    }

    @Override
    public int read(byte[] bytes, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      Buffered buffer = holding(pos, 1);
      if (buffer != null) {
        int n = (int) Math.min(len, buffer.start + buffer.bytes.length - pos);
        System.arraycopy(buffer.bytes, (int) (pos - buffer.start), bytes, off, n);
        pos += n;
        return n;
      }
      position();
      int n = stream.read(bytes, off, len);
      if (n > 0) {
        pos += n;
      } else if (n < 0 && len > 0) {
        return -1;
      }
      return n;
    }

    @Override
    public long skip(long n) {
      long skipped = Math.max(0, n);
      pos += skipped;
      return skipped;
    }

    /** Moves the stream to this one's position only when it is elsewhere: a move may cost. */
    private void position() throws IOException {
      if (stream.getPos() != pos) {
        stream.seek(pos);
      }
    }

    @Override
    public void close() throws IOException {
      buffers = List.of();
      stream.close();
    }
  }
}
