package io.floe.app.logging;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.floe.app.config.Secrets;

/**
 * Logback's {@code %msg} with the user-info of every URI and secret-looking query parameters masked
 * ({@link Secrets#text}): a last line of defence for messages Floe does not build itself, such as a
 * driver's that quotes its connection URI. Registered in {@code logback.xml} as {@code %maskedMsg}.
 */
public final class MaskedMessageConverter extends MessageConverter {

  @Override
  public String convert(ILoggingEvent event) {
    return Secrets.text(super.convert(event));
  }
}
