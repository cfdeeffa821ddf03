package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import java.util.List;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;

/**
 * Iceberg filter expressions selecting bucket ranges of a column, so that scan planning reads only
 * the files whose bounds overlap them. Rows are still checked exactly afterwards: the filter only
 * prunes files.
 *
 * <p>Literals are built in the column's own unit: Iceberg reads a plain long literal as
 * microseconds and converts it to nanoseconds for a {@code timestamp_ns} column (an overflow for
 * any nanosecond value after 1970-04-17), so timestamps get typed literals. A side of a range that
 * reaches the limit of the column's type (the open ends {@code Long.MIN_VALUE} and {@code
 * Long.MAX_VALUE}, or beyond the int range of a date) gets no bound at all.
 */
final class BucketFilters {

  /** Beyond this many ranges, planning uses their envelope instead of each range. */
  private static final int MAX_RANGES = 64;

  private BucketFilters() {}

  /**
   * @param column the bucket column
   * @param type the column's type; ranges are in its stored unit
   * @param ranges the ranges to select
   * @param nullBucket whether to select rows whose bucket column is null too
   */
  static Expression of(
      String column, BucketColumnType type, BucketRangeSet ranges, boolean nullBucket) {
    List<BucketRange> list = ranges.ranges();
    if (list.size() > MAX_RANGES) {
      list = List.of(new BucketRange(list.get(0).start(), list.get(list.size() - 1).end()));
    }
    Expression filter = nullBucket ? Expressions.isNull(column) : Expressions.alwaysFalse();
    for (BucketRange range : list) {
      filter = Expressions.or(filter, range(column, type, range));
    }
    return filter;
  }

  private static Expression range(String column, BucketColumnType type, BucketRange range) {
    long min = type.isDate() ? Integer.MIN_VALUE : Long.MIN_VALUE;
    long max = type.isDate() ? Integer.MAX_VALUE : Long.MAX_VALUE;
    if (range.start() > max || (range.end() <= min && !range.isOpenEnded())) {
      return Expressions.alwaysFalse();
    }
    Expression lower =
        range.start() <= min
            ? Expressions.notNull(column)
            : Expressions.greaterThanOrEqual(column, literal(type, range.start()));
    // An end past the type's largest value leaves every value up to it in the range.
    Expression upper =
        range.isOpenEnded() || range.end() > max
            ? Expressions.notNull(column)
            : Expressions.lessThan(column, literal(type, range.end()));
    return Expressions.and(lower, upper);
  }

  private static Literal<?> literal(BucketColumnType type, long value) {
    return switch (type) {
      case DATE -> Expressions.lit((int) value);
      case TIMESTAMP, TIMESTAMPTZ -> Expressions.micros(value);
      case TIMESTAMP_NS, TIMESTAMPTZ_NS -> Expressions.nanos(value);
    };
  }
}
