package io.floe.topology.refresh;

import io.floe.topology.iceberg.IcebergValues;
import io.floe.topology.refresh.eval.CompiledQuery.Merge;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The delta path (DESIGN §5): a decomposable view's rows computed over only the rows a source
 * appended, folded into the target rows of the same groups. Each target row of a dirty bucket is
 * offered to {@link #absorb}; the rows to write afterwards are {@link #rows}: every delta group,
 * merged with its target row when there was one.
 *
 * <p>Values are compared and merged in their native form as the target stores them (a value is
 * first taken through the target column's type), so a delta row and a target row of one group have
 * equal keys.
 */
final class DeltaMerger {

  private final List<Merge> merges;
  private final List<String> names;
  private final Type[] types;
  private final Map<List<Object>, Object[]> groups = new LinkedHashMap<>();

  /**
   * @param outputSchema the view's output columns, in the order of the rows
   * @param targetSchema the target table's schema, whose column types the values take
   * @param merges how each output column merges
   * @param deltaRows the view's output rows over the appended source rows, bucket values as the
   *     target stores them
   */
  DeltaMerger(
      Schema outputSchema, Schema targetSchema, List<Merge> merges, List<Object[]> deltaRows) {
    this.merges = merges;
    this.names = outputSchema.columns().stream().map(Types.NestedField::name).toList();
    this.types = new Type[names.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = targetSchema.findField(names.get(i)).type();
    }
    for (Object[] row : deltaRows) {
      Object[] canonical = new Object[row.length];
      for (int i = 0; i < row.length; i++) {
        canonical[i] = IcebergValues.toNative(types[i], IcebergValues.toIceberg(types[i], row[i]));
      }
      groups.put(key(canonical), canonical);
    }
  }

  /**
   * Merges a target row of a dirty bucket into the delta row of its group; returns false, leaving
   * the delta rows as they are, when the appended rows did not touch its group.
   */
  boolean absorb(Record target) {
    Object[] row = new Object[names.size()];
    for (int i = 0; i < row.length; i++) {
      row[i] = IcebergValues.toNative(types[i], target.getField(names.get(i)));
    }
    Object[] delta = groups.get(key(row));
    if (delta == null) {
      return false;
    }
    for (int i = 0; i < row.length; i++) {
      delta[i] = merges.get(i).apply(row[i], delta[i]);
    }
    return true;
  }

  /** The rows to write: every delta group, merged where the target had it. */
  List<Object[]> rows() {
    return new ArrayList<>(groups.values());
  }

  private List<Object> key(Object[] row) {
    Object[] key = new Object[row.length];
    for (int i = 0; i < row.length; i++) {
      key[i] = merges.get(i) == Merge.KEY ? row[i] : null;
    }
    return Arrays.asList(key);
  }
}
