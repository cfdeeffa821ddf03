package io.floe.topology.refresh;

import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.SourceColumns;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Whether a view's target is current, told from the tables alone (DESIGN §3.6): its bookmark names
 * the source's newest data-changing snapshot, no chunked refresh is half done, it was computed by
 * the view's current definition, and the source's current schema and name mapping give the view the
 * columns it was computed from ({@code floe.source-columns}, when recorded): a schema change
 * creates no snapshot, and a target waiting for the full refresh it causes is not current.
 */
public final class Freshness {

  private Freshness() {}

  /** The source's newest snapshot that changed rows (compactions change none), as of now. */
  public static Optional<Snapshot> latestDataChange(Table source) {
    source.refresh();
    for (Snapshot s : SnapshotUtil.currentAncestors(source)) {
      if (!DataOperations.REPLACE.equals(s.operation())) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code target} holds the view (of version {@code viewVersion}) of {@code source} now.
   */
  public static boolean isCurrent(Table target, Table source, String viewVersion) {
    Optional<Snapshot> latest = latestDataChange(source);
    target.refresh();
    return latest.isPresent()
        && String.valueOf(latest.get().snapshotId())
            .equals(target.properties().get(FloeProperties.SOURCE_SNAPSHOT_ID))
        && target.properties().get(FloeProperties.PROGRESS) == null
        && viewVersion.equals(target.properties().get(FloeProperties.VIEW_VERSION))
        && readsAsRecorded(Bookmark.of(target), source);
  }

  /**
   * Whether {@code target} holds the view (of version {@code viewVersion}) of {@code source} and of
   * each of {@code dimensions}, the tables it joins (DESIGN §3.10), as they are now: besides {@link
   * #isCurrent(Table, Table, String)}, the target records each dimension at its current snapshot,
   * or at its newest data-changing one (a compaction of a dimension asks no refresh).
   */
  public static boolean isCurrent(
      Table target, Table source, List<Table> dimensions, String viewVersion) {
    if (!isCurrent(target, source, viewVersion)) {
      return false;
    }
    DimensionStates recorded;
    try {
      recorded = Bookmark.of(target).parsedDimensionStates();
    } catch (IllegalArgumentException e) {
      return false;
    }
    for (Table dimension : dimensions) {
      Long changed = latestDataChange(dimension).map(Snapshot::snapshotId).orElse(null);
      Long current =
          dimension.currentSnapshot() == null ? null : dimension.currentSnapshot().snapshotId();
      String uuid = dimension.uuid().toString();
      boolean reflected =
          recorded.states().stream()
              .anyMatch(
                  s ->
                      s.uuid().equals(uuid)
                          && (Objects.equals(s.snapshotId(), current)
                              || Objects.equals(s.snapshotId(), changed)));
      if (!reflected) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the source, as it is now, gives the view the columns the bookmark records (true when it
   * records none: a target of an earlier release), as {@link RefreshPlanner} compares them.
   */
  private static boolean readsAsRecorded(Bookmark bookmark, Table source) {
    if (bookmark.sourceColumns() == null) {
      return true;
    }
    SourceColumns recorded = bookmark.parsedSourceColumns();
    SourceColumns now = recorded == null ? null : recorded.resolvedIn(source.schema());
    return now != null && now.withNameMapping(ViewScan.nameMapping(source)).isSameAs(recorded);
  }
}
