package io.floe.app.service;

import io.floe.app.config.CatalogConfig;
import io.floe.topology.view.ViewsFile;
import io.floe.topology.view.ViewsFileException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-publishes the views file when it changes, without a restart. A file that does not parse is
 * reported and ignored; the views published before stay in force.
 */
final class ViewsFileWatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ViewsFileWatcher.class);

  private final Path file;
  private final ViewsPublisher publisher;
  private final CatalogConfig catalogs;
  private final ScheduledExecutorService timer;
  private FileTime seen;

  ViewsFileWatcher(Path file, ViewsPublisher publisher, CatalogConfig catalogs) {
    this.file = file;
    this.publisher = publisher;
    this.catalogs = catalogs;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "floe-views-file");
              thread.setDaemon(true);
              return thread;
            });
    this.seen = modified();
  }

  void start(Duration interval) {
    timer.scheduleWithFixedDelay(
        this::check, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void check() {
    FileTime now = modified();
    if (now == null || now.equals(seen)) {
      return;
    }
    seen = now;
    try {
      ViewsPublisher.Result result = publisher.publish(ViewsFile.load(file), catalogs);
      LOG.info(
          "Views file {} changed: published {}, deleted {}, rejected {}",
          file,
          result.published(),
          result.deleted(),
          result.rejected().size());
    } catch (ViewsFileException e) {
      LOG.error(
          "Views file {} changed but cannot be read; keeping the current views:\n{}",
          file,
          e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.error("Cannot publish the views of {}", file, e);
    }
  }

  private FileTime modified() {
    try {
      return Files.getLastModifiedTime(file);
    } catch (IOException e) {
      return null;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
