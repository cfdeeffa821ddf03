package io.floe.topology.bucket;

import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

/** The granularities property tests draw from: every date_trunc unit and strides of each kind. */
final class Granularities {

  static final List<Granularity> ALL;

  static {
    List<Granularity> all = new ArrayList<>(Granularity.UNITS);
    all.add(Granularity.clockStride(Granularity.Unit.MINUTE, 5));
    all.add(Granularity.clockStride(Granularity.Unit.MINUTE, 15));
    all.add(Granularity.clockStride(Granularity.Unit.HOUR, 6));
    all.add(Granularity.bin(Duration.ofMinutes(7)));
    all.add(Granularity.bin(Duration.ofMinutes(90)));
    all.add(Granularity.bin(Duration.ofHours(7)));
    all.add(Granularity.bin(Duration.ofDays(3)));
    all.add(Granularity.bin(Duration.ofHours(6), LocalDateTime.parse("2024-01-01T03:00:00")));
    all.add(Granularity.bin(Duration.ofMinutes(5), LocalDateTime.parse("1000-01-01T00:02:30")));
    ALL = List.copyOf(all);
  }

  private Granularities() {}
}
