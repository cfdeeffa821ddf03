package io.floe.topology.refresh.eval.join;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.types.Type;

/**
 * A dimension table read at one pinned snapshot into a hash table keyed by its join keys: the rows'
 * values of the columns a view needs (its keys and the columns it contributes), column by column,
 * and for each key its rows, chained. Immutable once built, so the refreshes of every view that
 * joins the same dimension snapshot on the same keys share one ({@link DimensionTables}).
 *
 * <p>Keys compare as SQL's equality does for columns of one type: integers by value whatever their
 * width, decimals by value whatever their scale, {@code -0.0} equal to {@code 0.0}; a null key, or
 * NaN, matches nothing. A key held by several rows matches each of them: a fact row then joins
 * every one, as in SQL.
 */
public final class DimensionTable {

  private final String name;
  private final int width;
  private final int[] keyPositions;
  private final int[] columnPositions;
  private final Type[] columnTypes;
  private final Object[][] values;
  private final Map<Object, Integer> first;
  private final int[] next;
  private final int rows;
  private final long bytes;

  private DimensionTable(Builder builder) {
    this.name = builder.name;
    this.width = builder.width;
    this.keyPositions = builder.keyPositions;
    this.columnPositions = builder.columnPositions;
    this.columnTypes = builder.columnTypes;
    this.values = new Object[columnPositions.length][];
    for (int c = 0; c < values.length; c++) {
      values[c] = Arrays.copyOf(builder.values[c], builder.rows);
    }
    this.first = builder.first;
    this.next = Arrays.copyOf(builder.next, builder.rows);
    this.rows = builder.rows;
    this.bytes = builder.bytes;
  }

  /** What the table holds rows of, for messages: the table and its snapshot. */
  public String name() {
    return name;
  }

  /** The number of columns of the dimension's schema. */
  public int width() {
    return width;
  }

  /** The key columns, by position in the dimension's schema, in the order of the join's keys. */
  public int[] keyPositions() {
    return keyPositions.clone();
  }

  /** The columns held, by position in the dimension's schema. */
  int[] columnPositions() {
    return columnPositions;
  }

  /** The Iceberg types of the columns held. */
  Type[] columnTypes() {
    return columnTypes;
  }

  /** Rows held: the dimension's rows whose keys are not null. */
  public int rows() {
    return rows;
  }

  /** The estimated heap the table takes, in bytes. */
  public long bytes() {
    return bytes;
  }

  /**
   * The join keys whose rows differ between {@code before}, the same dimension's table at an
   * earlier snapshot, and this one (DESIGN §3.10): a key is changed when the multiset of its rows'
   * held values is not the same in both, so rows rewritten unchanged (a copy-on-write overwrite of
   * their file, a compaction) change nothing, and a column the view does not read is not held. Each
   * key is its values in the order of the join's keys, integers as longs and decimals without
   * trailing zeros ({@link #keyOf}).
   *
   * @param limit the most keys worth knowing
   * @return the changed keys, or empty when more than {@code limit} changed
   * @throws IllegalArgumentException when {@code before} holds other keys or columns
   */
  @SuppressWarnings("unchecked")
  public Optional<Set<List<Object>>> changedKeysSince(DimensionTable before, int limit) {
    if (!Arrays.equals(keyPositions, before.keyPositions)
        || !Arrays.equals(columnPositions, before.columnPositions)) {
      throw new IllegalArgumentException(
          "Cannot compare " + name + " with " + before.name + ": they hold other columns");
    }
    Set<Object> keys = new HashSet<>(first.keySet());
    keys.addAll(before.first.keySet());
    Set<List<Object>> changed = new HashSet<>();
    for (Object key : keys) {
      if (!rowsOf(key).equals(before.rowsOf(key))) {
        if (changed.size() == limit) {
          return Optional.empty();
        }
        changed.add(keyPositions.length == 1 ? List.of(key) : (List<Object>) key);
      }
    }
    return Optional.of(changed);
  }

  /** The rows of {@code key}, each as its held values, counted. */
  private Map<List<Object>, Integer> rowsOf(Object key) {
    Map<List<Object>, Integer> rowsOfKey = new HashMap<>();
    for (int row = first(key); row >= 0; row = next[row]) {
      List<Object> held = new ArrayList<>(values.length);
      for (Object[] column : values) {
        held.add(column[row]);
      }
      rowsOfKey.merge(held, 1, Integer::sum);
    }
    return rowsOfKey;
  }

  /** The first row of {@code key} (from {@link #keyOf}), or -1. */
  int first(Object key) {
    if (key == null) {
      return -1;
    }
    Integer row = first.get(key);
    return row == null ? -1 : row;
  }

  /** The row after {@code row} with the same key, or -1. */
  int next(int row) {
    return next[row];
  }

  /** The value of held column {@code column} (an index of {@link #columnPositions}) in a row. */
  Object value(int column, int row) {
    return values[column][row];
  }

