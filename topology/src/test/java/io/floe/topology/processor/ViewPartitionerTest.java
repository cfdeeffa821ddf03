package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;

/** The one placement of views on the tasks of the maintain stage. */
class ViewPartitionerTest {

  private static final List<String> VIEWS =
      List.of("bars", "ohlcv_1m", "ohlcv_1h", "trades_per_day", "vue_été", "x", "a.b-c_d");

  @Test
  void shouldPlaceEachViewWhereKafkasDefaultPartitionerPlacedItsKey() {
    // Given the keys as the repartition topic's key serde writes them
    for (int partitions : new int[] {1, 3, 8, 12}) {
      for (String view : VIEWS) {
        byte[] key = Serdes.String().serializer().serialize("floe-dirty-buckets-repartition", view);

        // When the partitioner places the view
        int placed = ViewPartitioner.INSTANCE.partition(view, partitions);

        // Then state written under the default partitioner stays with its task
        assertThat(placed)
            .as("%s among %d partitions", view, partitions)
            .isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
        assertThat(ViewPartitioner.INSTANCE.partitions("topic", view, null, partitions))
            .contains(Set.of(placed));
      }
    }
  }

  @Test
  void shouldLeaveARecordWithoutAViewToTheDefaultPlacement() {
    assertThat(ViewPartitioner.INSTANCE.partitions("topic", null, null, 4)).isEmpty();
  }
}
