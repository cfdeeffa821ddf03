package io.floe.topology.refresh.eval.agg;

import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.refresh.eval.expr.CompiledExpressions;
import io.floe.topology.refresh.eval.expr.VectorPredicate;
import io.floe.topology.refresh.eval.vector.DictionaryVector;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.DoubleVector;
import io.floe.topology.refresh.eval.vector.Vectors.LongKind;
import io.floe.topology.refresh.eval.vector.Vectors.LongVector;
import io.floe.topology.refresh.eval.vector.Vectors.ObjectVector;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The columnar hash aggregation of one worker of a refresh (DESIGN §5): batches of source rows go
 * in, filtered to the chunk's buckets and by the view's WHERE (over the vectors when it is a {@link
 * VectorPredicate}); group keys are encoded to longs (integers and temporal values as themselves,
 * doubles by their bits, anything else through a dictionary of ids) and looked up in an
 * open-addressing table of group ids; each aggregate keeps its state in arrays indexed by group id
 * ({@link AggregateStates}). Partial aggregations of the same refresh merge exactly; the merged one
 * yields the output rows. Not thread-safe: one per worker.
 */
public final class PartialAggregation {

  private final GroupedQuery query;
  private final AggregateInput input;
  private final CompiledExpressions.RowContext context;
  private final Vector[] source;
  private final int[] sourceColumns;
  private final int bucketColumn;
  private final BucketRangeSet ranges;
  private final boolean nullBucket;
  private final Vector[] inputs;
  private final int[] keyColumns;
  private final KeyEncoder[] encoders;
  private final AggregateStates.State[] states;
  private final VectorPredicate.Selector where;
  private final int[] groupOfRow = new int[Vectors.BATCH];

  private final long[] scratch;
  private final long[][] keyValues;
  private final long[] rowMasks = new long[Vectors.BATCH];

  /**
   * The group table, open addressing: a slot holds a group's key hash in its upper 32 bits and its
   * id plus one in the lower (0 when empty), so that a probe compares keys only on a hash match.
   */
  private long[] table = new long[1 << 10];

  private long[] keys;
  private long[] nullMasks = new long[64];
  private int groups;

  /**
   * Slots of the cache of recently found groups: a small direct-mapped table in front of the group
   * table, holding keys inline, so that the groups a run of rows keeps meeting (time-ordered data
   * meets the groups of the current bucket again and again) are found without touching the large
   * table. A slot holds its group's id plus one, 0 when empty.
   */
  private static final int RECENT = 256;

  private final long[] recentKeys;
  private final long[] recentMasks = new long[RECENT];
  private final int[] recentGroups = new int[RECENT];

  /**
   * @param source the batch vectors the readers fill, one per source schema column (null for the
   *     columns the view does not read)
   * @param bucketColumn the source position of the bucket column
   */
  public PartialAggregation(
      GroupedQuery query,
      Vector[] source,
      int bucketColumn,
      BucketRangeSet ranges,
      boolean nullBucket) {
    this.query = query;
    this.input = query.aggregateInput();
    this.context = query.newContext();
    this.source = source;
    this.bucketColumn = bucketColumn;
    this.ranges = ranges;
    this.nullBucket = nullBucket;
    List<Integer> read = new ArrayList<>();
    for (int i = 0; i < source.length; i++) {
      if (source[i] != null) {
        read.add(i);
      }
    }
    this.sourceColumns = read.stream().mapToInt(Integer::intValue).toArray();
    this.inputs = new Vector[input.width()];
    for (int j = 0; j < inputs.length; j++) {
      if (!input.isColumnar()) {
        inputs[j] = new ObjectVector();
      } else if (input.copies()[j] >= 0) {
        inputs[j] = source[input.copies()[j]];
      } else {
        Vector bucketed = source[input.buckets()[j]];
        inputs[j] = new LongVector(((LongVector) bucketed).kind);
      }
    }
    this.where = input.where() == null ? null : input.where().newSelector();
    this.keyColumns = query.groupKeys();
    if (keyColumns.length > 64) {
      throw new IllegalArgumentException("more than 64 group keys are not supported");
    }
    this.encoders = new KeyEncoder[keyColumns.length];
    for (int k = 0; k < encoders.length; k++) {
      Vector v = inputs[keyColumns[k]];
      encoders[k] =
          v instanceof LongVector lv
              ? new LongKey(lv.kind)
              : v instanceof DoubleVector ? new DoubleKey() : new DictionaryKey();
    }
    this.scratch = new long[keyColumns.length];
    this.keyValues = new long[keyColumns.length][Vectors.BATCH];
    this.keys = new long[64 * Math.max(1, keyColumns.length)];
    this.recentKeys = new long[RECENT * keyColumns.length];
    this.states = new AggregateStates.State[input.calls().size()];
    for (int a = 0; a < states.length; a++) {
      states[a] = query.newState(a);
    }
  }

