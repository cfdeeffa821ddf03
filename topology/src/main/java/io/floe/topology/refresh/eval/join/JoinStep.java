package io.floe.topology.refresh.eval.join;

/**
 * One join of a compiled view, as the engine evaluates it: the dimension it adds to each fact row,
 * where the dimension's columns go in a joined row, and its keys.
 *
 * @param inner whether fact rows without a matching dimension row are dropped (INNER), rather than
 *     kept with the dimension's columns null (LEFT)
 * @param offset the position of the dimension's first column in a joined row
 * @param width the number of columns of the dimension's schema
 * @param factKeys the fact columns of the equalities, by position in a joined row (a fact row's
 *     positions: the fact row comes first)
 * @param keys the dimension columns each fact key equals, by position in the dimension's schema
 */
public record JoinStep(boolean inner, int offset, int width, int[] factKeys, int[] keys) {}
