package io.floe.dev.bench;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.refresh.RefreshRequest;
import io.floe.topology.refresh.ViewRefresher;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.ViewDefinition;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;

/**
 * The polling baseline, iceberg-ivm's loop: every interval, for each view in turn, look at the
 * source's snapshots since the target's bookmark and recompute the buckets they touched. It uses
 * Floe's own refresh engine, so that only the trigger differs.
 */
final class Poller implements AutoCloseable {

  private final ViewRefresher refresher;
  private final ExecutorService scans = ViewScan.newExecutor();
  private final Function<String, Catalog> catalogs;
  private final List<ViewDefinition> views;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "bench-poller");
            thread.setDaemon(true);
            return thread;
          });
  private final AtomicLong polls = new AtomicLong();

  Poller(Function<String, Catalog> catalogs, List<ViewDefinition> views) {
    this.refresher = new ViewRefresher(catalogs, scans);
    this.catalogs = catalogs;
    this.views = views;
  }

  void start(Duration interval) {
    timer.scheduleAtFixedRate(
        this::poll, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** One poll of every view, now, on the caller's thread. */
  synchronized void poll() {
    for (ViewDefinition view : views) {
      try {
        CompiledView compiled = BenchLake.compiled(view);
        var source =
            catalogs.apply(compiled.source().catalog()).loadTable(compiled.source().identifier());
        Snapshot current = source.currentSnapshot();
        if (current == null) {
          continue;
        }
        refresher.refresh(
            new RefreshRequest(
                compiled,
                RefreshId.of(compiled.name(), compiled.version(), current.snapshotId()),
                null,
                null,
                new RefreshRequest.CatchUp(DirtyBuckets.none())),
            ViewRefresher.ProgressListener.NONE);
      } catch (RuntimeException e) {
        // A poller retries on its next tick.
      }
    }
    polls.incrementAndGet();
  }

  long polls() {
    return polls.get();
  }

  @Override
  public void close() {
    timer.shutdownNow();
    scans.shutdownNow();
    try {
      timer.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
