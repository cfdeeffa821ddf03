package io.floe.dev.bench;

import io.floe.testing.Jdks;
import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Scenario {@code failover}: what restarts, deploys and lost instances cost in freshness. Two
 * instances of Floe, each {@code floe run} in a JVM of its own on Floe's defaults, started as the
 * service image starts it (Java 25 and the ahead-of-time cache of a training run), maintain the
 * freshness scenario's three views while the source commits every 500 ms; then, one after the
 * other: a clean restart of one instance (SIGTERM, started again), a {@code kill -9} and restart, a
 * {@code kill -9} with no restart (the survivor takes over), a rolling restart of every instance
 * (each started again and ready before the next goes, as a StatefulSet rolls), and a restart with
 * the state directory deleted. For each event: the lag of the source commits made from the event
 * until it is over, and the time until every view is current again. Then once more with static
 * membership ({@code group.instance.id} per instance), unless {@code --quick}. Runs only when
 * named.
 */
final class FailoverScenario {

  static final String NAME = "failover";
  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final Duration COMMIT_INTERVAL = Duration.ofMillis(500);
  private static final int INSTANCES = 2;

  /**
   * A view is current while it reflects every source commit within this: four commit intervals,
   * above the steady state's maximum lag, so that an ordinary refresh never counts as stale.
   */
  private static final Duration CURRENT = Duration.ofSeconds(2);

  /** An event is over once every instance is ready and every view stayed current this long. */
  private static final Duration SETTLED = Duration.ofSeconds(10);

  private static final Duration EVENT_TIMEOUT = Duration.ofSeconds(120);

  /** How long a rolling restart waits for each restarted instance to be ready. */
  private static final Duration ROLL_READY_TIMEOUT = Duration.ofSeconds(240);

  private static final Duration STEADY = Duration.ofSeconds(15);

  /** Floe's defaults: users run the defaults, so the bench never tunes the schedule. */
  private static final String REFRESH = "{}";

  /** What happens to the instances, and what the issue asks of it. */
  private enum Event {
    CLEAN_RESTART("clean restart", "the new process's start", 10),
    KILL_RESTART("kill -9 and restart", "the new process's start", 10),
    KILL("kill -9, survivor takes over", "the kill", 15),
    ROLLING_RESTART("rolling restart of every instance", "the last new process's start", 0),
    STATE_LOST("restart with the state directory deleted", "the new process's start", 20);

    final String label;
    final String from;
    final int goalSeconds;

    Event(String label, String from, int goalSeconds) {
      this.label = label;
      this.from = from;
      this.goalSeconds = goalSeconds;
    }
  }

  /** The rolling restart's goal: lag p99 during the roll. */
  private static final double ROLLING_P99_GOAL_SECONDS = 5;

