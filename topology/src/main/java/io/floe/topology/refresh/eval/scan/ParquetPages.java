package io.floe.topology.refresh.eval.scan;

import io.floe.topology.refresh.eval.vector.DictionaryVector;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.DoubleVector;
import io.floe.topology.refresh.eval.vector.Vectors.LongVector;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.IntConsumer;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ValuesType;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.column.values.ValuesReader;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Decodes one flat column chunk, a page at a time, into batch vectors: the definition levels of a
 * run of rows first, then their values in one typed loop. {@link HybridRle} decodes levels and
 * dictionary ids many at a time, Parquet's own decoders the values of other encodings; what this
 * adds is that values go straight into primitive arrays, with no per-value converter call or
 * column-reader state machine, which was most of a full refresh's time. Plain-encoded numbers are
 * read from the page's bytes directly; dictionary entries are decoded once per column chunk into
 * the vector's representation, and a string column's rows stay ids into them ({@link
 * DictionaryVector}) where its pages are dictionary-encoded, values where the writer fell back.
 *
 * <p>Rows are read in runs ({@link #skipTo} a row of the row group, then {@link #read} the rows
 * from it), so that a row group whose pages the column index pruned is read too: its columns' pages
 * no longer line up by row, each page says its first row (the offset index), and the rows between
 * the kept ranges are skipped, a whole page unread, the rest of a page by skipping its values in
 * their encoding. A column is flat, so a value (or null) is a row.
 */
final class ParquetPages {

  private final PageReader pages;
  private final ColumnDescriptor descriptor;
  private final PrimitiveTypeName physical;
  private final Vector vector;
  private final int maxDefinition;
  private final int[] definitions = new int[Vectors.BATCH];
  private final Ids ids = new Ids();

  /** The column chunk's dictionary, decoded into the vector's representation, or null. */
  private Object decodedDictionary;

  private Dictionary dictionary;

  /** Values left in the current page, and the page's decoders. */
  private int left;

  /** The index in the row group of the row of the current page's next value. */
  private long row;

  /** Skips the next {@code count} defined values of the current page, in its encoding. */
  private IntConsumer skipValues;

  private Levels levels;
  private Values values;

  ParquetPages(PageReader pages, ColumnDescriptor descriptor, Vector vector) {
    this.pages = pages;
    this.descriptor = descriptor;
    this.physical = descriptor.getPrimitiveType().getPrimitiveTypeName();
    this.vector = vector;
    this.maxDefinition = descriptor.getMaxDefinitionLevel();
    DictionaryPage page = pages.readDictionaryPage();
    if (page != null) {
      try {
        dictionary = page.getEncoding().initDictionary(descriptor, page);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * Skips to row {@code target} of the row group: pages that end before it are dropped undecoded,
   * the values of its page before it skipped.
   */
  void skipTo(long target) {
    while (row < target) {
      if (left == 0) {
        nextPage();
      } else if (target - row >= left) {
        row += left;
        left = 0;
      } else {
        skip((int) (target - row));
      }
    }
    if (row != target) {
      throw new IllegalStateException(
          "Column " + descriptor + " has no page holding row " + target + " of its row group");
    }
  }

  /** Skips {@code m} rows of the current page, fewer than it has left. */
  private void skip(int m) {
    for (int done = 0; done < m; ) {
      int k = Math.min(Vectors.BATCH, m - done);
      int count = k;
      if (maxDefinition > 0) {
        levels.read(definitions, k);
        count = 0;
        for (int i = 0; i < k; i++) {
          if (definitions[i] == maxDefinition) {
            count++;
          }
        }
      }
      skipValues.accept(count);
      done += k;
    }
    left -= m;
    row += m;
  }

  /**
   * Decodes the {@code n} rows from the current row on into rows {@code [offset, offset + n)} of
   * the vector.
   */
  void read(int offset, int n) {
    for (int done = 0; done < n; ) {
      if (left == 0) {
        long expected = row;
        nextPage();
        if (row != expected) {
          throw new IllegalStateException(
              "Column "
                  + descriptor
                  + " has no page holding row "
                  + expected
                  + " of its row group");
        }
      }
      int m = Math.min(left, n - done);
      int[] defined = null;
      if (maxDefinition > 0) {
        levels.read(definitions, m);
        defined = definitions;
      }
      values.read(defined, maxDefinition, offset + done, m);
      left -= m;
      row += m;
      done += m;
    }
  }

  private void nextPage() {
    DataPage page = pages.readPage();
    if (page == null) {
      throw new IllegalStateException("Column " + descriptor + " ends before its row group");
    }
    try {
      if (page instanceof DataPageV1 v1) {
        ByteBufferInputStream in = v1.getBytes().toInputStream();
        v1.getRlEncoding()
            .getValuesReader(descriptor, ValuesType.REPETITION_LEVEL)
            .initFromPage(v1.getValueCount(), in);
        if (maxDefinition > 0 && v1.getDlEncoding() == Encoding.RLE) {
          // The levels' length, then the levels.
          int length = BytesUtils.readIntLittleEndian(in);
          levels = levels(in.slice(length));
        } else {
          ValuesReader definitionReader =
              v1.getDlEncoding().getValuesReader(descriptor, ValuesType.DEFINITION_LEVEL);
          definitionReader.initFromPage(v1.getValueCount(), in);
          levels = Levels.of(definitionReader);
        }
        values = values(v1.getValueEncoding(), v1.getValueCount(), in);
      } else {
        DataPageV2 v2 = (DataPageV2) page;
        levels = maxDefinition > 0 ? levels(v2.getDefinitionLevels().toByteBuffer()) : null;
        values = values(v2.getDataEncoding(), v2.getValueCount(), v2.getData().toInputStream());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot decode a page of " + descriptor, e);
    }
    left = page.getValueCount();
    // Set in a row group whose pages the column index pruned; else pages follow one another.
    row = page.getFirstRowIndex().orElse(row);
  }

  private Levels levels(ByteBuffer encoded) {
    HybridRle decoder = new HybridRle(encoded, BytesUtils.getWidthFromMaxInt(maxDefinition));
    return (into, m) -> decoder.read(into, 0, m);
  }

  private Values values(Encoding encoding, int count, ByteBufferInputStream in) throws IOException {
    if (encoding.usesDictionary()) {
      if (dictionary == null) {
        throw new IllegalStateException("Column " + descriptor + " has no dictionary page");
      }
      // The ids' bit width, then the ids; a page of nulls only may hold neither.
      ByteBuffer encoded = in.slice(in.available());
      int bitWidth = encoded.hasRemaining() ? encoded.get() & 0xFF : 0;
      ids.decoder = new HybridRle(encoded, bitWidth);
      skipValues = ids::skip;
      return dictionaryValues();
    }
    if (encoding == Encoding.PLAIN
        && (vector instanceof LongVector || vector instanceof DoubleVector)
        && physical != PrimitiveTypeName.BOOLEAN) {
      ByteBuffer bytes = in.slice(in.available()).order(ByteOrder.LITTLE_ENDIAN);
      int width =
          physical == PrimitiveTypeName.INT32 || physical == PrimitiveTypeName.FLOAT ? 4 : 8;
      skipValues = skipped -> bytes.position(bytes.position() + skipped * width);
      return plainValues(bytes);
    }
    ValuesReader reader = encoding.getValuesReader(descriptor, ValuesType.VALUES);
    reader.initFromPage(count, in);
    skipValues = reader::skip;
    return genericValues(reader);
  }

  private Values plainValues(ByteBuffer bytes) {
    if (vector instanceof LongVector longs) {
      boolean ints = physical == PrimitiveTypeName.INT32;
      return (defined, max, offset, m) -> {
        long[] out = longs.values;
        boolean[] nulls = longs.nulls;
        for (int i = 0; i < m; i++) {
          int row = offset + i;
          if (defined == null || defined[i] == max) {
            out[row] = ints ? bytes.getInt() : bytes.getLong();
            nulls[row] = false;
          } else {
            nulls[row] = true;
          }
        }
      };
    }
    DoubleVector doubles = (DoubleVector) vector;
    boolean floats = physical == PrimitiveTypeName.FLOAT;
    return (defined, max, offset, m) -> {
      double[] out = doubles.values;
      boolean[] nulls = doubles.nulls;
      for (int i = 0; i < m; i++) {
        int row = offset + i;
        if (defined == null || defined[i] == max) {
          out[row] = floats ? bytes.getFloat() : bytes.getDouble();
          nulls[row] = false;
        } else {
          nulls[row] = true;
        }
      }
    };
  }

  private Values dictionaryValues() {
    if (decodedDictionary == null) {
      decodedDictionary = decode(dictionary);
    }
    int[] id = ids.buffer;
    if (vector instanceof LongVector longs) {
      long[] entries = (long[]) decodedDictionary;
      return (defined, max, offset, m) -> {
        long[] out = longs.values;
        boolean[] nulls = longs.nulls;
        ids.read(defined, max, m);
        for (int i = 0, next = 0; i < m; i++) {
          int row = offset + i;
          if (defined == null || defined[i] == max) {
            out[row] = entries[id[next++]];
            nulls[row] = false;
          } else {
            nulls[row] = true;
          }
        }
      };
    }
    if (vector instanceof DoubleVector doubles) {
      double[] entries = (double[]) decodedDictionary;
      return (defined, max, offset, m) -> {
        double[] out = doubles.values;
        boolean[] nulls = doubles.nulls;
        ids.read(defined, max, m);
        for (int i = 0, next = 0; i < m; i++) {
          int row = offset + i;
          if (defined == null || defined[i] == max) {
            out[row] = entries[id[next++]];
            nulls[row] = false;
          } else {
            nulls[row] = true;
          }
        }
      };
    }
    if (vector instanceof DictionaryVector strings) {
      // The ids themselves; the entries once for the chunk.
      strings.setDictionary((String[]) decodedDictionary);
      return (defined, max, offset, m) -> {
        int[] out = strings.ids;
        ids.read(defined, max, m);
        for (int i = 0, next = 0; i < m; i++) {
          out[offset + i] =
              defined == null || defined[i] == max ? id[next++] : DictionaryVector.NULL;
        }
      };
    }
    // One instance per dictionary entry, shared by every row that holds it.
    Object[] entries = (Object[]) decodedDictionary;
    return (defined, max, offset, m) -> {
      ids.read(defined, max, m);
      for (int i = 0, next = 0; i < m; i++) {
        vector.set(offset + i, defined == null || defined[i] == max ? entries[id[next++]] : null);
      }
    };
  }

  /**
   * The dictionary ids of the current page, decoded for a run of rows at a time into one buffer.
   */
  private static final class Ids {
    final int[] buffer = new int[Vectors.BATCH];
    HybridRle decoder;

    /** Decodes the ids of the defined values among the next {@code m} rows. */
    void read(int[] defined, int max, int m) {
      int count = m;
      if (defined != null) {
        count = 0;
        for (int i = 0; i < m; i++) {
          if (defined[i] == max) {
            count++;
          }
        }
      }
      decoder.read(buffer, 0, count);
    }

    /** Skips the ids of the next {@code count} defined values. */
    void skip(int count) {
      for (int done = 0; done < count; done += Vectors.BATCH) {
        decoder.read(buffer, 0, Math.min(Vectors.BATCH, count - done));
      }
    }
  }

  /** The dictionary's entries in the vector's representation. */
  private Object decode(Dictionary dictionary) {
    int size = dictionary.getMaxId() + 1;
    if (vector instanceof LongVector) {
      long[] entries = new long[size];
      for (int id = 0; id < size; id++) {
        entries[id] =
            physical == PrimitiveTypeName.INT32
                ? dictionary.decodeToInt(id)
                : dictionary.decodeToLong(id);
      }
      return entries;
    }
    if (vector instanceof DoubleVector) {
      double[] entries = new double[size];
      for (int id = 0; id < size; id++) {
        entries[id] =
            physical == PrimitiveTypeName.FLOAT
                ? dictionary.decodeToFloat(id)
                : dictionary.decodeToDouble(id);
      }
      return entries;
    }
    Object[] entries = vector instanceof DictionaryVector ? new String[size] : new Object[size];
    for (int id = 0; id < size; id++) {
      entries[id] =
          switch (physical) {
            case BOOLEAN -> dictionary.decodeToBoolean(id);
            case FLOAT -> dictionary.decodeToFloat(id);
            case BINARY -> dictionary.decodeToBinary(id).toStringUsingUTF8();
            default -> throw new IllegalStateException("No dictionary decoding of " + physical);
          };
    }
    return entries;
  }

  /** Any other encoding, a value at a time through Parquet's reader of it. */
  private Values genericValues(ValuesReader reader) {
    if (vector instanceof LongVector longs) {
      boolean ints = physical == PrimitiveTypeName.INT32;
      return (defined, max, offset, m) -> {
        for (int i = 0; i < m; i++) {
          int row = offset + i;
          if (defined == null || defined[i] == max) {
            longs.set(row, ints ? reader.readInteger() : reader.readLong());
          } else {
            longs.setNull(row);
          }
        }
      };
    }
    if (vector instanceof DoubleVector doubles) {
      boolean floats = physical == PrimitiveTypeName.FLOAT;
      return (defined, max, offset, m) -> {
        for (int i = 0; i < m; i++) {
          int row = offset + i;
          if (defined == null || defined[i] == max) {
            doubles.set(row, floats ? reader.readFloat() : reader.readDouble());
          } else {
            doubles.setNull(row);
          }
        }
      };
    }
    return (defined, max, offset, m) -> {
      for (int i = 0; i < m; i++) {
        int row = offset + i;
        if (defined == null || defined[i] == max) {
          vector.set(
              row,
              switch (physical) {
                case BOOLEAN -> reader.readBoolean();
                case FLOAT -> reader.readFloat();
                case BINARY -> reader.readBytes().toStringUsingUTF8();
                default -> throw new IllegalStateException("No decoding of " + physical);
              });
        } else {
          vector.setNull(row);
        }
      }
    };
  }

  /** Writes {@code m} rows' values, starting at row {@code offset}, from the current page. */
  @FunctionalInterface
  private interface Values {
    /**
     * @param defined the rows' definition levels, or null when the column is required
     * @param max the level of a defined value
     */
    void read(int[] defined, int max, int offset, int m);
  }

  /** The definition levels of the current page. */
  @FunctionalInterface
  private interface Levels {
    void read(int[] into, int m);

    static Levels of(ValuesReader reader) {
      return (into, m) -> {
        for (int i = 0; i < m; i++) {
          into[i] = reader.readInteger();
        }
      };
    }
  }
}
