package io.floe.topology.refresh.eval.scan;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.parquet.column.values.bitpacking.BytePacker;
import org.apache.parquet.column.values.bitpacking.Packer;

/**
 * Decodes Parquet's RLE/bit-packing hybrid encoding (dictionary ids, definition levels) many values
 * at a time into an {@code int[]}: repeated runs by filling, bit-packed runs eight values at a time
 * with Parquet's own unpackers straight into the caller's array.
 *
 * <p>Written here because parquet-mr's {@code RunLengthBitPackingHybridDecoder} hands out one value
 * per call and allocates two arrays per bit-packed run: it was a tenth of a full refresh's time and
 * a third of the scan's allocations.
 *
 * <p>The format: runs until the end of the buffer, each led by a ULEB128 header; an even header is
 * a repeated run of {@code header >>> 1} copies of one value in {@code ceil(bitWidth / 8)}
 * little-endian bytes, an odd one {@code header >>> 1} groups of eight values packed in {@code
 * bitWidth} bytes each.
 */
final class HybridRle {

  private final ByteBuffer in;
  private final int bitWidth;
  private final int valueBytes;
  private final BytePacker packer;

  /** The next byte to read, an absolute position in {@link #in}. */
  private int position;

  /** Values left in the current repeated run, and its value. */
  private int repeated;

  private int repeatedValue;

  /** Groups of eight values of the current bit-packed run not yet unpacked. */
  private int packedGroups;

  /** A group unpacked for a read that ended inside it, and how many of its values are left. */
  private final int[] group = new int[8];

  private int groupLeft;

  /**
   * @param in the encoded values, from its position to its limit
   * @param bitWidth the bits of one value (0 to 32)
   */
  HybridRle(ByteBuffer in, int bitWidth) {
    if (bitWidth < 0 || bitWidth > 32) {
      throw new IllegalArgumentException("bit width " + bitWidth + " is not in [0, 32]");
    }
    this.in = in;
    this.bitWidth = bitWidth;
    this.valueBytes = (bitWidth + 7) / 8;
    this.packer = Packer.LITTLE_ENDIAN.newBytePacker(bitWidth);
    this.position = in.position();
  }

  /** Decodes the next {@code n} values into {@code out[offset, offset + n)}. */
  void read(int[] out, int offset, int n) {
    while (n > 0) {
      if (repeated > 0) {
        int m = Math.min(repeated, n);
        Arrays.fill(out, offset, offset + m, repeatedValue);
        repeated -= m;
        offset += m;
        n -= m;
      } else if (groupLeft > 0) {
        int m = Math.min(groupLeft, n);
        System.arraycopy(group, 8 - groupLeft, out, offset, m);
        groupLeft -= m;
        offset += m;
        n -= m;
      } else if (packedGroups > 0) {
        int whole = Math.min(packedGroups, n >>> 3);
        if (whole == 0) {
          unpack(group, 0);
          groupLeft = 8;
        } else {
          for (int g = 0; g < whole; g++) {
            unpack(out, offset);
            offset += 8;
          }
          n -= whole << 3;
        }
      } else {
        nextRun();
      }
    }
  }

  private void unpack(int[] out, int offset) {
    packedGroups--;
    if (bitWidth == 0) {
      // Parquet's unpacker of width 0 writes nothing.
      Arrays.fill(out, offset, offset + 8, 0);
      return;
    }
    int available = in.limit() - position;
    if (available <= 0) {
      throw new IllegalStateException("A bit-packed run ends past the end of the encoded values");
    }
    if (available < bitWidth) {
      // A last group cut short: its missing bytes read as zeros, as parquet-mr reads them.
      byte[] padded = new byte[bitWidth];
      in.get(position, padded, 0, available);
      packer.unpack8Values(padded, 0, out, offset);
    } else {
      packer.unpack8Values(in, position, out, offset);
    }
    position += Math.min(bitWidth, available);
  }

  private void nextRun() {
    int header = readUnsignedVarInt();
    if ((header & 1) == 0) {
      repeated = header >>> 1;
      if (position + valueBytes > in.limit()) {
        throw new IllegalStateException("A repeated run ends past its page's values");
      }
      int value = 0;
      for (int b = 0; b < valueBytes; b++) {
        value |= (in.get(position++) & 0xFF) << (8 * b);
      }
      repeatedValue = value;
    } else {
      packedGroups = header >>> 1;
    }
  }

  private int readUnsignedVarInt() {
    int value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (position >= in.limit()) {
        throw new IllegalStateException("The encoded values end before the values asked for");
      }
      int b = in.get(position++) & 0xFF;
      value |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IllegalStateException("A run header is longer than five bytes");
  }
}
