package io.floe.app.service;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StartupPhasesTest {

  @Test
  void shouldSummariseThePhasesOnceWhenKafkaStreamsFirstRuns() {
    // Given a start-up that went through its phases and started Kafka Streams
    StartupPhases phases = new StartupPhases();
    phases.ended("topics");
    phases.streamsStarted("Kafka Streams start");
    phases.ended("views file");

    // When Kafka Streams runs, and later runs again after a rebalance
    String first = phases.running().orElseThrow();

    // Then the first time says what each phase cost, in the order they ended, and the CPU the
    // process has used, and the second is silent
    assertThat(first)
        .matches(
            "Floe ready \\d+ ms after the JVM started, \\d+ ms of CPU \\(\\d+ ms before the"
                + " service, \\d+ ms"
                + " starting it: topics \\d+ ms, Kafka Streams start \\d+ ms, views file \\d+ ms;"
                + " Kafka Streams to RUNNING \\d+ ms after its start\\)");
    assertThat(phases.running()).isEmpty();
  }

  @Test
  void shouldSayNothingWhenKafkaStreamsRunsBeforeTheServiceStartedIt() {
    // Given phases of a service that has not started Kafka Streams
    StartupPhases phases = new StartupPhases();
    phases.ended("topics");

    // When / Then
    assertThat(phases.running()).isEmpty();
  }
}
