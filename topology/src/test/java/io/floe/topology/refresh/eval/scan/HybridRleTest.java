package io.floe.topology.refresh.eval.scan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridDecoder;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Floe's bulk decoder against Parquet's own encoder and value-at-a-time decoder. */
class HybridRleTest {

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 5, 8, 9, 13, 16, 17, 24, 31, 32})
  void shouldDecodeWhatParquetEncodesInReadsOfAnySize(int bitWidth) throws Exception {
    Random random = new Random(bitWidth);
    int[] values = new int[10_000];
    long bound = bitWidth == 0 ? 1 : 1L << bitWidth;
    for (int i = 0; i < values.length; ) {
      // Runs of repeats (RLE runs) between stretches of random values (bit-packed runs).
      int value = (int) (random.nextLong() & (bound - 1));
      int length = random.nextInt(4) == 0 ? 1 + random.nextInt(40) : 1;
      for (int k = 0; k < length && i < values.length; k++) {
        values[i++] = value;
      }
    }
    ByteBuffer encoded = encode(values, bitWidth);

    int[] decoded = new int[values.length];
    HybridRle decoder = new HybridRle(encoded.duplicate(), bitWidth);
    for (int done = 0; done < values.length; ) {
      int n = Math.min(values.length - done, random.nextInt(20) == 0 ? 0 : 1 + random.nextInt(70));
      decoder.read(decoded, done, n);
      done += n;
    }

    assertThat(decoded).isEqualTo(values);
    RunLengthBitPackingHybridDecoder parquet =
        new RunLengthBitPackingHybridDecoder(
            bitWidth, ByteBufferInputStream.wrap(encoded.duplicate()));
    int[] theirs = new int[values.length];
    for (int i = 0; i < theirs.length; i++) {
      theirs[i] = parquet.readInt();
    }
    assertThat(decoded).isEqualTo(theirs);
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 3, 11})
  void shouldDecodeFromASliceInTheMiddleOfABufferIntoAnArrayHoldingOtherValues(int bitWidth)
      throws Exception {
    int[] values = new int[333];
    Arrays.setAll(values, i -> bitWidth == 0 ? 0 : (i * 7919) & ((1 << bitWidth) - 1));
    byte[] encoded = encode(values, bitWidth).array();
    byte[] framed = new byte[encoded.length + 20];
    System.arraycopy(encoded, 0, framed, 13, encoded.length);
    ByteBuffer slice = ByteBuffer.wrap(framed, 13, encoded.length);

    int[] decoded = new int[values.length + 10];
    Arrays.fill(decoded, -1);
    HybridRle decoder = new HybridRle(slice, bitWidth);
    decoder.read(decoded, 5, 100);
    decoder.read(decoded, 105, values.length - 100);

    assertThat(Arrays.copyOfRange(decoded, 5, 5 + values.length)).isEqualTo(values);
    assertThat(Arrays.copyOfRange(decoded, 0, 5)).containsOnly(-1);
    assertThat(Arrays.copyOfRange(decoded, 5 + values.length, decoded.length)).containsOnly(-1);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 7, 20})
  void shouldFailClearlyWhenAskedForMoreValuesThanEncoded(int bitWidth) throws Exception {
    int[] values = new int[100];
    Arrays.setAll(values, i -> i % 2);
    ByteBuffer encoded = encode(values, bitWidth);
    HybridRle decoder = new HybridRle(encoded, bitWidth);
    decoder.read(new int[100], 0, 100);

    // The last bit-packed group may be padded; past it there is nothing.
    assertThatThrownBy(() -> decoder.read(new int[200], 0, 200))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("end");
  }

  private static ByteBuffer encode(int[] values, int bitWidth) throws Exception {
    try (RunLengthBitPackingHybridEncoder encoder =
        new RunLengthBitPackingHybridEncoder(
            bitWidth, 64, 64 * 1024, HeapByteBufferAllocator.getInstance())) {
      for (int value : values) {
        encoder.writeInt(value);
      }
      return ByteBuffer.wrap(encoder.toBytes().toByteArray());
    }
  }
}
