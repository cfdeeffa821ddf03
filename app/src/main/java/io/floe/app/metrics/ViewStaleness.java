package io.floe.app.metrics;

import io.floe.topology.maintain.ViewState;
import java.time.Duration;

/**
 * How stale a view is against its objective ({@code refresh.max_staleness}, or {@code
 * floe.refresh.max-staleness.ms} for a view that sets none): what the API, the UI and the {@code
 * floe_view_staleness_seconds} gauge say of it.
 *
 * @param stalenessMs time since the oldest source commit the target does not reflect, 0 when
 *     current
 * @param objectiveMs the view's staleness objective
 */
public record ViewStaleness(long stalenessMs, long objectiveMs) {

  /** The view of {@code state} at {@code now} (epoch millis). */
  public static ViewStaleness of(ViewState state, Duration defaultObjective, long now) {
    return new ViewStaleness(
        state.stalenessMs(now), state.view().maxStaleness(defaultObjective).toMillis());
  }

  /** Whether the view is over its objective. */
  public boolean isStale() {
    return stalenessMs > objectiveMs;
  }
}
