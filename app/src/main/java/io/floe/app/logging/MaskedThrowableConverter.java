package io.floe.app.logging;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.floe.app.config.Secrets;

/**
 * Logback's {@code %ex} (stack traces, causes included) with the user-info of every URI and
 * secret-looking query parameters masked ({@link Secrets#text}). Registered in {@code logback.xml}
 * as {@code %maskedEx}.
 */
public final class MaskedThrowableConverter extends ThrowableProxyConverter {

  @Override
  public String convert(ILoggingEvent event) {
    return Secrets.text(super.convert(event));
  }
}
