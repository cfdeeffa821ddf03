package io.floe.topology.iceberg;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestListFile;
import org.apache.iceberg.hadoop.HadoopConfigurable;
import org.apache.iceberg.inmemory.InMemoryInputFile;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.DelegateFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.StorageCredential;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.io.SupportsStorageCredentials;
import org.apache.iceberg.util.SerializableSupplier;

/**
 * The {@link FileIO} Floe installs around the one a catalog would use (S3FileIO, HadoopFileIO,
 * ResolvingFileIO, any other; {@link #install}), counting each object-store request by {@link
 * RequestKind} and {@link RequestStage} in {@link RequestTally}, and the bytes read and written.
 * Everything else is the delegate's.
 *
 * <p>A read is counted as S3FileIO's streams issue GETs: a stream opens a request at its first
 * read, and again after a seek backwards or more than {@value #SKIP_BYTES} bytes forwards (shorter
 * gaps are read through); each positioned read of a {@link RangeReadable} stream is a request of
 * its own. Looking up a file's length or existence is a HEAD unless its length was given. A written
 * file is one PUT, a deleted file one delete.
 *
 * <p>It reads a table metadata file, a manifest list or a manifest from the store once: each never
 * changes once written, and resolve, detect and plan each load a table, read its current metadata
 * file and walk its manifests. The content of such a file read is kept in {@link FileCaches} by
 * location, the one home of what Floe knows of an immutable file (Iceberg's manifest cache is off
 * for the catalogs this FileIO wraps: {@link FileCaches} says why); the catalog still says which
 * metadata file is current, so nothing stale is served. What Floe writes itself and Iceberg reads
 * back (a commit's new metadata file and manifest list, read as the commit refreshes the table and
 * finds the snapshot it saved; the manifests, read by the next refresh's plan and maintenance) is
 * kept as it is written, up to {@link FileCaches#contentLimit()} bytes a file, so the read-back
 * costs no request; of a larger one only its length is kept.
 *
 * <p>A file's length comes from that content too, which spares a HEAD before each read of a
 * manifest list: table metadata does not record its length, and Iceberg's Avro reader asks for it.
 * A length asked of a manifest list not seen before reads the file whole (one GET instead of a HEAD
 * and a GET).
 */
