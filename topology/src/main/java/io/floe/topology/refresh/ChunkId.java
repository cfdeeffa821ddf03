package io.floe.topology.refresh;

import java.util.Objects;

/**
 * One chunk of a refresh: the {@code floe.refresh-id} of a chunk's target commit. A refresh of one
 * chunk is named by its refresh id alone; the k-th chunk (counting from 0) of n is {@code <refresh
 * id>#k/n}.
 *
 * @param refresh the refresh
 * @param index the chunk, counting from 0
 * @param count the chunks of the refresh's plan
 */
public record ChunkId(RefreshId refresh, int index, int count) {

  public ChunkId {
    Objects.requireNonNull(refresh, "refresh");
    if (count < 1 || index < 0 || index >= count) {
      throw new IllegalArgumentException("Chunk " + index + " of " + count + " does not exist");
    }
  }

  /** The only chunk of a refresh that is not cut. */
  public static ChunkId whole(RefreshId refresh) {
    return new ChunkId(refresh, 0, 1);
  }

  /**
   * Parses {@link #toString}'s form.
   *
   * @throws IllegalArgumentException when {@code text} is not a chunk id
   */
  public static ChunkId parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("Not a chunk id: null");
    }
    int hash = text.lastIndexOf('#');
    if (hash < 0) {
      return whole(RefreshId.parse(text));
    }
    String[] part = text.substring(hash + 1).split("/", -1);
    try {
      if (part.length != 2) {
        throw new NumberFormatException();
      }
      return new ChunkId(
          RefreshId.parse(text.substring(0, hash)),
          Integer.parseInt(part[0]),
          Integer.parseInt(part[1]));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Not a chunk id: '" + text + "'");
    }
  }

  /** True for the last chunk of the plan, whose commit moves the bookmark. */
  public boolean isLast() {
    return index == count - 1;
  }

  @Override
  public String toString() {
    return count == 1 ? refresh.toString() : refresh + "#" + index + "/" + count;
  }
}