  /** The vectors the readers fill. */
  Vector[] source() {
    return source;
  }

  /** Groups so far. */
  int groupCount() {
    return groups;
  }

  /** Adds rows {@code [0, n)} of the source vectors. */
  public void add(int n) {
    selectChunk(n);
    if (input.isColumnar()) {
      selectWhere(n);
      computeBuckets(n);
    } else {
      evaluateRows(n);
    }
    assignGroups(n);
    for (AggregateStates.State state : states) {
      state.grow(groups);
      state.add(groupOfRow, n, inputs);
    }
  }

  /** Rows outside the chunk's buckets get group -1: files and row groups overlap chunks. */
  private void selectChunk(int n) {
    Vector bucket = source[bucketColumn];
    for (int i = 0; i < n; i++) {
      boolean in = bucket.isNull(i) ? nullBucket : ranges.contains(((LongVector) bucket).values[i]);
      groupOfRow[i] = in ? 0 : -1;
    }
  }

  /** Rows the view's WHERE does not select (FALSE or UNKNOWN) get group -1 too. */
  private void selectWhere(int n) {
    if (where == null) {
      return;
    }
    long[] selected = where.select(source, n);
    for (int i = 0; i < n; i++) {
      if (!VectorPredicate.Selector.isSet(selected, i)) {
        groupOfRow[i] = -1;
      }
    }
  }

  private void computeBuckets(int n) {
    Bucketing bucketing = input.bucketing();
    int[] buckets = input.buckets();
    for (int j = 0; j < buckets.length; j++) {
      if (buckets[j] < 0) {
        continue;
      }
      LongVector from = (LongVector) source[buckets[j]];
      LongVector to = (LongVector) inputs[j];
      for (int i = 0; i < n; i++) {
        if (from.nulls[i]) {
          to.nulls[i] = true;
        } else if (groupOfRow[i] >= 0) {
          to.set(i, bucketing.floor(from.values[i]));
        }
      }
    }
  }

  /** WHERE and computed expressions: Calcite's generated code, one boxed row at a time. */
  private void evaluateRows(int n) {
    Object[] row = new Object[query.sourceWidth()];
    for (int i = 0; i < n; i++) {
      if (groupOfRow[i] < 0) {
        continue;
      }
      for (int c : sourceColumns) {
        row[c] = source[c].get(i);
      }
      Object[] in = query.aggregateInputOf(row, context);
      if (in == null) {
        groupOfRow[i] = -1;
        continue;
      }
      for (int j = 0; j < inputs.length; j++) {
        inputs[j].set(i, in[j]);
      }
    }
  }

  /**
   * Replaces each selected row's 0 in {@link #groupOfRow} by its group id: the key columns are
   * encoded a column at a time (one tight loop per column, no call per value), then each row's key
   * is looked up.
   */
  private void assignGroups(int n) {
    int width = keyColumns.length;
    Arrays.fill(rowMasks, 0, n, 0L);
    for (int k = 0; k < width; k++) {
      Vector v = inputs[keyColumns[k]];
      long[] column = keyValues[k];
      long bit = 1L << k;
      if (v instanceof LongVector longs) {
        for (int i = 0; i < n; i++) {
          if (longs.nulls[i]) {
            rowMasks[i] |= bit;
            column[i] = 0;
          } else {
            column[i] = longs.values[i];
          }
        }
      } else if (v instanceof DictionaryVector strings) {
        ((DictionaryKey) encoders[k]).encode(strings, groupOfRow, n, column, rowMasks, bit);
      } else {
        KeyEncoder encoder = encoders[k];
        for (int i = 0; i < n; i++) {
          if (groupOfRow[i] < 0) {
            continue;
          }
          if (v.isNull(i)) {
            rowMasks[i] |= bit;
            column[i] = 0;
          } else {
            column[i] = encoder.encode(v, i);
          }
        }
      }
    }
    long[] key = scratch;
    for (int i = 0; i < n; i++) {
      if (groupOfRow[i] < 0) {
        continue;
      }
      for (int k = 0; k < width; k++) {
        key[k] = keyValues[k][i];
      }
      groupOfRow[i] = findOrInsert(key, rowMasks[i]);
    }
  }

