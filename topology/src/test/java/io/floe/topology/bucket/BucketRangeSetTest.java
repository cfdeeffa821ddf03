package io.floe.topology.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class BucketRangeSetTest {

  private static BucketRange r(long start, long end) {
    return new BucketRange(start, end);
  }

  @Test
  void shouldMergeOverlappingAndAdjacentRanges() {
    BucketRangeSet set = BucketRangeSet.of(r(10, 20), r(15, 30), r(30, 40), r(50, 60));

    assertThat(set.ranges()).containsExactly(r(10, 40), r(50, 60));
  }

  @Test
  void shouldKeepALateAndAFreshRangeApart() {
    BucketRangeSet set = BucketRangeSet.empty().add(r(100, 110)).add(r(5000, 5010));

    assertThat(set.ranges()).containsExactly(r(100, 110), r(5000, 5010));
    assertThat(set.contains(2000)).isFalse();
  }

  @Test
  void shouldSubtractARangeFromTheMiddle() {
    BucketRangeSet set = BucketRangeSet.of(r(0, 100));

    assertThat(set.minus(r(40, 60)).ranges()).containsExactly(r(0, 40), r(60, 100));
    assertThat(set.minus(r(0, 100)).isEmpty()).isTrue();
  }

  @Test
  void shouldIntersectWithAWindow() {
    BucketRangeSet set = BucketRangeSet.of(r(0, 10), r(20, 30), r(40, 50));

    assertThat(set.intersect(r(5, 45)).ranges()).containsExactly(r(5, 10), r(20, 30), r(40, 45));
  }

  @Test
  void shouldRejectAnEmptyRange() {
    assertThatThrownBy(() -> r(5, 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[5, 5)");
  }

  @Property(tries = 500)
  void unionContainsExactlyTheValuesOfItsRanges(
      @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 200) Integer> starts,
      @ForAll @Size(max = 12) List<@IntRange(min = 1, max = 30) Integer> widths,
      @ForAll @IntRange(min = -5, max = 240) int probe) {
    List<BucketRange> ranges = new ArrayList<>();
    for (int i = 0; i < Math.min(starts.size(), widths.size()); i++) {
      ranges.add(r(starts.get(i), starts.get(i) + widths.get(i)));
    }

    BucketRangeSet set = BucketRangeSet.of(ranges);

    boolean expected = ranges.stream().anyMatch(range -> range.contains(probe));
    assertThat(set.contains(probe)).isEqualTo(expected);
    for (int i = 1; i < set.ranges().size(); i++) {
      // Sorted, disjoint and never touching: a gap separates consecutive ranges.
      assertThat(set.ranges().get(i).start()).isGreaterThan(set.ranges().get(i - 1).end());
    }
  }
}
