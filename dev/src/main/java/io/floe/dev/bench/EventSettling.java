package io.floe.dev.bench;

import java.util.List;

/**
 * When an event of the failover scenario is over, decided from what the tables show: every running
 * instance has been ready, and every view has been current for {@code settled} since the event
 * began. A view is behind while a source commit waits longer than {@code current} for it, and it
 * has not caught up before it has reflected a commit made since the event began: a view that
 * stalled at the event reflects nothing, and its first commits of the event are younger than {@code
 * current} for a while, so without that rule a stall shorter than {@code current} plus the settling
 * time passed as no stall at all (the kill of the instance owning every view read as current again
 * at once, on a loaded machine whose steady lag put {@code current} at 9.9 s).
 */
final class EventSettling {

  /** What the tables show of one view: when the source committed, and when each was reflected. */
  record ViewProgress(String view, List<Long> commits, List<long[]> reflections) {}

  /**
   * The verdict at one look.
   *
   * @param settled whether the event is over
   * @param lastBehind the last moment a view was more than {@code current} behind, or {@link
   *     Long#MIN_VALUE} when none was
   * @param behind why it is not over, when a view is the reason
   */
  record Verdict(boolean settled, long lastBehind, String behind) {}

  private EventSettling() {}

  /**
   * @param now the time of this look
   * @param reference when the event's clock started (a new process's start, or the kill)
   * @param readyAt when every running instance was first seen ready since the event, or {@link
   *     Long#MAX_VALUE} while one is not
   * @param current how long a commit may wait for a view that is current
   * @param settled how long every view must stay current
   * @param views each view's commits since the event began and their reflections, in commit order
   */
  static Verdict judge(
      long now,
      long reference,
      long readyAt,
      long current,
      long settled,
      List<ViewProgress> views) {
    long lastBehind = Long.MIN_VALUE;
    String behind = null;
    for (ViewProgress view : views) {
      for (long[] r : view.reflections()) {
        if (r[1] - r[0] > current && r[1] > lastBehind) {
          lastBehind = r[1];
        }
      }
      int reflected = view.reflections().size();
      if (view.commits().size() > reflected && now - view.commits().get(reflected) > current) {
        lastBehind = now;
        behind =
            view.view() + " is " + (now - view.commits().get(reflected)) / 1000.0 + " s behind";
      } else if (reflected == 0) {
        lastBehind = now;
        behind = view.view() + " has reflected no source commit made since the event began";
      }
    }
    long since = Math.max(Math.max(lastBehind, reference), readyAt);
    boolean over = readyAt != Long.MAX_VALUE && now - since >= settled;
    return new Verdict(over, lastBehind, over ? null : behind);
  }
}
