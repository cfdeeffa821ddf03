package io.floe.topology.iceberg;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.util.Tasks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task for Iceberg's {@link Tasks} retries that tells of its own failed attempts: one WARN line
 * for each attempt that is tried again (what failed, attempt n of m, the exception's message), no
 * stack trace. Tasks itself logs a WARN with the whole stack before every retry, so a catalog that
 * is down for a minute fills the log with identical traces; Floe's logging configuration quiets
 * {@code org.apache.iceberg.util.Tasks} below ERROR, and the stack is logged once, by the caller
 * that handles the failure Tasks throws when it gives up.
 *
 * <p>For a task Tasks retries on every failure, {@code attempts} times in all ({@code
 * retry(attempts - 1)}, no {@code onlyRetryOn} or {@code stopRetryOn}): the last attempt's failure
 * is the one Tasks throws, and is not logged here.
 */
public final class LoggedRetries {

  private static final Logger LOG = LoggerFactory.getLogger(LoggedRetries.class);

  private LoggedRetries() {}

  /**
   * {@code task}, logging each of its failures but the last of {@code attempts}.
   *
   * @param what what the task does, as a message reads it: {@code "read table lake.db.t"}
   */
  public static <I, E extends Exception> Tasks.Task<I, E> task(
      String what, int attempts, Tasks.Task<I, E> task) {
    Map<I, Integer> tried = new ConcurrentHashMap<>();
    return item -> {
      int attempt = tried.merge(item, 1, Integer::sum);
      try {
        task.run(item);
      } catch (Exception e) {
        if (attempt < attempts) {
          LOG.warn(
              "Cannot {} (attempt {} of {}), trying again: {}",
              what,
              attempt,
              attempts,
              e.toString());
        }
        throw e;
      }
    };
  }
}