  private FailoverScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                INSTANCES
                    + " instances (floe run, a JVM each, Floe's defaults) maintain three views"
                    + " under a source commit every "
                    + COMMIT_INTERVAL.toMillis()
                    + " ms; a clean restart, a kill -9 and restart, a kill -9 with no restart, a"
                    + " rolling restart and a restart without its state directory, in turn: lag"
                    + " of the commits made during each, and the time until every view is"
                    + " current again."
                    + (ctx.quick() ? "" : " Then the same with static membership."))
            .parameter("instances", INSTANCES)
            .parameter("commitIntervalMs", COMMIT_INTERVAL.toMillis())
            .parameter("settledSeconds", SETTLED.toSeconds())
            .parameter("viewRefresh", REFRESH)
            .parameter("jvm", String.join(" ", FloeProcess.JVM_OPTIONS));
    FloeProcess.Launch launch = launch(ctx, result);
    result.parameter("instanceJvm", launch.description());
    measure(ctx, "defaults", false, launch, result);
    if (!ctx.quick()) {
      measure(ctx, "static", true, launch, result);
    }
    result.note(
        "Lags are those of the source commits made from the event until it is over (every"
            + " instance ready, every view current for "
            + SETTLED.toSeconds()
            + " s), all views together; a view is current while it reflects each commit within "
            + CURRENT.toSeconds()
            + " s or the steady window's max lag if longer (currentWithinSeconds), and 'current"
            + " again' is the last moment a view was more than that behind; 'ready' is when every"
            + " running instance's /health/ready first answered 200."
            + " Baselines: the same lag in a steady window before the events; the issue's goal"
            + " for times. Each instance's log (timestamps of rebalances, restores, refreshes)"
            + " is <instance>.log in the scenario's directory.");
    return result;
  }

  /**
   * The instances start as the service image starts Floe: on a Java 25 from an ahead-of-time cache
   * trained by the image's training run ({@link AotTraining}) on the bench's class path, once for
   * the scenario. Without a Java 25 they run on the bench's JVM with no cache, and a note says so:
   * their starts then cost more than the image's.
   */
  private static FloeProcess.Launch launch(BenchContext ctx, ScenarioResult result)
      throws Exception {
    Path java25 = Jdks.java25();
    if (java25 == null) {
      result.note("no Java 25 for the image's ahead-of-time cache: " + Jdks.noJava25());
      return FloeProcess.Launch.plain();
    }
    Path dir = ctx.dir(NAME + "-aot");
    Path cache = dir.resolve("floe-failover.aot");
    ctx.progress(NAME, "training the ahead-of-time cache on " + java25 + ", as the image's build");
    AotTraining.train(
        java25,
        System.getProperty("java.class.path"),
        cache,
        dir.resolve("aot-training"),
        FloeProcess.JVM_OPTIONS);
    return new FloeProcess.Launch(
        java25,
        List.of("-XX:AOTCache=" + cache),
        java25 + " with the ahead-of-time cache of a training run, as the image");
  }

  private static void measure(
      BenchContext ctx,
      String membership,
      boolean staticMembers,
      FloeProcess.Launch launch,
      ScenarioResult result)
      throws Exception {
    StringBuilder yaml = new StringBuilder("views:\n");
    for (String[] v : FreshnessScenario.VIEWS) {
      yaml.append(BenchLake.yamlEntry(v[0], v[1], "lake.analytics." + v[0], REFRESH));
    }
    List<FloeProcess> instances = new ArrayList<>();
    ScheduledExecutorService writer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "bench-writer");
              thread.setDaemon(true);
              return thread;
            });
    try (ServiceBench bench =
        ServiceBench.prepare(ctx.dir(NAME + "-" + membership), yaml.toString(), Map.of())) {
      Table trades =
          bench
              .catalog()
              .buildTable(TableIdentifier.of("market", "trades"), Trades.SCHEMA)
              .withPartitionSpec(Trades.BY_DAY)
              .withProperty("format-version", "2")
              .create();
      Trades generator = new Trades(1);
      Instant now = Instant.now();
      TableWrites.append(trades, generator.between(now.minus(Duration.ofDays(1)), now, 20_000));
      for (int i = 0; i < INSTANCES; i++) {
        Map<String, String> settings = new HashMap<>();
        if (staticMembers) {
          settings.put("group.instance.id", "floe-" + i);
        }
        instances.add(bench.process("floe-" + i, settings, launch));
      }
      progress(ctx, membership, "starting " + INSTANCES + " instances on a day of history");
      for (FloeProcess instance : instances) {
        instance.start();
      }
      bench.announce(TRADES, trades);
      Probe probe = new Probe(bench, trades, instances);
      if (!probe.awaitCurrent(Duration.ofSeconds(180))) {
        throw new IllegalStateException("the views did not finish their first refresh");
      }
      if (!probe.awaitReady(Duration.ofSeconds(60))) {
        throw new IllegalStateException("the instances were not ready within 60 s");
      }

      // The writer has a table of its own: Iceberg's Table is not shared across threads.
      Table writes = bench.load(TRADES);
      AtomicReference<Exception> writeFailure = new AtomicReference<>();
      writer.scheduleAtFixedRate(
          () -> {
            try {
              Instant at = Instant.now();
              TableWrites.append(writes, generator.between(at.minusMillis(200), at, 10));
              bench.announce(TRADES, writes);
            } catch (Exception e) {
              writeFailure.compareAndSet(null, e);
            }
          },
          0,
          COMMIT_INTERVAL.toMillis(),
          TimeUnit.MILLISECONDS);
      String prefix = membership + ": ";

      progress(ctx, membership, "steady state for " + STEADY.toSeconds() + " s");
      long steadyFrom = System.currentTimeMillis();
      Thread.sleep(STEADY.toMillis());
      List<Long> steady = probe.lags(steadyFrom, System.currentTimeMillis());
      double[] steadyQ = quantiles(steady);
      result.figure(Figure.alone(prefix + "steady lag p50", "s", steadyQ[0]));
      result.figure(Figure.alone(prefix + "steady lag p99", "s", steadyQ[1]));
      result.figure(Figure.alone(prefix + "steady lag max", "s", steadyQ[2]));
      // A loaded machine's steady lag can exceed CURRENT: then behind means behind its own
      // steady state.
      Duration current =
          Duration.ofMillis(Math.max(CURRENT.toMillis(), (long) (steadyQ[2] * 1000)));
      result.parameter("currentWithinSeconds@" + membership, current.toMillis() / 1000.0);

      FloeProcess first = instances.get(0);
      FloeProcess second = instances.get(1);
      for (Event event : Event.values()) {
        progress(ctx, membership, event.label + " begins");
        long from = System.currentTimeMillis();
        long reference;
        switch (event) {
          case CLEAN_RESTART -> {
            first.stop();
            reference = first.start();
          }
          case KILL_RESTART -> {
            first.kill();
            reference = first.start();
          }
          case KILL -> {
            second.kill();
            reference = System.currentTimeMillis();
          }
          case ROLLING_RESTART -> {
            reference = from;
            for (FloeProcess instance : instances) {
              instance.stop();
              reference = instance.start();
              // As a StatefulSet waits for readiness however long it takes: at a load of 34 on
              // 2 cores one start took more than 90 s, which ended the scenario without figures.
              if (!probe.awaitReady(ROLL_READY_TIMEOUT)) {
                throw new IllegalStateException(
                    instance.name()
                        + " was not ready within "
                        + ROLL_READY_TIMEOUT.toSeconds()
                        + " s");
              }
              progress(ctx, membership, instance.name() + " restarted and ready");
            }
          }
          case STATE_LOST -> {
            first.stop();
            first.deleteState();
            reference = first.start();
          }
          default -> throw new IllegalArgumentException(event.name());
        }
        progress(ctx, membership, event.label + ": waiting until every view is current again");
        Probe.Outcome outcome = probe.awaitSettled(from, reference, current, EVENT_TIMEOUT);
        double[] q = quantiles(outcome.lags());
        String what = prefix + event.label + ": ";
        String[] names = {"lag p50", "lag p99", "lag max"};
        for (int i = 0; i < names.length; i++) {
          result.figure(
              new Figure(what + names[i], "s", q[i], steadyQ[i], "steady state, same run", true));
        }
        String currentAgain = what + "current again, from " + event.from;
        result.figure(
            event.goalSeconds > 0
                ? new Figure(
                    currentAgain,
                    "s",
                    outcome.currentAgainSeconds(),
                    (double) event.goalSeconds,
                    "the issue's goal",
                    true)
                : Figure.alone(currentAgain, "s", outcome.currentAgainSeconds()));
        if (event != Event.KILL) {
          result.figure(
              Figure.alone(what + "ready, from " + event.from, "s", outcome.readySeconds()));
          result.figure(
              Figure.alone(
                  what + "current again, from the event", "s", outcome.fromEventSeconds()));
        }
        String goal =
            event == Event.ROLLING_RESTART
                ? "lag p99 < "
                    + (int) ROLLING_P99_GOAL_SECONDS
                    + " s: "
                    + met(q[1] < ROLLING_P99_GOAL_SECONDS)
                : "current within "
                    + event.goalSeconds
                    + " s of "
                    + event.from
                    + ": "
                    + met(outcome.currentAgainSeconds() <= event.goalSeconds);
        result.note(
            what
                + (outcome.settled()
                    ? ""
                    : "NOT SETTLED within the wait (" + outcome.unsettledBecause() + "); ")
                + goal);
        progress(ctx, membership, event.label + " over: " + goal);
        if (event == Event.KILL) {
          // The next events need both instances again: a restart, not measured.
          second.start();
          if (!probe
              .awaitSettled(System.currentTimeMillis(), 0, current, EVENT_TIMEOUT)
              .settled()) {
            result.note(prefix + "the killed instance's return did not settle within the wait");
          }
        }
      }

      writer.shutdown();
      writer.awaitTermination(30, TimeUnit.SECONDS);
      if (writeFailure.get() != null) {
        result.note(prefix + "a source commit failed: " + writeFailure.get());
      }
      progress(ctx, membership, "source commits stopped; checking every view against the oracle");
      if (!bench.awaitCurrent(bench.views(), Duration.ofSeconds(120))) {
        result.note(
            prefix + "WRONG RESULT: the views were not current 120 s after the last commit");
      }
      trades.refresh();
      long snapshot = trades.currentSnapshot().snapshotId();
      for (ViewDefinition view : bench.views()) {
        Table target = bench.load(view.target());
        Oracle.difference(target, trades, trades.name(), snapshot, view.query())
            .ifPresentOrElse(
                d -> result.note(prefix + "WRONG RESULT of " + view.name() + ": " + d), () -> {});
        List<String> twice = appliedTwice(target);
        if (!twice.isEmpty()) {
          result.note(prefix + "WRONG RESULT: " + view.name() + " applied twice: " + twice);
        }
      }
      result.note(
          prefix
              + "every view equals the oracle and no refresh id was applied twice to a target"
              + " (unless noted above)");
    } finally {
      writer.shutdownNow();
      for (FloeProcess instance : instances) {
        instance.close();
      }
    }
  }

  /** Refresh ids committed to the target more than once (a chunk id counts as its own). */
  private static List<String> appliedTwice(Table target) {
    Set<String> seen = new HashSet<>();
    List<String> twice = new ArrayList<>();
    for (Snapshot s : target.snapshots()) {
      String id = s.summary().get(FloeProperties.REFRESH_ID);
      if (id != null && !seen.add(id)) {
        twice.add(id);
      }
    }
    return twice;
  }

  private static String met(boolean met) {
    return met ? "met" : "MISSED";
  }

  private static double[] quantiles(List<Long> lags) {
    return new double[] {
      Lags.quantileSeconds(lags, 0.5),
      Lags.quantileSeconds(lags, 0.99),
      Lags.quantileSeconds(lags, 1)
    };
  }

  private static void progress(BenchContext ctx, String membership, String message) {
    ctx.progress(
        NAME,
        LocalTime.now(ZoneId.systemDefault()).truncatedTo(ChronoUnit.MILLIS)
            + " "
            + membership
            + ": "
            + message);
  }

  /** Watches the instances and the views' targets from outside, as an operator would. */
  private static final class Probe {

    /** What an event cost. */
    record Outcome(
        boolean settled,
        String unsettledBecause,
        List<Long> lags,
        double currentAgainSeconds,
        double fromEventSeconds,
        double readySeconds) {}

    private final ServiceBench bench;
    private final Table source;
    private final List<FloeProcess> instances;
    private final List<Table> targets = new ArrayList<>();

    Probe(ServiceBench bench, Table source, List<FloeProcess> instances) {
      this.bench = bench;
      this.source = source;
      this.instances = instances;
    }

    /** The views' targets, loaded once they exist (Floe creates them at the first refresh). */
    private List<Table> targets() {
      if (targets.isEmpty()) {
        for (ViewDefinition view : bench.views()) {
          targets.add(bench.load(view.target()));
        }
      }
      return targets;
    }

    boolean awaitReady(Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        if (instances.stream().allMatch(FloeProcess::isReady)) {
          return true;
        }
        requireRunning();
        Thread.sleep(100);
      }
      return false;
    }

    boolean awaitCurrent(Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        if (bench.awaitCurrent(bench.views(), Duration.ofSeconds(1))) {
          return true;
        }
        requireRunning();
      }
      return false;
    }

    /** Every instance started is still running: one that ended by itself failed. */
    private void requireRunning() {
      for (FloeProcess instance : instances) {
        if (instance.hasEnded()) {
          throw new IllegalStateException(
              instance.name() + " ended by itself; see " + instance.log());
        }
      }
    }

    /** The lag of every source commit in {@code [from, to]} in every view, reflected or not. */
    List<Long> lags(long from, long to) {
      List<Long> lags = new ArrayList<>();
      for (Table target : targets()) {
        lags.addAll(Lags.of(source, target, from, to));
      }
      return lags;
    }

    /**
     * Waits until every running instance has been ready since the event and every view has been
     * current for {@link #SETTLED}, after the event that began at {@code from}; {@code reference}
     * is when the event's clock starts (a new process's start, or the kill). A view is behind while
     * a source commit waits longer than {@code current} for it.
     */
    Outcome awaitSettled(long from, long reference, Duration current, Duration timeout)
        throws InterruptedException {
      long deadline = System.currentTimeMillis() + timeout.toMillis();
      // Once seen ready, an instance stays counted ready: a probe that times out on a loaded
      // machine is not a restart.
      long readyAt = Long.MAX_VALUE;
      while (true) {
        long now = System.currentTimeMillis();
        if (readyAt == Long.MAX_VALUE
            && instances.stream().filter(FloeProcess::isAlive).allMatch(FloeProcess::isReady)) {
          readyAt = now;
        }
        List<Long> commits = Lags.commitTimes(source, from, now);
        List<EventSettling.ViewProgress> views = new ArrayList<>();
        for (int v = 0; v < targets().size(); v++) {
          views.add(
              new EventSettling.ViewProgress(
                  bench.views().get(v).name(),
                  commits,
                  Lags.reflections(source, targets().get(v), from, now)));
        }
        EventSettling.Verdict verdict =
            EventSettling.judge(
                now, reference, readyAt, current.toMillis(), SETTLED.toMillis(), views);
        long lastBehind = verdict.lastBehind();
        String behind = verdict.behind();
        boolean settled = verdict.settled();
        if (settled || now > deadline) {
          long currentAt = lastBehind == Long.MIN_VALUE ? from : lastBehind;
          String why =
              settled
                  ? null
                  : readyAt == Long.MAX_VALUE
                      ? "an instance is not ready"
                      : behind != null
                          ? behind
                          : "a view was more than "
                              + current.toMillis() / 1000.0
                              + " s behind within the last "
                              + SETTLED.toSeconds()
                              + " s";
          return new Outcome(
              settled,
              why,
              lags(from, now),
              Math.max(0, currentAt - reference) / 1000.0,
              Math.max(0, currentAt - from) / 1000.0,
              readyAt == Long.MAX_VALUE ? Double.NaN : Math.max(0, readyAt - reference) / 1000.0);
        }
        requireRunning();
        Thread.sleep(500);
      }
    }
  }
}
