package io.floe.topology.refresh;

import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewValidator;
import java.util.List;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;

/**
 * How a target's files are laid out so that the write cost of a refresh follows the size of its
 * dirty buckets, never the size of the files they share (DESIGN §5).
 *
 * <ul>
 *   <li>Partitions: {@code target_partitioning} when the view sets it; otherwise a coarser unit of
 *       the bucket column, so that a refresh of the current minute never meets the files of other
 *       days: minute and hour views (and strides shorter than a day) by day, day views (and longer
 *       strides) by month, coarser views unpartitioned (a partition of weeks or months would hold
 *       only a few buckets each).
 *   <li>Files: a refresh writes the recomputed rows of each contiguous dirty range in files of
 *       their own, apart from the rows it keeps from the files it rewrites (see {@link
 *       TargetWriter}), so that the recently refreshed buckets live in small files that the next
 *       refresh of the same buckets rewrites, or deletes, cheaply; compaction ({@link
 *       TargetCompaction}) later merges them once they have gone cold.
 * </ul>
 *
 * An existing target keeps its partitioning unless {@code target_partitioning} asks for another one
 * or the view no longer outputs a column it is partitioned by.
 */
final class TargetLayout {

  private static final long SECONDS_PER_DAY = 86_400L;

  private TargetLayout() {}

  /** The partition fields of the view's target: its own, or the default for its granularity. */
  static List<TargetPartitionField> partitioning(ViewDefinition view, ViewPlan plan) {
    if (!view.targetPartitioning().isEmpty()) {
      return view.targetPartitioning();
    }
    Granularity granularity = plan.granularity();
    // A stride partitions as the unit it is shorter than: 5-minute and 6-hour bars by day, bins
    // of a day or more by month.
    if (granularity.isTimeOfDay() && granularity.seconds() < SECONDS_PER_DAY) {
      return List.of(new TargetPartitionField("day", plan.bucketOutput(), 0));
    }
    if (granularity.isTimeOfDay() || granularity.timeUnit() == Granularity.Unit.DAY) {
      return List.of(new TargetPartitionField("month", plan.bucketOutput(), 0));
    }
    return List.of();
  }

  /** The partition spec a new target of the view is created with. */
  static PartitionSpec newSpec(ViewDefinition view, ViewPlan plan, Schema schema) {
    ViewDefinition laidOut =
        new ViewDefinition(
            view.name(),
            view.query(),
            view.target(),
            partitioning(view, plan),
            view.zone(),
            view.refresh());
    return ViewValidator.partitionSpec(laidOut, schema);
  }

  /**
   * The spec an existing target must move to, or null when its own spec stays: a view without
   * {@code target_partitioning} leaves an existing target's partitioning alone (targets of earlier
   * releases stay unpartitioned) unless one of its source columns is no longer an output column.
   */
  static PartitionSpec evolvedSpec(Table table, ViewDefinition view, ViewPlan plan, Schema output) {
    PartitionSpec current = table.spec();
    if (view.targetPartitioning().isEmpty() && sourcesRemain(current, table.schema(), output)) {
      return null;
    }
    PartitionSpec wanted = newSpec(view, plan, table.schema());
    return current.compatibleWith(wanted) ? null : wanted;
  }

  private static boolean sourcesRemain(PartitionSpec spec, Schema schema, Schema output) {
    for (PartitionField field : spec.fields()) {
      if (field.transform().isVoid()) {
        continue;
      }
      String name = schema.findColumnName(field.sourceId());
      if (name == null || output.findField(name) == null) {
        return false;
      }
    }
    return true;
  }
}
