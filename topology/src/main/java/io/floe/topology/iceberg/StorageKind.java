package io.floe.topology.iceberg;

import java.net.URI;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.Table;
import org.apache.iceberg.inmemory.InMemoryFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.util.ThreadPools;

/**
 * Where a table's files are, as far as the cost of a read goes: on a local disk, where a read costs
 * microseconds and Floe's reads are best done one after the other on few threads, or on a remote
 * store (S3, GCS, ADLS, HDFS), where each request waits 10-50 ms before its first byte and
 * independent reads are best overlapped on a pool sized for that latency rather than for the cores.
 * Decided by the table's {@code FileIO} and the scheme of its location (a {@code ResolvingFileIO}
 * or {@code HadoopFileIO} picks its store by scheme), never by how many manifests a table has.
 */
public enum StorageKind {
  LOCAL,
  REMOTE;

  /** Reads a refresh step keeps in flight at once on a remote store. */
  public static final int REMOTE_READS = 16;

  /** The name of the threads of {@link #remoteReads()}, a prefix of each one's. */
  static final String REMOTE_READS_THREADS = "floe-remote-reads";

  /** The FileIO classes of remote stores, by name: their modules need not be on the classpath. */
  private static final Set<String> REMOTE_FILE_IO =
      Set.of(
          "org.apache.iceberg.aws.s3.S3FileIO",
          "org.apache.iceberg.gcp.gcs.GCSFileIO",
          "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
          "org.apache.iceberg.aliyun.oss.OSSFileIO");

  /** Schemes of files on the local machine. */
  private static final Set<String> LOCAL_SCHEMES = Set.of("file");

  /** Where the files of {@code table} are. */
  public static StorageKind of(Table table) {
    return of(table.io(), table.location());
  }

  /**
   * Where the files under {@code location} are, read through {@code io}.
   *
   * @param location a table's location, or null when unknown
   */
  public static StorageKind of(FileIO io, String location) {
    if (io instanceof CountingFileIO counting) {
      return of(counting.delegate(), location);
    }
    if (io instanceof InMemoryFileIO) {
      return LOCAL;
    }
    if (io != null && REMOTE_FILE_IO.contains(io.getClass().getName())) {
      return REMOTE;
    }
    String scheme = scheme(location);
    return scheme == null || LOCAL_SCHEMES.contains(scheme) ? LOCAL : REMOTE;
  }

  /** Whether reads on this storage are overlapped on {@link #remoteReads()}. */
  public boolean isRemote() {
    return this == REMOTE;
  }

  /**
   * How many workers read and aggregate a refresh's source files at once: one per core on a local
   * disk, where the work is bound by the CPU; {@value #REMOTE_READS} at least on a remote store,
   * where each worker mostly waits for its requests.
   */
  public int scanParallelism() {
    int cores = Runtime.getRuntime().availableProcessors();
    return this == REMOTE ? Math.max(cores, REMOTE_READS) : cores;
  }

  /**
   * The pool that overlaps the reads of remote files (manifests of a scan or a commit, data files
   * of a recompute), of {@value #REMOTE_READS} threads whatever the cores: they wait, they do not
   * compute. Their requests count for the stage and refresh that handed them the work ({@link
   * RequestStage#propagating}).
   */
  public static ExecutorService remoteReads() {
    return RemoteReads.POOL;
  }

  private static String scheme(String location) {
    if (location == null) {
      return null;
    }
    try {
      String scheme = URI.create(location.replace(" ", "%20")).getScheme();
      return scheme == null ? null : scheme.toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      int colon = location.indexOf(':');
      return colon > 0 ? location.substring(0, colon).toLowerCase(Locale.ROOT) : null;
    }
  }

  /** Created on first use: a process on local files never starts its threads. */
  private static final class RemoteReads {
    static final ExecutorService POOL =
        ManifestWork.forwardingTo(
            RequestStage.propagating(
                ThreadPools.newExitingWorkerPool(REMOTE_READS_THREADS, REMOTE_READS)));
  }
}