  private static int hash(long[] key, long mask) {
    long h = mask * 0x9E3779B97F4A7C15L;
    for (long k : key) {
      h = (h ^ k) * 0xC2B2AE3D27D4EB4FL;
      h ^= h >>> 31;
    }
    return (int) (h ^ (h >>> 32));
  }

  private int findOrInsert(long[] key, long mask) {
    int width = key.length;
    int hash = hash(key, mask);
    int recent = (hash >>> 24) & (RECENT - 1);
    if (recentGroups[recent] != 0
        && recentMasks[recent] == mask
        && sameKey(recentKeys, recent * width, key)) {
      return recentGroups[recent] - 1;
    }
    int g = find(hash, key, mask);
    recentMasks[recent] = mask;
    recentGroups[recent] = g + 1;
    System.arraycopy(key, 0, recentKeys, recent * width, width);
    return g;
  }

  private int find(int hash, long[] key, long mask) {
    int width = key.length;
    int slotMask = table.length - 1;
    int slot = hash & slotMask;
    while (true) {
      long entry = table[slot];
      if (entry == 0) {
        return insert(slot, hash, key, mask);
      }
      int g = (int) entry - 1;
      if ((int) (entry >>> 32) == hash && nullMasks[g] == mask && sameKey(keys, g * width, key)) {
        return g;
      }
      slot = (slot + 1) & slotMask;
    }
  }

  /** Whether {@code key} is stored at {@code stored[base, base + key.length)}. */
  private static boolean sameKey(long[] stored, int base, long[] key) {
    for (int k = 0; k < key.length; k++) {
      if (stored[base + k] != key[k]) {
        return false;
      }
    }
    return true;
  }

  private int insert(int slot, int hash, long[] key, long mask) {
    int g = groups++;
    int width = key.length;
    if (g == nullMasks.length) {
      nullMasks = Arrays.copyOf(nullMasks, g * 2);
      keys = Arrays.copyOf(keys, g * 2 * Math.max(1, width));
    }
    System.arraycopy(key, 0, keys, g * width, width);
    nullMasks[g] = mask;
    table[slot] = entry(hash, g);
    if (groups * 2 > table.length) {
      rehash();
    }
    return g;
  }

  private static long entry(int hash, int group) {
    return ((long) hash << 32) | (group + 1L);
  }

  private void rehash() {
    long[] old = table;
    table = new long[old.length * 2];
    int slotMask = table.length - 1;
    for (long entry : old) {
      if (entry == 0) {
        continue;
      }
      int slot = (int) (entry >>> 32) & slotMask;
      while (table[slot] != 0) {
        slot = (slot + 1) & slotMask;
      }
      table[slot] = entry;
    }
  }

  /** Folds another worker's partial aggregation of the same refresh into this one. */
  public void merge(PartialAggregation other) {
    int width = scratch.length;
    long[][] remaps = new long[width][];
    for (int k = 0; k < width; k++) {
      remaps[k] = encoders[k].remap(other.encoders[k]);
    }
    int[] map = new int[other.groups];
    long[] key = new long[width];
    for (int h = 0; h < other.groups; h++) {
      long mask = other.nullMasks[h];
      for (int k = 0; k < width; k++) {
        long v = other.keys[h * width + k];
        key[k] = (mask & (1L << k)) != 0 || remaps[k] == null ? v : remaps[k][(int) v];
      }
      map[h] = findOrInsert(key, mask);
    }
    for (int a = 0; a < states.length; a++) {
      states[a].grow(groups);
      states[a].merge(other.states[a], map, other.groups);
    }
  }

  /** The view's output rows, sorted by bucket and group keys. */
  public List<Object[]> results() {
    List<Object[]> rows = groupRows((a, g) -> states[a].result(g));
    return query.finish(rows, context);
  }

  /**
   * The groups with the partial state of each aggregate instead of its value: a row of the group
   * keys followed, per aggregate, by the {@code Object[]} of its parts ({@link PartialState#of}),
   * in no particular order.
   *
   * @param partials how each aggregate's state is kept, in aggregate order
   */
  public List<Object[]> partials(List<PartialState> partials) {
    return groupRows((a, g) -> partials.get(a).of(states[a], g));
  }

  /** Each group's keys followed by {@code value} of each aggregate. */
  private List<Object[]> groupRows(AggregateValue value) {
    int width = scratch.length;
    List<Object[]> rows = new ArrayList<>(groups);
    for (int g = 0; g < groups; g++) {
      Object[] row = new Object[width + states.length];
      for (int k = 0; k < width; k++) {
        row[k] = (nullMasks[g] & (1L << k)) != 0 ? null : encoders[k].decode(keys[g * width + k]);
      }
      for (int a = 0; a < states.length; a++) {
        row[width + a] = value.of(a, g);
      }
      rows.add(row);
    }
    return rows;
  }

