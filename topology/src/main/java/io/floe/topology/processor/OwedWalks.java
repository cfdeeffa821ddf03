package io.floe.topology.processor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The walks the resolve stage owes, in memory beside the cursors that record them: when each table
 * is walked again (so that a tick does not scan every cursor), and the tables a notice reached
 * while their walk ran, which walk once more when it ends.
 */
final class OwedWalks {

  private final Map<String, Long> retries = new HashMap<>();
  private final Set<String> again = new HashSet<>();

  /** Walks {@code table} again at {@code at}. */
  void retryAt(String table, long at) {
    retries.put(table, at);
  }

  /** Forgets when {@code table} was to be walked again: it is walked now. */
  void walkingNow(String table) {
    retries.remove(table);
  }

  /** Records that a notice about {@code table} came while its walk ran. */
  void noticedWhileWalking(String table) {
    again.add(table);
  }

  /** Whether a notice came while the walk of {@code table} ran; forgets it. */
  boolean takeNoticedWhileWalking(String table) {
    return again.remove(table);
  }

  /** The tables due by {@code now} whose walk does not run, no longer scheduled. */
  List<String> takeDue(long now, Predicate<String> running) {
    List<String> due = new ArrayList<>();
    retries.forEach(
        (table, at) -> {
          if (at <= now && !running.test(table)) {
            due.add(table);
          }
        });
    due.forEach(retries::remove);
    return due;
  }
}
