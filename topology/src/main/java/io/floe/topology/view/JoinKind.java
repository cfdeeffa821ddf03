package io.floe.topology.view;

/**
 * How a view joins a dimension table to its fact table: the two kinds under which every fact row's
 * output depends only on that row and the dimension's rows of its key (DESIGN §3.10), so a bucket
 * stays a pure function of its fact rows and the pinned dimensions.
 */
public enum JoinKind {
  /** Fact rows without a matching dimension row are dropped. */
  INNER,
  /** Fact rows without a matching dimension row are kept, the dimension's columns null. */
  LEFT
}
