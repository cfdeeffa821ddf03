package io.floe.topology.maintain;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When the refresh of each view with pending changes is due, so that a tick looks only at those
 * (not at every state in the store), and starts the longest waiting first.
 */
public final class DueViews {

  private final Map<String, Long> due = new HashMap<>();

  /** Records when the refresh of {@code view} is due, as its state says. */
  public void update(String view, ViewState state) {
    Long at = state.dueAt();
    if (at == null) {
      due.remove(view);
    } else {
      due.put(view, at);
    }
  }

  /** Forgets {@code view}. */
  public void remove(String view) {
    due.remove(view);
  }

  /** The views whose refresh is due by {@code now}, the longest waiting first. */
  public List<String> dueBy(long now) {
    return due.entrySet().stream()
        .filter(entry -> entry.getValue() <= now)
        .sorted(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .toList();
  }
}
