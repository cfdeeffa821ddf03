package io.floe.topology.processor;

import io.floe.topology.store.DirtyUpdate;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Which partition of the dirty-buckets topic, and so which task, a view belongs to: the repartition
 * by view writes with it and the maintain stage asks it which views its task owns, so the two
 * cannot disagree. It places a view where Kafka's default partitioner placed its UTF-8 name
 * (murmur2), so the state stores written before it existed stay with their tasks.
 */
public final class ViewPartitioner implements StreamPartitioner<String, DirtyUpdate> {

  /** The one instance: it holds no state. */
  public static final ViewPartitioner INSTANCE = new ViewPartitioner();

  private ViewPartitioner() {}

  @Override
  public Optional<Set<Integer>> partitions(
      String topic, String view, DirtyUpdate value, int numPartitions) {
    // A record without a view is dropped by the maintain stage; Kafka's default places it.
    return view == null ? Optional.empty() : Optional.of(Set.of(partition(view, numPartitions)));
  }

  /** The partition of {@code view} among {@code numPartitions}. */
  public int partition(String view, int numPartitions) {
    return Utils.toPositive(Utils.murmur2(view.getBytes(StandardCharsets.UTF_8))) % numPartitions;
  }
}
