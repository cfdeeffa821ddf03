package io.floe.topology.refresh;

import com.fasterxml.jackson.databind.JsonNode;
import io.floe.topology.detect.SourceSnapshot;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.Digests;
import io.floe.topology.view.SourceColumns;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewPlan;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.util.JsonUtil;

/**
 * The state of each dimension table a view joins, as one refresh read it (DESIGN §3.10): the
 * table's UUID, the snapshot the refresh pinned, and the identity of the dimension columns read
 * (field ids and types, {@link SourceColumns}). Recorded with the bookmark beside the fact table's
 * snapshot ({@value FloeProperties#DIMENSION_STATES}), so that a refresh whose dimensions are not
 * those the target reflects recomputes every bucket, whatever the fact did, and a commit that
 * started from other dimension states is refused by the guard.
 *
 * <p>Recorded as a JSON array ordered by table name: {@code
 * [{"table":"lake.ref.symbols","uuid":"…","snapshot-id":"42","columns":"sector=2:string
 * symbol=1:string"}]}, the snapshot id a string (64-bit ids travel as strings in JSON) or null for
 * a dimension without a snapshot yet.
 *
 * @param states one per dimension, ordered by table name
 */
record DimensionStates(List<State> states) {

  /**
   * One dimension as read.
   *
   * @param table the dimension as the view names it
   * @param uuid its table UUID: a dimension dropped and recreated is another table
   * @param snapshotId the snapshot read, or null when it had none (no rows)
   * @param columns the identity of its columns read
   */
  record State(TableName table, String uuid, Long snapshotId, SourceColumns columns) {}

  static final DimensionStates NONE = new DimensionStates(List.of());

  DimensionStates {
    states = states.stream().sorted(Comparator.comparing(s -> s.table().toString())).toList();
  }

  /** The states of the dimensions a refresh pinned, for the columns its plan reads of each. */
  static DimensionStates of(Map<TableName, DimensionPin> pins, List<ViewPlan.Dimension> plan) {
    List<State> states = new ArrayList<>();
    for (ViewPlan.Dimension dimension : plan) {
      DimensionPin pin = pins.get(dimension.table());
      states.add(
          new State(
              dimension.table(),
              pin.table().uuid().toString(),
              pin.snapshot() == null ? null : pin.snapshot().snapshotId(),
              dimension.sourceColumns().withNameMapping(ViewScan.nameMapping(pin.table()))));
    }
    return new DimensionStates(states);
  }

  boolean isEmpty() {
    return states.isEmpty();
  }

  /** The recorded form; null for a view without dimensions, which records nothing. */
  String format() {
    if (states.isEmpty()) {
      return null;
    }
    return JsonUtil.generate(
        gen -> {
          gen.writeStartArray();
          for (State state : states) {
            gen.writeStartObject();
            gen.writeStringField("table", state.table().toString());
            gen.writeStringField("uuid", state.uuid());
            if (state.snapshotId() == null) {
              gen.writeNullField("snapshot-id");
            } else {
              gen.writeStringField("snapshot-id", state.snapshotId().toString());
            }
            gen.writeStringField("columns", state.columns().format());
            gen.writeEndObject();
          }
          gen.writeEndArray();
        },
        false);
  }

  /**
   * Parses {@link #format}'s form; null reads as no dimensions.
   *
   * @throws IllegalArgumentException when {@code text} is not of that form
   */
  static DimensionStates parse(String text) {
    if (text == null) {
      return NONE;
    }
    JsonNode array = JsonUtil.parse(text, node -> node);
    if (!array.isArray()) {
      throw new IllegalArgumentException("Not dimension states: '" + text + "'");
    }
    List<State> states = new ArrayList<>();
    for (JsonNode node : array) {
      JsonNode snapshot = node.get("snapshot-id");
      states.add(
          new State(
              TableName.parse(JsonUtil.getString("table", node)),
              JsonUtil.getString("uuid", node),
              snapshot == null || snapshot.isNull() ? null : Long.valueOf(snapshot.asText()),
              SourceColumns.parse(JsonUtil.getString("columns", node))));
    }
    return new DimensionStates(states);
  }

  /**
   * How these states differ from {@code recorded}, those the target reflects, as the reason for a
   * full refresh; null when they are the same.
   */
  String changesSince(DimensionStates recorded) {
    if (Objects.equals(format(), recorded.format())) {
      return null;
    }
    List<String> changes = new ArrayList<>();
    for (State state : states) {
      State was =
          recorded.states.stream()
              .filter(s -> s.table().equals(state.table()))
              .findFirst()
              .orElse(null);
      if (was == null) {
        changes.add("dimension " + state.table() + " was not joined before");
      } else if (!was.uuid().equals(state.uuid())) {
        changes.add("dimension " + state.table() + " was dropped and recreated");
      } else if (!Objects.equals(was.snapshotId(), state.snapshotId())) {
        changes.add(
            "dimension "
                + state.table()
                + " changed from snapshot "
                + was.snapshotId()
                + " to "
                + state.snapshotId());
      } else if (!was.columns().isSameAs(state.columns())) {
        String change = state.columns().changesSince(was.columns());
        changes.add("dimension " + state.table() + ": " + change);
      }
    }
    if (changes.isEmpty()) {
      changes.add("the dimensions joined were " + recorded.format() + ", now " + format());
    }
    return String.join("; ", changes);
  }

  /**
   * The dimensions as a refresh's outcome reports them, when only these states are known (a refresh
   * reported from its commit's summary): the snapshots' sequence numbers and commit times are not.
   */
  List<RefreshOutcome.Dimension> read() {
    return states.stream()
        .map(
            s ->
                new RefreshOutcome.Dimension(
                    s.table(),
                    s.snapshotId() == null
                        ? null
                        : new SourceSnapshot(s.uuid(), s.snapshotId(), -1, 0)))
        .toList();
  }

  /** A short digest of the recorded form, the same in every JVM and release. */
  String digest() {
    return Digests.sha256Prefix(Objects.toString(format()), 4);
  }
}
