package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.util.Tasks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The log of a task Iceberg's Tasks retries, captured from every logger of the process. */
class LoggedRetriesTest {

  private static final int ATTEMPTS = 3;

  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);

  @BeforeEach
  void captureLog() {
    log.start();
    root.addAppender(log);
  }

  @AfterEach
  void releaseLog() {
    root.detachAppender(log);
  }

  @Test
  void shouldLogEachRetryAsOneLineWithoutAStackWhenTheTaskThenSucceeds() {
    // Given a task that fails twice, then succeeds
    AtomicInteger runs = new AtomicInteger();

    // When Tasks tries it up to three times
    Tasks.foreach("lake.market.trades")
        .retry(ATTEMPTS - 1)
        .exponentialBackoff(0, 0, Long.MAX_VALUE, 1)
        .run(
            LoggedRetries.task(
                "read table lake.market.trades",
                ATTEMPTS,
                table -> {
                  if (runs.incrementAndGet() < ATTEMPTS) {
                    throw new IllegalStateException("catalog unavailable (" + runs.get() + ")");
                  }
                }));

    // Then each retry is one WARN line saying what, which attempt and why, and no stack is logged
    assertThat(runs).hasValue(ATTEMPTS);
    assertThat(log.list).allSatisfy(event -> assertThat(event.getThrowableProxy()).isNull());
    assertThat(log.list)
        .filteredOn(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "Cannot read table lake.market.trades (attempt 1 of 3), trying again:"
                + " java.lang.IllegalStateException: catalog unavailable (1)",
            "Cannot read table lake.market.trades (attempt 2 of 3), trying again:"
                + " java.lang.IllegalStateException: catalog unavailable (2)");
  }

  @Test
  void shouldLeaveTheLastFailureToTheCallerThatHandlesIt() {
    // Given a task that always fails
    Tasks.Task<String, RuntimeException> failing =
        LoggedRetries.task(
            "read table lake.market.trades",
            ATTEMPTS,
            table -> {
              throw new IllegalStateException("catalog unavailable");
            });

    // When Tasks gives up after three attempts, then the last failure is thrown, not logged
    assertThatThrownBy(
            () ->
                Tasks.foreach("lake.market.trades")
                    .retry(ATTEMPTS - 1)
                    .exponentialBackoff(0, 0, Long.MAX_VALUE, 1)
                    .run(failing))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("catalog unavailable");
    assertThat(log.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .noneMatch(message -> message.contains("attempt 3 of 3"))
        .hasSize(2);
  }
}
