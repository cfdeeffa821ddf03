package io.floe.topology.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * The caches of files that never change once written, read by every stage of a refresh (resolve,
 * detect, plan, read, and the target's commits), bounded together by {@value #BYTES_CONFIG}: half
 * for manifests and manifest lists, in Iceberg's own manifest cache ({@code
 * io.manifest.cache-enabled}, one per catalog's {@code FileIO}, which {@code ManifestFiles} and
 * {@code ManifestLists} read through; the half is shared out between the catalogs), and half, in
 * one cache here, for the Parquet footers Floe's column reader reads, keyed by file path and
 * length, and for the content of files {@link CountingFileIO} serves without a request: table
 * metadata files read, and the metadata files, manifest lists and manifests Floe wrote itself
 * (which Iceberg reads back after a commit), keyed by location. A manifest is read once within the
 * bound, a footer and a metadata file too; a read on an object store costs a request of 10-50 ms
 * before its first byte, whatever its size.
 *
 * <p>Nothing cached here can be stale: each key names a file Iceberg never rewrites in place (a
 * metadata file's name carries a UUID or a version that a commit claims once); which metadata file
 * is current is still asked of the catalog at every load.
 */
public final class FileCaches {

  /** The key of the caches' size, in bytes. */
  public static final String BYTES_CONFIG = "floe.cache.bytes";

  /** The caches' size unless configured: 64 MiB. */
  public static final long DEFAULT_BYTES = 64L * 1024 * 1024;

  /** Iceberg's limit of one cached manifest, kept when the share is larger. */
  private static final long MAX_MANIFEST_BYTES = 8L * 1024 * 1024;

  /** The heap a cached file's content takes beyond its bytes: key, array header, entry. */
  private static final int CONTENT_OVERHEAD = 256;

  // Footers (FooterKey -> ParquetMetadata) and file contents (ContentKey -> byte[]) share one
  // bound, so that neither kind's share is fixed in advance.
  private static volatile Cache<Object, Object> files = newCache(DEFAULT_BYTES);
  private static volatile long contentLimit = contentLimit(DEFAULT_BYTES);

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
   * The properties of one of {@code catalogs} catalogs with Iceberg's manifest cache on and given
   * its share of {@code bytes}, entries kept until the cache is full (manifests never change): a
   * catalog configured with any of the cache's properties keeps its own.
   */
  public static Map<String, String> catalogProperties(
      Map<String, String> properties, long bytes, int catalogs) {
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

  /** The properties of a process's only catalog with Iceberg's manifest cache on. */
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

  /** The cached content of the file at {@code location}, or null. */
  static byte[] content(String location) {
    return files.getIfPresent(new ContentKey(location)) instanceof byte[] bytes ? bytes : null;
  }

  /** Caches {@code bytes} as the content of the file at each of {@code locations}. */
  static void putContent(byte[] bytes, String... locations) {
    if (bytes.length <= contentLimit) {
      Cache<Object, Object> cache = files;
      for (String location : locations) {
        cache.put(new ContentKey(location), bytes);
      }
    }
  }

  /** Forgets the content of the file at {@code location}: it is being written or was deleted. */
  static void invalidateContent(String location) {
    files.invalidate(new ContentKey(location));
  }

  /**
   * The largest file whose content is cached: Iceberg's limit of one cached manifest, or the
   * cache's half when smaller (0 when the caches are off).
   */
  static long contentLimit() {
    return contentLimit;
  }

  private static long contentLimit(long bytes) {
    return Math.min(MAX_MANIFEST_BYTES, bytes / 2);
  }

  private static Cache<Object, Object> newCache(long bytes) {
    return Caffeine.newBuilder()
        .maximumWeight(Math.max(1, bytes / 2))
        .weigher((Object key, Object value) -> weightOf(value))
        .build();
  }

  private static int weightOf(Object value) {
    return value instanceof byte[] bytes
        ? bytes.length + CONTENT_OVERHEAD
        : weight((ParquetMetadata) value);
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
}
