package io.floe.topology.refresh.eval.vector;

import io.floe.topology.refresh.eval.vector.Vectors.Vector;

/**
 * A string column of a batch, as ids into the dictionary of the column chunk the batch was read
 * from wherever that chunk is dictionary-encoded, and as values elsewhere: Parquet writers fall
 * back from the dictionary to plain encoding when it grows too large, from some page of the chunk
 * on, and other readers ({@code RecordBatches}, joins) set values. A row's id is an index into
 * {@link #dictionary()}, {@link #VALUE} (its value is in {@link #values}) or {@link #NULL}.
 *
 * <p>What is computed once per dictionary entry instead of once per row goes through the ids: a
 * group key maps each id to its group key once per chunk, and a predicate is answered once per
 * entry ({@link DictionaryEncoded}). A batch's ids all refer to one dictionary: readers fill a
 * batch from one row group. {@link #get} returns one instance per dictionary entry.
 */
public final class DictionaryVector extends Vector implements DictionaryEncoded {

  /** The id of a row whose value is held in {@link #values}. */
  public static final int VALUE = -1;

  /** The id of a null row. */
  public static final int NULL = -2;

  private static final String[] NONE = new String[0];

  /** Each row's id: an index into {@link #dictionary()}, {@link #VALUE} or {@link #NULL}. */
  public final int[] ids = new int[Vectors.BATCH];

  /** The values of rows whose id is {@link #VALUE}. */
  public final String[] values = new String[Vectors.BATCH];

  private String[] dictionary = NONE;

  /**
   * The entries of the dictionary the ids refer to, by id; the same array for every batch of a
   * column chunk, a new one for the next chunk, so that its identity tells a new dictionary. Not to
   * be modified.
   */
  public String[] dictionary() {
    return dictionary;
  }

  /** The dictionary of the column chunk the next rows' ids refer to. */
  public void setDictionary(String[] entries) {
    this.dictionary = entries;
  }

  @Override
  public int entries() {
    return dictionary.length;
  }

  @Override
  public Object entry(int id) {
    return dictionary[id];
  }

  @Override
  public int[] ids() {
    return ids;
  }

  /** Sets row {@code row} to dictionary entry {@code id}. */
  public void setId(int row, int id) {
    ids[row] = id;
  }

  @Override
  public boolean isNull(int row) {
    return ids[row] == NULL;
  }

  @Override
  public Object get(int row) {
    int id = ids[row];
    return id >= 0 ? dictionary[id] : id == VALUE ? values[row] : null;
  }

  @Override
  public void setNull(int row) {
    ids[row] = NULL;
  }

  @Override
  public void set(int row, Object value) {
    if (value == null) {
      ids[row] = NULL;
    } else {
      ids[row] = VALUE;
      values[row] = value.toString();
    }
  }

  @Override
  public void move(int from, int to) {
    ids[to] = ids[from];
    values[to] = values[from];
  }
}