  /**
   * The hash key of one key value, or null when it matches nothing (null, NaN): values that SQL's
   * equality says are equal map to equal keys.
   */
  static Object keyOf(Object value) {
    if (value == null) {
      return null;
    }
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      return ((Number) value).longValue();
    }
    if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d)) {
        return null;
      }
      return d == 0.0 ? 0.0 : d;
    }
    if (value instanceof BigDecimal d) {
      return d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
    }
    return value;
  }

  /** The hash key of several key values, or null when one of them matches nothing. */
  static Object keyOf(Object[] values) {
    if (values.length == 1) {
      return keyOf(values[0]);
    }
    List<Object> key = new ArrayList<>(values.length);
    for (Object value : values) {
      Object k = keyOf(value);
      if (k == null) {
        return null;
      }
      key.add(k);
    }
    return key;
  }

  /** Collects the rows of a dimension, within a bound on the heap they take. */
  public static final class Builder {
    private final String name;
    private final int width;
    private final int[] keyPositions;
    private final int[] columnPositions;
    private final Type[] columnTypes;
    private final long maxBytes;
    private final String boundName;
    private final Object[][] values;
    private final Map<Object, Integer> first = new HashMap<>();
    private int[] next = new int[64];
    private int rows;
    private long bytes;
    private long rowsSeen;

    /**
     * @param name the table and snapshot, for messages
     * @param width the number of columns of the dimension's schema
     * @param keyPositions the key columns, by position in the dimension's schema
     * @param columnPositions the columns to hold, by position in the dimension's schema
     * @param columnTypes their Iceberg types
     * @param maxBytes the most heap the table may take
     * @param boundName the setting {@code maxBytes} comes from, for the message that rejects a
     *     dimension over it
     */
    public Builder(
        String name,
        int width,
        int[] keyPositions,
        int[] columnPositions,
        Type[] columnTypes,
        long maxBytes,
        String boundName) {
      this.name = name;
      this.width = width;
      this.keyPositions = keyPositions.clone();
      this.columnPositions = columnPositions.clone();
      this.columnTypes = columnTypes.clone();
      this.maxBytes = maxBytes;
      this.boundName = boundName;
      this.values = new Object[columnPositions.length][64];
    }

    /**
     * Adds one dimension row: its native values, by position in the dimension's schema (only the
     * key and held columns are read).
     *
     * @throws DimensionTooLargeException when the table passes its bound
     */
    public void add(Object[] row) {
      rowsSeen++;
      Object[] keyValues = new Object[keyPositions.length];
      for (int k = 0; k < keyValues.length; k++) {
        keyValues[k] = row[keyPositions[k]];
      }
      Object key = keyOf(keyValues);
      if (key == null) {
        // A null key equals nothing: the row can never join.
        return;
      }
      int r = rows++;
      if (r == next.length) {
        next = Arrays.copyOf(next, r * 2);
        for (int c = 0; c < values.length; c++) {
          values[c] = Arrays.copyOf(values[c], r * 2);
        }
      }
      long size = ROW_BYTES + 8L * values.length;
      for (int c = 0; c < values.length; c++) {
        Object value = row[columnPositions[c]];
        values[c][r] = value;
        size += sizeOf(value);
      }
      // Chain the row in front of its key's earlier rows; the order of matches is not observable
      // through an aggregation.
      Integer previous = first.put(key, r);
      next[r] = previous == null ? -1 : previous;
      bytes += size;
      if (bytes > maxBytes) {
        throw new DimensionTooLargeException(
            String.format(
                "Cannot join dimension %s: its hash table passed %,d bytes, the bound %s sets,"
                    + " after %,d of its rows; join a smaller dimension (a subset in a table of"
                    + " its own) or raise %s",
                name, maxBytes, boundName, rowsSeen, boundName));
      }
    }

    public DimensionTable build() {
      return new DimensionTable(this);
    }

    /** A row's share of the hash map and chain: entry, key object, chain slot. */
    private static final long ROW_BYTES = 64;

    /**
     * The least heap a table of {@code rows} rows holding {@code columns} columns takes, whatever
     * their values: what {@link #add} counts for each row before its values.
     */
    static long minimumBytes(long rows, int columns) {
      return rows * (ROW_BYTES + 8L * columns);
    }

    private static long sizeOf(Object value) {
      if (value == null) {
        return 0;
      }
      if (value instanceof CharSequence s) {
        return 40 + 2L * s.length();
      }
      if (value instanceof ByteBuffer b) {
        return 48 + b.remaining();
      }
      if (value instanceof BigDecimal) {
        return 48;
      }
      return 16;
    }
  }

  /** A dimension whose hash table would take more heap than its bound allows. */
  public static final class DimensionTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DimensionTooLargeException(String message) {
      super(message);
    }
  }
}
