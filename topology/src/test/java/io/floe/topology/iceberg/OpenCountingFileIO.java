package io.floe.topology.iceberg;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Hadoop's FileIO that counts, per file, the streams opened on it and the reads of a Parquet footer
 * (a seek to the file's last 8 bytes, where Parquet keeps the footer's length): what an object
 * store would see as GETs. A catalog builds it by class name ({@code io-impl}), so the counts are
 * per JVM; each test's files have paths of their own.
 */
public class OpenCountingFileIO extends HadoopFileIO {

  private static final Map<String, AtomicInteger> OPENS = new ConcurrentHashMap<>();
  private static final Map<String, AtomicInteger> FOOTER_READS = new ConcurrentHashMap<>();
  private static final Map<String, AtomicInteger> TAIL_READS = new ConcurrentHashMap<>();

  /**
   * The properties of a JDBC catalog on SQLite in {@code dir}, its warehouse there too, whose
   * FileIO is this one.
   */
  public static Map<String, String> jdbcCatalogIn(Path dir) {
    Map<String, String> properties = new HashMap<>();
    properties.put("type", "jdbc");
    properties.put("uri", "jdbc:sqlite:" + dir.resolve("catalog.db"));
    properties.put("warehouse", dir.resolve("warehouse").toUri().toString());
    properties.put("jdbc.schema-version", "V1");
    properties.put(CatalogProperties.FILE_IO_IMPL, OpenCountingFileIO.class.getName());
    return properties;
  }

  /** Streams opened on the file at {@code location}. */
  public static int opens(String location) {
    AtomicInteger count = OPENS.get(location);
    return count == null ? 0 : count.get();
  }

  /** Streams opened on the files whose location passes {@code filter}. */
  public static int opens(Predicate<String> filter) {
    return OPENS.entrySet().stream()
        .filter(e -> filter.test(e.getKey()))
        .mapToInt(e -> e.getValue().get())
        .sum();
  }

  /** The opens of each file whose location passes {@code filter}. */
  public static Map<String, Integer> opensByFile(Predicate<String> filter) {
    Map<String, Integer> byFile = new java.util.TreeMap<>();
    OPENS.forEach(
        (location, count) -> {
          if (filter.test(location)) {
            byFile.put(location, count.get());
          }
        });
    return byFile;
  }

  /** Parquet footers read of each file whose location passes {@code filter}. */
  public static Map<String, Integer> footerReadsByFile(Predicate<String> filter) {
    Map<String, Integer> byFile = new java.util.TreeMap<>();
    FOOTER_READS.forEach(
        (location, count) -> {
          if (filter.test(location)) {
            byFile.put(location, count.get());
          }
        });
    return byFile;
  }

  /**
   * Reads of the file's end in one ranged request, of each file whose location passes {@code
   * filter}.
   */
  public static Map<String, Integer> tailReadsByFile(Predicate<String> filter) {
    Map<String, Integer> byFile = new java.util.TreeMap<>();
    TAIL_READS.forEach(
        (location, count) -> {
          if (filter.test(location)) {
            byFile.put(location, count.get());
          }
        });
    return byFile;
  }

  /** Forgets every count. */
  public static void reset() {
    OPENS.clear();
    FOOTER_READS.clear();
    TAIL_READS.clear();
  }

  /** Whether the location is a table metadata file. */
  public static boolean isMetadataFile(String location) {
    return location.endsWith(".metadata.json");
  }

  /** Whether the location is a manifest list. */
  public static boolean isManifestList(String location) {
    return location.contains("/metadata/snap-") && location.endsWith(".avro");
  }

  /** Whether the location is a manifest. */
  public static boolean isManifest(String location) {
    return location.contains("/metadata/")
        && location.endsWith(".avro")
        && !isManifestList(location);
  }

  /** Whether the location is a data or delete file. */
  public static boolean isDataFile(String location) {
    return location.contains("/data/");
  }

  @Override
  public InputFile newInputFile(String path) {
    return new Counted(super.newInputFile(path));
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    return new Counted(super.newInputFile(path, length));
  }

  private static final class Counted implements InputFile {
    private final InputFile file;

    Counted(InputFile file) {
      this.file = file;
    }

    @Override
    public long getLength() {
      return file.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      String location = file.location();
      OPENS.computeIfAbsent(location, l -> new AtomicInteger()).incrementAndGet();
      SeekableInputStream stream = file.newStream();
      long footerLengthAt = location.endsWith(".parquet") ? file.getLength() - 8 : -1;
      return new CountingStream(stream, location, footerLengthAt);
    }

    @Override
    public String location() {
      return file.location();
    }

    @Override
    public boolean exists() {
      return file.exists();
    }
  }

  private static final class CountingStream extends SeekableInputStream implements RangeReadable {
    private final SeekableInputStream stream;
    private final String location;
    private final long footerLengthAt;

    CountingStream(SeekableInputStream stream, String location, long footerLengthAt) {
      this.stream = stream;
      this.location = location;
      this.footerLengthAt = footerLengthAt;
    }

    @Override
    public long getPos() throws IOException {
      return stream.getPos();
    }

    @Override
    public void seek(long newPos) throws IOException {
      if (newPos == footerLengthAt) {
        FOOTER_READS.computeIfAbsent(location, l -> new AtomicInteger()).incrementAndGet();
      }
      stream.seek(newPos);
    }

    /** One ranged request of an object store: counted as a footer read when it ends the file. */
    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
      long at = stream.getPos();
      stream.seek(position);
      org.apache.iceberg.io.IOUtil.readFully(stream, buffer, offset, length);
      stream.seek(at);
    }

    @Override
    public int readTail(byte[] buffer, int offset, int length) throws IOException {
      FOOTER_READS.computeIfAbsent(location, l -> new AtomicInteger()).incrementAndGet();
      TAIL_READS.computeIfAbsent(location, l -> new AtomicInteger()).incrementAndGet();
      long at = stream.getPos();
      stream.seek(footerLengthAt + 8 - length);
      org.apache.iceberg.io.IOUtil.readFully(stream, buffer, offset, length);
      stream.seek(at);
      return length;
    }

    @Override
    public int read() throws IOException {
      return stream.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return stream.read(b, off, len);
    }

    @Override
    public void close() throws IOException {
      stream.close();
    }
  }
}
