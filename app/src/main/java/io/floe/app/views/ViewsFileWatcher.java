package io.floe.app.views;

import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.util.ThreadPools;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-publishes the views file when it changes, without a restart.
 *
 * <p>Editors, {@code kubectl cp} and configuration tools do not always replace a file atomically:
 * between two reads the file may be empty, or cut short anywhere, even between two views, where it
 * is still valid YAML and publishing it would delete the views after the cut. So the watcher
 * publishes a content only once it has stood still: two consecutive reads, one reload interval
 * apart, must return the same text. A change therefore takes effect after one to two intervals. A
 * settled content that is not a views file (an empty file included; see {@link ViewsFile#parse}) is
 * reported once at ERROR and changes nothing: the views published before stay in force. Only an
 * explicit {@code views: []} removes them all.
 *
 * <p>Comparing contents rather than modification times also catches a change that kept the time (a
 * coarse clock, a tool that preserves it).
 */
public final class ViewsFileWatcher implements AutoCloseable {

  /** Publishes the views of the file: {@link ViewsPublisher}. */
  @FunctionalInterface
  public interface Publisher {
    ViewsPublisher.Result publish(List<ViewDefinition> views) throws InterruptedException;
  }

  private static final Logger LOG = LoggerFactory.getLogger(ViewsFileWatcher.class);

  /** One read of the file: its text, or why it could not be read. */
  private record Content(String text, String unreadable) {}

  private final Path file;
  private final Publisher publisher;
  private final ScheduledExecutorService timer;

  /** The content whose views are in force. */
  private Content published;

  /** A content found unusable and reported, so that it is reported once. */
  private Content reported;

  /** The content of the previous read, when it was neither of the above. */
  private Content candidate;

  /**
   * @param published the text of the file whose views were published at start-up
   */
  public ViewsFileWatcher(Path file, String published, Publisher publisher) {
    this.file = file;
    this.publisher = publisher;
    this.published = new Content(published, null);
    this.timer = ThreadPools.newScheduledPool("floe-views-file", 1);
  }

  public void start(Duration interval) {
    timer.scheduleWithFixedDelay(
        this::check, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** One look at the file, every interval. */
  void check() {
    Content now = read();
    if (now.equals(published)) {
      // Back to the views in force (an editor's save completed): a later breakage is news again.
      candidate = null;
      reported = null;
      return;
    }
    if (now.equals(reported)) {
      candidate = null;
      return;
    }
    if (!now.equals(candidate)) {
      // Changed since the last read, perhaps still being written: look again next interval.
      candidate = now;
      return;
    }
    candidate = null;
    if (now.unreadable() != null) {
      LOG.error("{}; keeping the current views", now.unreadable());
      reported = now;
      return;
    }
    List<ViewDefinition> views;
    try {
      views = ViewsFile.parse(file.toString(), now.text());
    } catch (ViewsFileException e) {
      LOG.error(
          "Views file {} changed but cannot be read as views; keeping the current views:\n{}",
          file,
          e.getMessage());
      reported = now;
      return;
    }
    try {
      ViewsPublisher.Result result = publisher.publish(views);
      published = now;
      reported = null;
      if (views.isEmpty()) {
        LOG.warn(
            "Views file {} declares no views (views: []): removed the {} views it had published {}",
            file,
            result.deleted().size(),
            result.deleted());
      } else {
        LOG.info(
            "Views file {} changed: published {}, deleted {}, rejected {}",
            file,
            result.published(),
            result.deleted(),
            result.rejected().size());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // Still the candidate: the next read that finds it again retries.
      candidate = now;
      LOG.error("Cannot publish the views of {}; trying again in one interval", file, e);
    }
  }

  private Content read() {
    try {
      return new Content(ViewsFile.read(file), null);
    } catch (ViewsFileException e) {
      return new Content(null, e.getMessage());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
