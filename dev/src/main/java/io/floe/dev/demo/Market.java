package io.floe.dev.demo;

import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;

/**
 * The demo's source table and what happens to it: a seeded history, then every second an append of
 * fresh trades, and now and then late trades, a corrected trade (copy-on-write overwrite), deleted
 * trades (equality or position deletes) and a compaction, each its own Iceberg commit.
 */
final class Market {

  /** One commit the market made: what it was, for the log, and the snapshot it created. */
  record Commit(String kind, String description, long snapshotId) {}

  private final Table table;
  private final Trades trades = new Trades(42);
  private final int ratePerSecond;
  private final Deque<Record> recent = new ArrayDeque<>();
  private long tick;

  Market(Table table, int ratePerSecond) {
    this.table = table;
    this.ratePerSecond = ratePerSecond;
  }

  /** Loads {@code days} of history up to {@code now}, one append per day. */
  List<Commit> seed(Instant now, int days, int tradesPerDay) {
    List<Commit> commits = new ArrayList<>();
    Instant start = now.truncatedTo(ChronoUnit.DAYS).minus(Duration.ofDays(days - 1L));
    for (Instant day = start; day.isBefore(now); day = day.plus(Duration.ofDays(1))) {
      Instant end = day.plus(Duration.ofDays(1)).isBefore(now) ? day.plus(Duration.ofDays(1)) : now;
      long seconds = Duration.between(day, end).toSeconds();
      int count = (int) Math.max(1, tradesPerDay * seconds / 86_400);
      List<Record> rows = trades.between(day, end, count);
      long snapshot = TableWrites.append(table, rows);
      remember(rows);
      commits.add(
          new Commit("seed", count + " trades of " + day.toString().substring(0, 10), snapshot));
    }
    return commits;
  }

  /** The commits of one second of market activity: always an append, sometimes more. */
  List<Commit> tick(Instant now) {
    tick++;
    List<Commit> commits = new ArrayList<>();
    List<Record> fresh = trades.between(now.minusSeconds(1), now, ratePerSecond);
    commits.add(new Commit("append", fresh.size() + " trades", TableWrites.append(table, fresh)));
    remember(fresh);
    if (tick % 15 == 7) {
      commits.add(late(now));
    }
    if (tick % 20 == 13) {
      commits.add(delete());
    }
    if (tick % 40 == 25) {
      commits.add(correct());
    }
    if (tick % 45 == 35) {
      int files = table.currentSnapshot() == null ? 0 : countFiles();
      commits.add(
          new Commit(
              "compaction",
              files + " data files rewritten, no row changed",
              TableWrites.compact(table)));
    }
    return commits;
  }

  private Commit late(Instant now) {
    long minutesBack = 5 + trades.random().nextInt(6 * 60);
    Instant at = now.minus(Duration.ofMinutes(minutesBack));
    List<Record> late = trades.between(at, at.plusSeconds(30), 5 + trades.random().nextInt(15));
    remember(late);
    return new Commit(
        "late",
        late.size() + " trades from " + minutesBack + " min ago",
        TableWrites.append(table, late));
  }

  private Commit delete() {
    Set<Long> ids = new HashSet<>();
    List<Record> candidates = new ArrayList<>(recent);
    for (int i = 0; i < 3 && !candidates.isEmpty(); i++) {
      Record victim = candidates.remove(trades.random().nextInt(candidates.size()));
      ids.add((Long) victim.getField("id"));
    }
    recent.removeIf(r -> ids.contains((Long) r.getField("id")));
    boolean byEquality = (tick / 20) % 2 == 0;
    long snapshot =
        byEquality
            ? TableWrites.deleteByEquality(table, List.copyOf(ids))
            : TableWrites.deleteByPosition(table, r -> ids.contains((Long) r.getField("id")));
    return new Commit(
        "delete",
        ids.size() + " trades cancelled (" + (byEquality ? "equality" : "position") + " deletes)",
        snapshot);
  }

  private Commit correct() {
    List<Record> candidates = new ArrayList<>(recent);
    Record wrong = candidates.get(trades.random().nextInt(candidates.size()));
    long id = (Long) wrong.getField("id");
    Record fixed = wrong.copy();
    fixed.setField("quantity", (Long) wrong.getField("quantity") * 10);
    recent.remove(wrong);
    recent.add(fixed);
    long snapshot =
        TableWrites.overwrite(table, r -> ((Long) r.getField("id")) == id, List.of(fixed));
    return new Commit("overwrite", "trade " + id + " corrected (copy-on-write)", snapshot);
  }

  private int countFiles() {
    table.refresh();
    return table.currentSnapshot() == null
        ? 0
        : Integer.parseInt(table.currentSnapshot().summary().getOrDefault("total-data-files", "0"));
  }

  /** Keeps the latest trades as candidates for cancellations and corrections. */
  private void remember(List<Record> rows) {
    for (Record row : rows) {
      recent.addLast(row);
      if (recent.size() > 2000) {
        recent.removeFirst();
      }
    }
  }
}
