package io.floe.topology.refresh.eval.vector;

/**
 * A vector whose rows each refer to an entry of a dictionary of distinct values, as the rows of a
 * dictionary-encoded Parquet column chunk do: a test of a value can then be answered once per entry
 * and looked up per row by id ({@link io.floe.topology.refresh.eval.expr.VectorPredicate} does so
 * for comparisons with literals and IN lists). Null rows are the vector's {@link
 * Vectors.Vector#isNull}; their ids mean nothing. {@link DictionaryVector} is the one the Parquet
 * reader fills.
 */
public interface DictionaryEncoded {

  /** Entries of the dictionary the rows of the current batch refer to. */
  int entries();

  /** The native value of an entry. */
  Object entry(int id);

  /**
   * The entry each row of the current batch refers to, indexed by row; a negative id for a row
   * whose value the vector holds itself ({@link Vectors.Vector#get}), as rows of a page that the
   * writer encoded plain once the dictionary grew too large.
   */
  int[] ids();
}
