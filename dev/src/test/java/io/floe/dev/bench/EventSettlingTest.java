package io.floe.dev.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

class EventSettlingTest {

  private static final long CURRENT = 9_917;
  private static final long SETTLED = 10_000;
  private static final long EVENT = 1_000_000;

  /** When the event's clock starts: the kill returned. */
  private static final long KILLED = EVENT + 600;

  /** A commit every 500 ms from 1.5 s after the event on (as the bench's writer made), to until. */
  private static List<Long> commitsUntil(long until) {
    List<Long> commits = new ArrayList<>();
    for (long t = EVENT + 1_500; t <= until; t += 500) {
      commits.add(t);
    }
    return commits;
  }

  /** Each commit with the time {@code at} says the view reflected it. */
  private static List<long[]> reflected(List<Long> commits, LongUnaryOperator at) {
    List<long[]> reflections = new ArrayList<>();
    for (long commit : commits) {
      reflections.add(new long[] {commit, at.applyAsLong(commit)});
    }
    return reflections;
  }

  /**
   * The verdict at {@code now} on the event (the kill returned at KILLED, the survivor ready 100 ms
   * after the event) of the one view weekly, with its source's commits and their reflections.
   */
  private static EventSettling.Verdict judge(
      long now, List<Long> commits, List<long[]> reflections) {
    return EventSettling.judge(
        now,
        KILLED,
        EVENT + 100,
        CURRENT,
        SETTLED,
        List.of(new EventSettling.ViewProgress("weekly", commits, reflections)));
  }

  @Test
  void shouldNotSettleWhileAViewHasReflectedNothingSinceTheEvent() {
    // Given: the instance owning every view is killed; the survivor is ready at once, and no view
    // reflects any commit in the SETTLED that follows the kill, the oldest of which waits 9.2 s,
    // less than CURRENT (as in a bench run whose steady lag put CURRENT at 9.9 s)
    long now = KILLED + SETTLED + 100;
    List<Long> commits = commitsUntil(now);

    // When
    EventSettling.Verdict verdict = judge(now, commits, List.of());

    // Then
    assertThat(verdict.settled()).isFalse();
    assertThat(verdict.lastBehind()).isEqualTo(now);
    assertThat(verdict.behind())
        .isEqualTo("weekly has reflected no source commit made since the event began");
  }

  @Test
  void shouldCountTheStallOnceTheViewCatchesUp() {
    // Given: the same stall, over 25 s after the kill: the commits of the first 13 s are reflected
    // at EVENT + 25 s, one target commit covering them all
    long caughtUp = EVENT + 25_000;
    List<Long> commits = commitsUntil(EVENT + 13_000);

    // When: 10 s later, with nothing behind since
    EventSettling.Verdict verdict =
        judge(caughtUp + SETTLED, commits, reflected(commits, commit -> caughtUp));

    // Then: over, and current again when the view caught up
    assertThat(verdict.settled()).isTrue();
    assertThat(verdict.lastBehind()).isEqualTo(caughtUp);
  }

  @Test
  void shouldSettleAViewThatNeverFellBehind() {
    // Given: every commit since the event reflected within a second
    long now = EVENT + 12_000;
    List<Long> commits = commitsUntil(now - 1_000);

    // When
    EventSettling.Verdict verdict = judge(now, commits, reflected(commits, commit -> commit + 900));

    // Then
    assertThat(verdict.settled()).isTrue();
    assertThat(verdict.lastBehind()).isEqualTo(Long.MIN_VALUE);
  }
}
