package io.floe.topology.iceberg;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;

/**
 * A remote store as Floe's reads see one, over local files: a table whose location names S3 (so
 * that {@link StorageKind#of} says remote) and a {@link GatedFileIO} that holds manifest requests
 * in flight, as a slow store does.
 */
public final class RemoteStore {

  private RemoteStore() {}

  /**
   * The properties of a catalog over the same tables as {@code lake}'s, with Floe's counting FileIO
   * over a store that can hold requests ({@link GatedFileIO}).
   */
  public static Map<String, String> gated(Map<String, String> lake) {
    Map<String, String> gated = new HashMap<>(lake);
    gated.put(CatalogProperties.FILE_IO_IMPL, GatedFileIO.class.getName());
    return CountingFileIO.install(gated);
  }

  /** What work on a remote store saw: the manifest reads in flight at once, and its result. */
  public record Held<T>(int inFlight, T result) {}

  /**
   * {@code table} as Floe sees a table on a remote store: its location names an S3 bucket, its
   * files and FileIO stay what they are.
   */
  public static Table remote(Table table) {
    return new BaseTable(((HasTableOperations) table).operations(), table.name()) {
      @Override
      public String location() {
        return "s3://remote-store/" + table.name();
      }
    };
  }

  /**
   * Runs {@code work} on a thread of its own while every manifest request through {@link
   * GatedFileIO} is held, until two are in flight at once (or 10 s passed); then releases them and
   * waits for the work's result.
   */
  public static <T> Held<T> holdingManifests(Supplier<T> work) throws InterruptedException {
    GatedFileIO.hold(OpenCountingFileIO::isManifest);
    AtomicReference<T> result = new AtomicReference<>();
    Thread working = new Thread(() -> result.set(work.get()));
    int inFlight;
    try {
      working.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (GatedFileIO.opens() < 2 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      inFlight = GatedFileIO.opens();
    } finally {
      GatedFileIO.release();
      working.join(30_000);
    }
    return new Held<>(inFlight, result.get());
  }
}
