package io.floe.topology.processor;

import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.RefreshExecutor;
import io.floe.topology.view.ViewIndex;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.iceberg.catalog.Catalog;

/**
 * What the topology's processors work with, shared by every stream thread.
 *
 * @param catalogs the Iceberg catalog of each catalog name in view table names
 * @param views the index of the views in force, which the topology keeps equal to floe.views
 * @param io the executor of catalog and manifest reads (snapshot walks, detection, pins), so that
 *     no stream thread waits for Iceberg
 * @param refreshes runs refreshes on Floe's own threads
 * @param metrics what the topology reports as it works
 * @param globalDeadLetters where the global views processor sends the records of floe.views that do
 *     not decode: the global thread has no producer of its own
 * @param manifests where detection reads the manifests of a table on a remote store ahead of its
 *     walk ({@link ManifestWork#readAhead}); {@link ManifestWork#LOCAL_READS} when null
 */
public record TopologyServices(
    Function<String, Catalog> catalogs,
    ViewIndex views,
    Executor io,
    RefreshExecutor refreshes,
    FloeMetrics metrics,
    DeadLetterSink globalDeadLetters,
    ManifestWork manifests) {

  public TopologyServices {
    Objects.requireNonNull(catalogs, "catalogs");
    Objects.requireNonNull(views, "views");
    Objects.requireNonNull(io, "io");
    Objects.requireNonNull(refreshes, "refreshes");
    metrics = metrics == null ? FloeMetrics.NONE : metrics;
    globalDeadLetters = globalDeadLetters == null ? DeadLetterSink.NONE : globalDeadLetters;
    manifests = manifests == null ? ManifestWork.LOCAL_READS : manifests;
  }

  /** Services whose dead letters of floe.views are only logged and counted. */
  public TopologyServices(
      Function<String, Catalog> catalogs,
      ViewIndex views,
      Executor io,
      RefreshExecutor refreshes,
      FloeMetrics metrics) {
    this(catalogs, views, io, refreshes, metrics, DeadLetterSink.NONE, ManifestWork.LOCAL_READS);
  }
}
