package io.floe.topology.refresh.eval.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.io.ParquetFileRange;
import org.junit.jupiter.api.Test;

/** Parquet's ranges of a file read together, over a stream that serves positioned reads. */
class RangedReadsTest {

  private static final int MIB = 1024 * 1024;

  @Test
  void shouldMergeRangesAcrossSmallGapsUpToTheMergedBound() {
    List<long[]> merged =
        RangedReads.coalesce(
            List.of(
                new long[] {100, 50},
                new long[] {0, 100},
                new long[] {150 + MIB, 10},
                new long[] {10L * MIB, 10},
                new long[] {10L * MIB + 20, RangedReads.MAX_MERGED}));

    // Adjacent and 1 MiB apart merge; 10 MiB apart, or beyond the merged bound, do not.
    assertThat(merged)
        .containsExactly(
            new long[] {0, 160 + MIB},
            new long[] {10L * MIB, 10},
            new long[] {10L * MIB + 20, RangedReads.MAX_MERGED});
  }

  @Test
  void shouldServeVectoredAndPrefetchedReadsWithOnePositionedReadPerMergedRange()
      throws IOException {
    // Given a file of 3 MiB of known bytes
    byte[] file = new byte[3 * MIB];
    for (int i = 0; i < file.length; i++) {
      file[i] = (byte) (i * 31);
    }
    Ranges stream = new Ranges(file);

    try (RangedReads reads = new RangedReads(stream)) {
      // When Parquet asks for three pages, two close together and one far, then reads an index
      List<ParquetFileRange> pages =
          List.of(
              new ParquetFileRange(1000, 200),
              new ParquetFileRange(1300, 100),
              new ParquetFileRange(2 * MIB + 500_000, 300));
      reads.readVectored(pages, new HeapByteBufferAllocator());
      reads.prefetch(List.<long[]>of(new long[] {3 * MIB - 4000, 3000}));
      reads.seek(3 * MIB - 3500);
      byte[] index = new byte[1000];
      reads.readFully(index);

      // Then each page holds its bytes, and three positioned reads served it all
      for (ParquetFileRange page : pages) {
        ByteBuffer bytes = page.getDataReadFuture().join();
        assertThat(bytes.remaining()).isEqualTo(page.getLength());
        for (int i = 0; i < page.getLength(); i++) {
          assertThat(bytes.get(i)).isEqualTo(file[(int) page.getOffset() + i]);
        }
      }
      for (int i = 0; i < index.length; i++) {
        assertThat(index[i]).isEqualTo(file[3 * MIB - 3500 + i]);
      }
      assertThat(stream.positioned).containsExactly(1000L, 2L * MIB + 500_000, 3L * MIB - 4000);
      assertThat(stream.streamed).isZero();
    }
  }

  /** A file in memory whose positioned reads are recorded, as an object store's requests. */
  private static final class Ranges extends SeekableInputStream implements RangeReadable {
    private final byte[] file;
    private final List<Long> positioned = new ArrayList<>();
    private int streamed;
    private long pos;

    Ranges(byte[] file) {
      this.file = file;
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) {
      positioned.add(position);
      System.arraycopy(file, (int) position, buffer, offset, length);
    }

    @Override
    public int readTail(byte[] buffer, int offset, int length) {
      readFully(file.length - length, buffer, offset, length);
      return length;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) {
      pos = newPos;
    }

    @Override
    public int read() {
      streamed++;
      return pos < file.length ? file[(int) pos++] & 0xFF : -1;
    }
  }
}