  /** What a group row holds of aggregate {@code a} in group {@code g}. */
  @FunctionalInterface
  private interface AggregateValue {
    Object of(int aggregate, int group);
  }

  /** How the values of one group key column map to longs and back. */
  private interface KeyEncoder {
    long encode(Vector vector, int row);

    Object decode(long key);

    /** Ids of this encoder for the other's ids, or null when keys need no translation. */
    long[] remap(KeyEncoder other);
  }

  private record LongKey(LongKind kind) implements KeyEncoder {
    @Override
    public long encode(Vector vector, int row) {
      return vector.getLong(row);
    }

    @Override
    public Object decode(long key) {
      return kind == LongKind.INT ? (Object) (int) key : (Object) key;
    }

    @Override
    public long[] remap(KeyEncoder other) {
      return null;
    }
  }

  /** Doubles by their bits: equal keys exactly when {@code Double.equals} says so. */
  private record DoubleKey() implements KeyEncoder {
    @Override
    public long encode(Vector vector, int row) {
      return Double.doubleToLongBits(vector.getDouble(row));
    }

    @Override
    public Object decode(long key) {
      return Double.longBitsToDouble(key);
    }

    @Override
    public long[] remap(KeyEncoder other) {
      return null;
    }
  }

  /**
   * Strings and any other values: ids in order of first appearance; equality is equals(). Rows of a
   * {@link DictionaryVector} are keyed by their dictionary ids.
   */
  private static final class DictionaryKey implements KeyEncoder {
    /** Slots of the cache of ids by value instance. */
    private static final int INSTANCES = 64;

    private final Map<Object, Integer> ids = new HashMap<>();
    private final List<Object> values = new ArrayList<>();

    /**
     * Ids of recently seen value instances, direct-mapped by identity hash: readers hand out one
     * instance per Parquet dictionary entry, so most lookups end here without hashing or comparing
     * the value.
     */
    private final Object[] instances = new Object[INSTANCES];

    private final int[] instanceIds = new int[INSTANCES];

    /**
     * The dictionary of the column chunk last met and the key id of each of its entries, -1 until
     * first met: a chunk's rows are keyed by their dictionary ids, each entry looked up once.
     */
    private String[] chunkDictionary;

    private int[] chunkKeys;

    /**
     * Encodes the selected rows among {@code [0, n)} of a string column into {@code column}, and
     * marks its nulls in {@code rowMasks} with {@code bit}.
     */
    void encode(
        DictionaryVector strings,
        int[] groupOfRow,
        int n,
        long[] column,
        long[] rowMasks,
        long bit) {
      String[] dictionary = strings.dictionary();
      if (dictionary != chunkDictionary) {
        chunkDictionary = dictionary;
        chunkKeys = new int[dictionary.length];
        Arrays.fill(chunkKeys, -1);
      }
      int[] ids = strings.ids;
      for (int i = 0; i < n; i++) {
        if (groupOfRow[i] < 0) {
          continue;
        }
        int id = ids[i];
        if (id >= 0) {
          int key = chunkKeys[id];
          if (key < 0) {
            key = idOf(dictionary[id]);
            chunkKeys[id] = key;
          }
          column[i] = key;
        } else if (id == DictionaryVector.NULL) {
          rowMasks[i] |= bit;
          column[i] = 0;
        } else {
          column[i] = encode(strings, i);
        }
      }
    }

    @Override
    public long encode(Vector vector, int row) {
      Object value = vector.get(row);
      int slot = System.identityHashCode(value) & (INSTANCES - 1);
      if (instances[slot] == value) {
        return instanceIds[slot];
      }
      int id = idOf(value);
      instances[slot] = value;
      instanceIds[slot] = id;
      return id;
    }

    private int idOf(Object value) {
      Integer id = ids.get(value);
      if (id == null) {
        id = values.size();
        ids.put(value, id);
        values.add(value);
      }
      return id;
    }

    @Override
    public Object decode(long key) {
      return values.get((int) key);
    }

    @Override
    public long[] remap(KeyEncoder other) {
      List<Object> theirs = ((DictionaryKey) other).values;
      long[] map = new long[theirs.size()];
      for (int i = 0; i < map.length; i++) {
        map[i] = idOf(theirs.get(i));
      }
      return map;
    }
  }
}
