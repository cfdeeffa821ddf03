package io.floe.topology.refresh;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import java.util.List;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * Iceberg filter expressions selecting bucket ranges of a column, so that scan planning reads only
 * the files whose bounds overlap them. Rows are still checked exactly afterwards: the filter only
 * prunes files.
 */
final class BucketFilters {

  /** Beyond this many ranges, planning uses their envelope instead of each range. */
  private static final int MAX_RANGES = 64;

  private BucketFilters() {}

  /**
   * @param column the bucket column
   * @param dateColumn whether the column is a date (values are days, bound as ints)
   */
  static Expression of(
      String column, boolean dateColumn, BucketRangeSet ranges, boolean nullBucket) {
    List<BucketRange> list = ranges.ranges();
    if (list.size() > MAX_RANGES) {
      list = List.of(new BucketRange(list.get(0).start(), list.get(list.size() - 1).end()));
    }
    Expression filter = nullBucket ? Expressions.isNull(column) : Expressions.alwaysFalse();
    for (BucketRange range : list) {
      filter = Expressions.or(filter, range(column, dateColumn, range));
    }
    return filter;
  }

  private static Expression range(String column, boolean dateColumn, BucketRange range) {
    Expression lower =
        range.start() == Long.MIN_VALUE
            ? Expressions.notNull(column)
            : Expressions.greaterThanOrEqual(column, literal(range.start(), dateColumn));
    Expression upper =
        range.end() == Long.MAX_VALUE
            ? Expressions.notNull(column)
            : Expressions.lessThan(column, literal(range.end(), dateColumn));
    return Expressions.and(lower, upper);
  }

  private static Object literal(long value, boolean dateColumn) {
    if (dateColumn) {
      return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
    }
    return value;
  }
}
