package io.floe.topology.processor;

import io.floe.schemas.TableCommitted;
import io.floe.topology.ingest.CommitNotice;
import io.floe.topology.view.TableName;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit notices of the resolve stage's walks in progress, kept per table so that they can be
 * dead-lettered if the table turns out to be unknown, and the dead letters of notices it rejects.
 * Only in memory: notices walked before a restart cannot be dead-lettered.
 */
final class HeldNotices {

  private static final Logger LOG = LoggerFactory.getLogger(HeldNotices.class);

  /** The most dead letters held per table while its walk runs. */
  private static final int MAX_PER_TABLE = 100;

  private final String node;
  private final String commitsTopic;
  private final Serializer<TableCommitted> notices;
  private final FloeMetrics metrics;
  private final Map<String, List<Held>> held = new HashMap<>();

  /** A notice kept while its table is walked, with where it came from. */
  record Held(Record<String, TableCommitted> record, String origin) {}

  /**
   * @param node the processor that rejects notices, named in the dead letters
   * @param commitsTopic the topic notices come from, named when a dead letter is re-encoded
   * @param notices encodes a rejected notice for the dead-letter topic
   */
  HeldNotices(
      String node, String commitsTopic, Serializer<TableCommitted> notices, FloeMetrics metrics) {
    this.node = node;
    this.commitsTopic = commitsTopic;
    this.notices = notices;
    this.metrics = metrics;
  }

  /** Keeps a notice about {@code table} while its walk runs. */
  void hold(String table, Record<String, TableCommitted> record, String origin) {
    List<Held> letters = held.computeIfAbsent(table, k -> new ArrayList<>());
    if (letters.size() < MAX_PER_TABLE) {
      letters.add(new Held(record, origin));
    }
  }

  /** The notices held about {@code table}, no longer held; null when none were since a start. */
  List<Held> release(String table) {
    return held.remove(table);
  }

  /** The table a notice names; null, and the notice dead-lettered, when it names none. */
  TableName tableOrDeadLetter(
      ProcessorContext<String, Object> context, Record<String, TableCommitted> record) {
    try {
      return CommitNotice.tableOf(record.value());
    } catch (IllegalArgumentException | NullPointerException e) {
      deadLetter(
          context,
          new Held(record, DeadLetters.originOf(context)),
          "invalid table name: " + e.getMessage());
      return null;
    }
  }

  /** Publishes {@code letter} to the dead-letter topic, for {@code reason}. */
  void deadLetter(ProcessorContext<String, Object> context, Held letter, String reason) {
    metrics.deadLettered(node, reason);
    byte[] bytes = notices.serialize(commitsTopic, letter.record().value());
    context.forward(DeadLetters.of(letter.origin(), node, letter.record(), bytes, reason));
  }

  /** Publishes each of {@code letters} ({@link #release}) to the dead-letter topic. */
  void deadLetterAll(ProcessorContext<String, Object> context, List<Held> letters, String reason) {
    if (letters == null) {
      LOG.warn("Notices walked before a restart cannot be dead-lettered: {}", reason);
      return;
    }
    letters.forEach(letter -> deadLetter(context, letter, reason));
  }

  /** Forgets every notice held (the task is closing). */
  void clear() {
    held.clear();
  }
}
