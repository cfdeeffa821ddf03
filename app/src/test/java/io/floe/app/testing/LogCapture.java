package io.floe.app.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Everything logged while it is open, laid out as Floe's log writes it (with the masking converters
 * {@code logback.xml} registers), stack traces included: for tests of what reaches the log. Closing
 * it restores the levels it changed.
 */
public final class LogCapture implements AutoCloseable {

  private final List<String> lines = new ArrayList<>();
  private final Map<Logger, Level> levels = new HashMap<>();
  private final Logger root;
  private final PatternLayout layout = new PatternLayout();
  private final AppenderBase<ILoggingEvent> appender =
      new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
          String line = layout.doLayout(event).stripTrailing();
          synchronized (lines) {
            lines.add(line);
          }
        }
      };

  private LogCapture(Level level, List<String> loggers) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    layout.setContext(context);
    layout.setPattern("%level %logger - %maskedMsg%n%maskedEx");
    layout.start();
    root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    appender.setContext(context);
    appender.start();
    root.addAppender(appender);
    for (String name : loggers) {
      Logger logger = context.getLogger(name);
      levels.put(logger, logger.getLevel());
      logger.setLevel(level);
    }
  }

  /** Captures what Floe logs at INFO and above, and WARN and above from the rest. */
  public static LogCapture floe() {
    return new LogCapture(Level.INFO, List.of("io.floe"));
  }

  /**
   * Captures what every logger writes at {@code level} and above, whatever the configuration says
   * of it, including the libraries (Kafka, Iceberg, Jetty) that the test configuration quiets.
   */
  public static LogCapture everything(Level level) {
    return new LogCapture(
        level,
        List.of(
            org.slf4j.Logger.ROOT_LOGGER_NAME,
            "io.floe",
            "org.apache.kafka",
            "org.apache.kafka.streams.StreamsConfig",
            "org.apache.kafka.clients.NetworkClient",
            "org.apache.kafka.controller",
            "org.apache.kafka.streams.processor.internals.StateDirectory",
            "org.apache.iceberg",
            "org.apache.iceberg.ManifestReader",
            "kafka"));
  }

  /** The lines logged so far. */
  public List<String> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  /** The whole log so far, one line per event. */
  public String text() {
    return String.join("\n", lines());
  }

  @Override
  public void close() {
    root.detachAppender(appender);
    appender.stop();
    levels.forEach(Logger::setLevel);
  }
}
