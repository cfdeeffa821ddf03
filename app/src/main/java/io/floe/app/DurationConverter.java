package io.floe.app;

import io.floe.app.views.ViewsFile;
import java.time.Duration;
import picocli.CommandLine;

/** Parses command-line durations as views files write them: 500ms, 60s, 5m, 1h, 1d or ISO-8601. */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    Duration duration = ViewsFile.duration(value);
    if (duration == null) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration (try 60s, 5m or 1h)");
    }
    return duration;
  }
}