public final class CountingFileIO
    implements DelegateFileIO, SupportsStorageCredentials, HadoopConfigurable {

  /** The catalog property naming the FileIO this one counts the requests of. */
  public static final String DELEGATE_IMPL = "floe.counted-io-impl";

  /** Forward gaps a stream reads through rather than opening a new request: S3FileIO's skip. */
  static final long SKIP_BYTES = 1024 * 1024;

  /** The FileIO each catalog type builds when {@code io-impl} is not set. */
  private static final Map<String, String> DEFAULT_IMPLS =
      Map.of(
          CatalogUtil.ICEBERG_CATALOG_TYPE_JDBC, "org.apache.iceberg.hadoop.HadoopFileIO",
          CatalogUtil.ICEBERG_CATALOG_TYPE_HADOOP, "org.apache.iceberg.hadoop.HadoopFileIO",
          CatalogUtil.ICEBERG_CATALOG_TYPE_HIVE, "org.apache.iceberg.hadoop.HadoopFileIO",
          CatalogUtil.ICEBERG_CATALOG_TYPE_NESSIE, "org.apache.iceberg.hadoop.HadoopFileIO",
          CatalogUtil.ICEBERG_CATALOG_TYPE_REST, "org.apache.iceberg.io.ResolvingFileIO",
          CatalogUtil.ICEBERG_CATALOG_TYPE_GLUE, "org.apache.iceberg.aws.s3.S3FileIO");

  private FileIO delegate;
  private Map<String, String> properties = Map.of();
  private Configuration conf;
  private List<StorageCredential> credentials = List.of();

  /**
   * The catalog properties with this FileIO around the one they name ({@code io-impl}), or around
   * the catalog type's default when they name none. Properties of a catalog whose default is not
   * known (a {@code catalog-impl} without {@code io-impl}) come back as they are: its requests are
   * not counted.
   */
  public static Map<String, String> install(Map<String, String> catalogProperties) {
    String impl = catalogProperties.get(CatalogProperties.FILE_IO_IMPL);
    if (CountingFileIO.class.getName().equals(impl)) {
      return catalogProperties;
    }
    if (impl == null && !catalogProperties.containsKey(CatalogProperties.CATALOG_IMPL)) {
      String type = catalogProperties.get(CatalogUtil.ICEBERG_CATALOG_TYPE);
      impl = type == null ? null : DEFAULT_IMPLS.get(type.toLowerCase(Locale.ROOT));
    }
    if (impl == null) {
      return catalogProperties;
    }
    Map<String, String> installed = new HashMap<>(catalogProperties);
    installed.put(CatalogProperties.FILE_IO_IMPL, CountingFileIO.class.getName());
    installed.put(DELEGATE_IMPL, impl);
    return installed;
  }

  /** The FileIO whose requests this one counts. */
  public FileIO delegate() {
    return delegate;
  }

  @Override
  public void initialize(Map<String, String> props) {
    String impl = props.get(DELEGATE_IMPL);
    if (impl == null) {
      throw new IllegalArgumentException(
          "Cannot initialize " + getClass().getSimpleName() + ": " + DELEGATE_IMPL + " is not set");
    }
    Map<String, String> delegateProps = new HashMap<>(props);
    delegateProps.put(CatalogProperties.FILE_IO_IMPL, impl);
    delegateProps.remove(DELEGATE_IMPL);
    this.properties = Map.copyOf(props);
    this.delegate = CatalogUtil.loadFileIO(impl, delegateProps, conf, credentials);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public InputFile newInputFile(String path) {
    InputFile cached = cached(path);
    return cached != null ? cached : new CountedInputFile(delegate.newInputFile(path), -1, path);
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    InputFile cached = cached(path);
    return cached != null
        ? cached
        : new CountedInputFile(delegate.newInputFile(path, length), length, path);
  }

  @Override
  public InputFile newInputFile(DataFile file) {
    return new CountedInputFile(delegate.newInputFile(file), file.fileSizeInBytes());
  }

  @Override
  public InputFile newInputFile(DeleteFile file) {
    return new CountedInputFile(delegate.newInputFile(file), file.fileSizeInBytes());
  }

  @Override
  public InputFile newInputFile(ManifestFile manifest) {
    InputFile cached = cached(manifest.path());
    return cached != null
        ? cached
        : new CountedInputFile(delegate.newInputFile(manifest), manifest.length());
  }

  @Override
  public InputFile newInputFile(ManifestListFile manifestList) {
    InputFile cached = cached(manifestList.location());
    return cached != null
        ? cached
        : new CountedInputFile(delegate.newInputFile(manifestList), -1, manifestList.location());
  }

  /**
   * Starts reading the manifests not cached yet at once on {@code pool}, each kept in {@link
   * FileCaches}, and returns: a walk reading them one after the other next joins each read in
   * flight, or finds it done ({@link FileCaches#readOnce}), or reads for itself a manifest whose
   * read has not started. Detection walks a snapshot's changes through Iceberg's {@code
   * Snapshot.addedDataFiles} and the like, which read manifest after manifest on the calling
   * thread; it does not wait for the pool, which also runs the data-file readers of remote chunks,
   * so a manifest read queued behind a whole chunk holds up no more than the walk's own read of it.
   * Nothing happens for fewer than two such manifests, or while the caches are off (what is read
   * would not be kept). A read that fails here fails only itself: the walk reads the manifest again
   * and reports the store's error if it persists.
   */
  void readAhead(Collection<ManifestFile> manifests, ExecutorService pool) {
    Map<String, ManifestFile> toRead = new LinkedHashMap<>();
    for (ManifestFile manifest : manifests) {
      if (manifest.length() <= FileCaches.contentLimit()
          && FileCaches.content(manifest.path()) == null) {
        toRead.putIfAbsent(manifest.path(), manifest);
      }
    }
    if (toRead.size() < 2) {
      return;
    }
    try {
      for (ManifestFile manifest : toRead.values()) {
        // Submitted, not executed: a failed read ends in its future, never joined, not in the
        // pool's log of uncaught exceptions.
        pool.submit(() -> readWholeInto(manifest));
      }
    } catch (RejectedExecutionException e) {
      // The pool is shutting down with the service: the walk reads what was not submitted.
    }
  }

  private void readWholeInto(ManifestFile manifest) {
    try (SeekableInputStream stream = newInputFile(manifest).newStream()) {
      // Opening it read it whole into the cache.
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The file at {@code path} served from its cached content, or null when none is cached. */
  private static InputFile cached(String path) {
    if (!isImmutableMetadata(path)) {
      return null;
    }
    byte[] content = FileCaches.content(path);
    return content == null ? null : new InMemoryInputFile(path, content);
  }

  /**
   * Whether the file at {@code location} is a table metadata file, a manifest list or a manifest:
   * written once under a name never reused (a version hint is rewritten, and is not one).
   */
  private static boolean isImmutableMetadata(String location) {
    return switch (RequestKind.ofRead(location, 0, 0, -1)) {
      case TABLE_METADATA -> isMetadataFile(location);
      case MANIFEST_LIST, MANIFEST -> true;
      default -> false;
    };
  }

  /**
   * Whether the file at {@code location} is a table metadata file whose name is never written
   * twice, so its reads are cached: catalogs name each one with a new UUID ({@code
   * 00001-<uuid>.metadata.json}). A Hadoop table numbers them ({@code v1.metadata.json}, {@code
   * v1.gz.metadata.json}), and a table dropped and created again writes {@code v1} anew.
   */
  private static boolean isMetadataFile(String location) {
    boolean metadata =
        location.endsWith(".metadata.json") || location.endsWith(".metadata.json.gz");
    return metadata && !NUMBERED_METADATA.matcher(location).find();
  }

  /** The name of a Hadoop table's metadata file: {@code v<version>[.<codec>].metadata.json}. */
  private static final Pattern NUMBERED_METADATA =
      Pattern.compile("(^|/)v\\d+(\\.[a-z0-9]+)?\\.metadata\\.json(\\.gz)?$");

  @Override
  public OutputFile newOutputFile(String path) {
    return new CountedOutputFile(delegate.newOutputFile(path), path);
  }

  /** The cached length of the file named {@code path} or {@code location}, or null. */
  private static Long cachedLength(String path, String location) {
    Long known = FileCaches.length(path);
    return known != null || path.equals(location) ? known : FileCaches.length(location);
  }

  /** Whether the file at {@code location} is a manifest list, whose length is read with it. */
  private static boolean isManifestList(String location) {
    return RequestKind.ofRead(location, 0, 0, -1) == RequestKind.MANIFEST_LIST;
  }

  @Override
  public void deleteFile(String path) {
    RequestTally.request(RequestKind.DELETE);
    FileCaches.invalidateContent(path);
    delegate.deleteFile(path);
  }

  @Override
  public void deleteFiles(Iterable<String> paths) throws BulkDeletionFailureException {
    if (delegate instanceof SupportsBulkOperations bulk) {
      bulk.deleteFiles(counted(paths));
    } else {
      paths.forEach(this::deleteFile);
    }
  }

  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    return prefixOperations().listPrefix(prefix);
  }

  @Override
  public void deletePrefix(String prefix) {
    prefixOperations().deletePrefix(prefix);
  }

  private SupportsPrefixOperations prefixOperations() {
    if (delegate instanceof SupportsPrefixOperations prefixes) {
      return prefixes;
    }
    throw new UnsupportedOperationException(
        delegate.getClass().getName() + " does not support prefix operations");
  }

  @Override
  public void setCredentials(List<StorageCredential> given) {
    this.credentials = List.copyOf(given);
    if (delegate instanceof SupportsStorageCredentials supports) {
      supports.setCredentials(given);
    }
  }

  @Override
  public List<StorageCredential> credentials() {
    return delegate instanceof SupportsStorageCredentials supports
        ? supports.credentials()
        : credentials;
  }

  @Override
  public void setConf(Configuration configuration) {
    this.conf = configuration;
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  @Override
  public void serializeConfWith(
      Function<Configuration, SerializableSupplier<Configuration>> confSerializer) {
    if (delegate instanceof HadoopConfigurable configurable) {
      configurable.serializeConfWith(confSerializer);
    }
  }

  @Override
  public void close() {
    if (delegate != null) {
      delegate.close();
    }
  }

  /** The paths, each counted as a delete as the delegate takes it. */
  private static Iterable<String> counted(Iterable<String> paths) {
    return () -> {
      Iterator<String> each = paths.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return each.hasNext();
        }

        @Override
        public String next() {
          String path = each.next();
          RequestTally.request(RequestKind.DELETE);
          FileCaches.invalidateContent(path);
          return path;
        }
      };
    };
  }

  /** An input file whose streams and lookups are counted. */
  static final class CountedInputFile implements InputFile {
    private final InputFile delegate;
    // As the caller named it, as the writer did: a key of the cached content or length.
    private final String path;
    private volatile long length;
    private volatile boolean lookedUp;
    // A file read whole to learn its length, served from here once (it may be too large to cache).
    private volatile InputFile whole;

    /**
     * @param length the file's length if the caller gave it, else -1
     */
    CountedInputFile(InputFile delegate, long length) {
      this(delegate, length, delegate.location());
    }

    CountedInputFile(InputFile delegate, long length, String path) {
      this.delegate = delegate;
      this.length = length;
      this.path = path;
    }

    @Override
    public long getLength() {
      if (length < 0 && isImmutableMetadata(path)) {
        Long known = cachedLength(path, location());
        if (known != null) {
          length = known;
        } else if (isManifestList(path)) {
          whole = new InMemoryInputFile(location(), readWhole());
        }
      }
      if (length < 0) {
        lookUp();
        length = delegate.getLength();
        if (isImmutableMetadata(path)) {
          FileCaches.putLength(length, path, location());
        }
      }
      return length;
    }

    /**
     * Reads the file in one request and keeps its content (or, when too large, its length) in
     * {@link FileCaches}, learning its length without a HEAD. A read of the same file already in
     * flight on another thread is waited for instead ({@link FileCaches#readOnce}).
     */
    private byte[] readWhole() {
      byte[] bytes = FileCaches.readOnce(path, location(), this::readAll);
      length = bytes.length;
      return bytes;
    }

    @Override
    public SeekableInputStream newStream() {
      InputFile read = whole;
      if (read != null) {
        whole = null;
        return read.newStream();
      }
      if (isImmutableMetadata(path) && (isMetadataFile(path) || fitsTheCache())) {
        // Read whole, as Iceberg reads these files to the end, and kept for the next reader: the
        // next load of the table, the next plan walking the same manifests. A metadata file is
        // parsed whole however large.
        byte[] cached = FileCaches.content(path);
        return new InMemoryInputFile(location(), cached != null ? cached : readWhole()).newStream();
      }
      return countedStream();
    }

    /** Whether the file is not known to be larger than the cache keeps. */
    private boolean fitsTheCache() {
      return FileCaches.contentLimit() > 0 && length <= FileCaches.contentLimit();
    }

    private SeekableInputStream countedStream() {
      SeekableInputStream stream = delegate.newStream();
      return stream instanceof RangeReadable
          ? new CountedRangeStream(stream, this)
          : new CountedStream(stream, this);
    }

    @Override
    public String location() {
      return delegate.location();
    }

    @Override
    public boolean exists() {
      if (whole != null || cachedLength(path, location()) != null) {
        return true;
      }
      lookUp();
      return delegate.exists();
    }

    /** A HEAD, the first time the file's metadata is asked for. */
    private void lookUp() {
      if (!lookedUp) {
        lookedUp = true;
        RequestTally.request(RequestKind.HEAD);
      }
    }

    /** The file's bytes, read in one request. */
    private byte[] readAll() {
      try (SeekableInputStream stream = countedStream()) {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new org.apache.iceberg.exceptions.RuntimeIOException(e, "Cannot read %s", location());
      }
    }

    /** The length if known without a request, else -1. */
    long knownLength() {
      return length;
    }
  }

  /** A stream that counts the requests and bytes its reads take. */
  static class CountedStream extends SeekableInputStream {
    final SeekableInputStream delegate;
    final CountedInputFile file;
    private long pos;
    // Where the open request's next byte is, or -1 while none is open.
    private long requestAt = -1;

    CountedStream(SeekableInputStream delegate, CountedInputFile file) {
      this.delegate = delegate;
      this.file = file;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) throws IOException {
      delegate.seek(newPos);
      pos = newPos;
    }

    @Override
    public int read() throws IOException {
      beforeRead(1);
      int b = delegate.read();
      if (b >= 0) {
        afterRead(1);
      }
      return b;
    }

    @Override
    public int read(byte[] bytes, int off, int len) throws IOException {
      beforeRead(len);
      int n = delegate.read(bytes, off, len);
      afterRead(n);
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = delegate.skip(n);
      pos += Math.max(0, skipped);
      return skipped;
    }

    @Override
    public int available() throws IOException {
      return delegate.available();
    }

    @Override
    public void close() throws IOException {
      delegate.close();
    }

    private void beforeRead(int len) {
      if (requestAt < 0 || pos < requestAt || pos - requestAt > SKIP_BYTES) {
        RequestTally.request(
            RequestKind.ofRead(file.location(), pos, pos + len, file.knownLength()));
      }
    }

    private void afterRead(int n) {
      if (n > 0) {
        pos += n;
        RequestTally.read(n);
      }
      requestAt = pos;
    }

    /** Counts one positioned read of {@code [position, position + len)}. */
    void rangeRead(long position, int len) {
      RequestTally.request(
          RequestKind.ofRead(file.location(), position, position + len, file.knownLength()));
      RequestTally.read(len);
    }
  }

  /** A counted stream over a delegate that serves positioned reads. */
  static final class CountedRangeStream extends CountedStream implements RangeReadable {

    CountedRangeStream(SeekableInputStream delegate, CountedInputFile file) {
      super(delegate, file);
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
      rangeRead(position, length);
      ((RangeReadable) delegate).readFully(position, buffer, offset, length);
    }

    @Override
    public int readTail(byte[] buffer, int offset, int length) throws IOException {
      RequestTally.request(RequestKind.DATA_FOOTER);
      int n = ((RangeReadable) delegate).readTail(buffer, offset, length);
      RequestTally.read(n);
      return n;
    }

    @Override
    public void readVectored(List<FileRange> ranges, IntFunction<ByteBuffer> allocate)
        throws IOException {
      for (FileRange range : ranges) {
        rangeRead(range.offset(), range.length());
      }
      ((RangeReadable) delegate).readVectored(ranges, allocate);
    }
  }

  /** An output file whose streams count as a PUT each. */
  private static final class CountedOutputFile extends ForwardingOutputFile {
    CountedOutputFile(OutputFile delegate, String path) {
      super(delegate, path);
    }

    @Override
    PositionOutputStream wrap(PositionOutputStream stream) {
      return new CountedOutputStream(stream, path, location());
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      // What was cached under this name is being replaced: forget it before the write, which may
      // fail halfway.
      FileCaches.invalidateContent(path);
      FileCaches.invalidateContent(location());
      return super.createOrOverwrite();
    }

    @Override
    public InputFile toInputFile() {
      InputFile cached = cached(path);
      return cached != null ? cached : new CountedInputFile(delegate.toInputFile(), -1, path);
    }
  }

  /**
   * Counts the bytes written, and a PUT when the file is closed; keeps the content of a metadata
   * file, manifest list or manifest written whole, or its length when it is too large to keep.
   */
  private static final class CountedOutputStream extends ForwardingPositionOutputStream {
    private final String path;
    private final String location;
    private long written;
    private boolean closed;
    // The bytes written so far, while the file may be cached; null once it may not.
    private ByteArrayOutputStream content;

    CountedOutputStream(PositionOutputStream delegate, String path, String location) {
      super(delegate);
      this.path = path;
      this.location = location;
      this.content =
          isImmutableMetadata(path) && FileCaches.contentLimit() > 0
              ? new ByteArrayOutputStream()
              : null;
    }

    /** Keeps bytes just written while the file stays within the cache's limit of one file. */
    private void keep(byte[] bytes, int off, int len) {
      if (content != null) {
        if (written > FileCaches.contentLimit()) {
          content = null;
        } else {
          content.write(bytes, off, len);
        }
      }
    }

    @Override
    public void write(int b) throws IOException {
      delegate.write(b);
      written++;
      RequestTally.written(1);
      if (content != null) {
        keep(new byte[] {(byte) b}, 0, 1);
      }
    }

    @Override
    public void write(byte[] bytes, int off, int len) throws IOException {
      delegate.write(bytes, off, len);
      written += len;
      RequestTally.written(len);
      keep(bytes, off, len);
    }

    @Override
    public void close() throws IOException {
      if (!closed) {
        closed = true;
        RequestTally.request(RequestKind.PUT);
        delegate.close();
        // Only once the store has the file: a write that failed leaves nothing to serve. Under
        // both names: a snapshot records the location the output file gives (Hadoop's normalised
        // path), which need not be the one it was created with.
        if (content != null) {
          FileCaches.putContent(content.toByteArray(), path, location);
          content = null;
        } else if (isImmutableMetadata(path)) {
          FileCaches.putLength(written, path, location);
        }
      } else {
        delegate.close();
      }
    }
  }
}
