package io.floe.topology.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.iceberg.CatalogProperties;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * The one cache of what Floe knows of files that never change once written, read by every stage of
 * a refresh (resolve, detect, plan, read, and the target's commits), bounded by {@value
 * #BYTES_CONFIG}: the Parquet footers Floe's column reader reads, keyed by file path and length;
 * the content of the table metadata files, manifest lists and manifests {@link CountingFileIO}
 * reads or writes (up to {@link #contentLimit()} bytes a file), keyed by location; for such a file
 * too large to keep, only its length; and the content of the small data files the column reader
 * reads whole on a remote store ({@link #smallFile}). A file's length comes from here, from its
 * content or that small entry, so that no HEAD precedes a read of a manifest list (table metadata
 * does not record its length, and Iceberg's Avro reader asks for it). A manifest is read once
 * within the bound, a footer and a metadata file too; a read on an object store costs a request of
 * 10-50 ms before its first byte, whatever its size.
 *
 * <p>Iceberg's own manifest cache ({@code io.manifest.cache-enabled}) stays off for the catalogs
 * whose FileIO Floe wraps: it would hold a second copy of the same manifests, and it is a poorer
 * home for them. {@code ManifestFiles} keys it by {@code FileIO} instance (weakly, at most {@code
 * iceberg.io.manifest.cache.fileio-max}, 8 by default, instances), so catalogs, and a REST
 * catalog's per-table FileIOs (vended credentials), each start empty and evict one another, and
 * before each read it asks the file's length. Keyed by location, one cache here serves every FileIO
 * of the process. A catalog whose FileIO Floe cannot wrap (a {@code catalog-impl} without {@code
 * io-impl}) gets Iceberg's cache instead, with its share of half the bound ({@link
 * #catalogProperties}); a catalog that sets any of Iceberg's cache keys keeps them.
 *
 * <p>Nothing cached here can be stale: each key names a file Iceberg never rewrites in place (a
 * metadata file's, manifest list's or manifest's name carries a UUID; a Hadoop table's numbered
 * {@code vN.metadata.json}, which a drop and re-create writes anew, is not cached); which metadata
 * file is current is still asked of the catalog at every load.
 */
public final class FileCaches {

  /** The key of the caches' size, in bytes. */
  public static final String BYTES_CONFIG = "floe.cache.bytes";

  /** The caches' size unless configured: 64 MiB. */
  public static final long DEFAULT_BYTES = 64L * 1024 * 1024;

  /** Iceberg's limit of one cached manifest, kept when the share is larger. */
  private static final long MAX_MANIFEST_BYTES = 8L * 1024 * 1024;

  /**
   * The heap an entry of a file's content or length takes beyond the content's bytes: key, array
   * header or boxed length, entry.
   */
  private static final int CONTENT_OVERHEAD = 256;

  // Footers (FooterKey -> ParquetMetadata), file contents (ContentKey -> byte[]), the lengths of
  // files too large to keep (ContentKey -> Long) and small data files (SmallFileKey -> byte[])
  // share one bound, so that no kind's share is fixed in advance.
  private static volatile Cache<Object, Object> files = newCache(DEFAULT_BYTES);
  private static volatile long contentLimit = contentLimit(DEFAULT_BYTES);

  // Reads of immutable files in flight, by the caller's name of the file: a second reader of the
  // same file waits for the first instead of sending a request of its own.
  private static final ConcurrentHashMap<String, CompletableFuture<byte[]>> READING =
      new ConcurrentHashMap<>();

  private FileCaches() {}

  /**
   * Sizes the caches of this process to {@code bytes}, before its first refresh: the footers it
   * holds now are dropped.
   */
  public static void configure(long bytes) {
    files = newCache(bytes);
    contentLimit = contentLimit(bytes);
  }

  /**
   * The properties of one of {@code catalogs} catalogs, with Iceberg's manifest cache on and given
   * its share of half of {@code bytes} only when its FileIO is not {@link CountingFileIO} (which
   * serves manifests from the cache here), entries kept until the cache is full (manifests never
   * change): a catalog configured with any of the cache's properties keeps its own.
   */
  public static Map<String, String> catalogProperties(
      Map<String, String> properties, long bytes, int catalogs) {
    if (CountingFileIO.class.getName().equals(properties.get(CatalogProperties.FILE_IO_IMPL))) {
      return properties;
    }
    Map<String, String> cached = new HashMap<>(properties);
    long share = Math.max(1, bytes / 2 / Math.max(1, catalogs));
    cached.putIfAbsent(CatalogProperties.IO_MANIFEST_CACHE_ENABLED, "true");
    cached.putIfAbsent(CatalogProperties.IO_MANIFEST_CACHE_MAX_TOTAL_BYTES, Long.toString(share));
    cached.putIfAbsent(
        CatalogProperties.IO_MANIFEST_CACHE_MAX_CONTENT_LENGTH,
        Long.toString(Math.min(share, MAX_MANIFEST_BYTES)));
    cached.putIfAbsent(CatalogProperties.IO_MANIFEST_CACHE_EXPIRATION_INTERVAL_MS, "0");
    return cached;
  }

  /** The properties of a process's only catalog ({@link #catalogProperties(Map, long, int)}). */
  public static Map<String, String> catalogProperties(Map<String, String> properties, long bytes) {
    return catalogProperties(properties, bytes, 1);
  }

  /** Reads a Parquet footer. */
  @FunctionalInterface
  public interface FooterReader {
    ParquetMetadata read() throws IOException;
  }

  /**
   * The footer of the Parquet file at {@code location} of {@code length} bytes, read by {@code
   * reader} unless cached. A path is written once (Iceberg never rewrites a data file in place), so
   * path and length identify its content.
   *
   * @throws UncheckedIOException when the footer cannot be read
   */
  public static ParquetMetadata footer(String location, long length, FooterReader reader) {
    Cache<Object, Object> cache = files;
    FooterKey key = new FooterKey(location, length);
    if (cache.getIfPresent(key) instanceof ParquetMetadata cached) {
      return cached;
    }
    // Read outside the cache's lock: a read of a remote store takes tens of milliseconds, and two
    // workers reading the same footer at once is rare and harmless.
    ParquetMetadata footer;
    try {
      footer = reader.read();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    cache.put(key, footer);
    return footer;
  }

  /**
   * The content of the file at {@code location}, read by {@code read} and kept ({@link
   * #putContent}) unless another thread's read of it is in flight, which is then waited for: the
   * views of one source refresh at once, and resolve and detect load a table at once, and each
   * would otherwise read the same new metadata file, manifest list and manifests from the store (on
   * S3 the first run of three views read 59 manifests where 30 exist). A failed read fails only its
   * own caller; one waiting for it reads for itself.
   *
   * @param location the FileIO's name of the file, under which the content is kept too
   */
  static byte[] readOnce(String path, String location, Supplier<byte[]> read) {
    return readOnce(path, () -> content(path), read, bytes -> putContent(bytes, path, location));
  }

  /**
   * The content of the file at {@code path}: {@code cached} if it gives one, else the content of
   * the read of it in flight on another thread, else read by {@code read} and handed to {@code
   * keep}.
   */
  private static byte[] readOnce(
      String path, Supplier<byte[]> cached, Supplier<byte[]> read, Consumer<byte[]> keep) {
    Supplier<byte[]> readAndKeep =
        () -> {
          byte[] bytes = read.get();
          keep.accept(bytes);
          return bytes;
        };
    CompletableFuture<byte[]> mine = new CompletableFuture<>();
    CompletableFuture<byte[]> running = READING.putIfAbsent(path, mine);
    if (running != null) {
      try {
        return running.join();
      } catch (CompletionException | CancellationException e) {
        return readAndKeep.get();
      }
    }
    try {
      // A read that finished between this caller's look at the cache and now kept the content.
      byte[] known = cached.get();
      byte[] bytes = known != null ? known : readAndKeep.get();
      mine.complete(bytes);
      return bytes;
    } catch (RuntimeException | Error e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      READING.remove(path, mine);
    }
  }

  /**
   * The content of the small data file at {@code location}, read whole by {@code read} unless
   * cached, or the content of another thread's read of it in flight (the views of a source refresh
   * at once, and read the same new file). Kept within the bound, apart from the contents {@link
   * CountingFileIO} serves (a data file's cached content is no proof that it still exists); nothing
   * is kept while the caches are off. A data file's path is written once (Iceberg never rewrites
   * one in place), so it names one content.
   */
  public static byte[] smallFile(String location, Supplier<byte[]> read) {
    SmallFileKey key = new SmallFileKey(location);
    if (files.getIfPresent(key) instanceof byte[] cached) {
      return cached;
    }
    return readOnce(
        location,
        () -> files.getIfPresent(key) instanceof byte[] bytes ? bytes : null,
        read,
        bytes -> {
          if (bytes.length <= contentLimit) {
            files.put(key, bytes);
          }
        });
  }

  /** The cached content of the file at {@code location}, or null. */
  static byte[] content(String location) {
    return files.getIfPresent(new ContentKey(location)) instanceof byte[] bytes ? bytes : null;
  }

  /** The number of entries the caches hold, of every kind. */
  static long entries() {
    Cache<Object, Object> cache = files;
    cache.cleanUp();
    return cache.estimatedSize();
  }

  /**
   * The length of the file at {@code location}, from its cached content or the entry that records
   * only its length, or null when neither is cached.
   */
  static Long length(String location) {
    Object cached = files.getIfPresent(new ContentKey(location));
    if (cached instanceof byte[] bytes) {
      return (long) bytes.length;
    }
    return cached instanceof Long length ? length : null;
  }

  /**
   * Caches {@code bytes} as the content of the file at each of {@code locations}, or only its
   * length when it is larger than {@link #contentLimit()}.
   */
  static void putContent(byte[] bytes, String... locations) {
    if (bytes.length > contentLimit) {
      putLength(bytes.length, locations);
      return;
    }
    Cache<Object, Object> cache = files;
    for (String location : distinct(locations)) {
      cache.put(new ContentKey(location), bytes);
    }
  }

  /**
   * Records the length of the file at each of {@code locations}, where its content is not cached
   * (nothing while the caches are off).
   */
  static void putLength(long length, String... locations) {
    if (contentLimit > 0) {
      Cache<Object, Object> cache = files;
      for (String location : distinct(locations)) {
        cache.asMap().putIfAbsent(new ContentKey(location), length);
      }
    }
  }

  /** A file's names, each once: the name a caller gave and the FileIO's are often the same. */
  private static Set<String> distinct(String... locations) {
    return new LinkedHashSet<>(Arrays.asList(locations));
  }

  /** Forgets the content of the file at {@code location}: it is being written or was deleted. */
  static void invalidateContent(String location) {
    files.invalidate(new ContentKey(location));
  }

  /**
   * The largest file whose content is cached: Iceberg's limit of one cached manifest, or half the
   * bound when smaller (0 when the caches are off).
   */
  static long contentLimit() {
    return contentLimit;
  }

  private static long contentLimit(long bytes) {
    return Math.min(MAX_MANIFEST_BYTES, bytes / 2);
  }

  private static Cache<Object, Object> newCache(long bytes) {
    return Caffeine.newBuilder()
        .maximumWeight(Math.max(1, bytes))
        .weigher((Object key, Object value) -> weightOf(value))
        .build();
  }

  private static int weightOf(Object value) {
    if (value instanceof byte[] bytes) {
      return bytes.length + CONTENT_OVERHEAD;
    }
    return value instanceof Long ? CONTENT_OVERHEAD : weight((ParquetMetadata) value);
  }

  /**
   * The heap a footer takes, estimated from its row groups and column chunks (their statistics and
   * offsets), the bulk of a footer of many row groups.
   */
  static int weight(ParquetMetadata footer) {
    long bytes = 1024;
    for (BlockMetaData block : footer.getBlocks()) {
      bytes += 256 + 512L * block.getColumns().size();
    }
    return (int) Math.min(Integer.MAX_VALUE, bytes);
  }

  private record FooterKey(String location, long length) {}

  private record ContentKey(String location) {}

  private record SmallFileKey(String location) {}
}
