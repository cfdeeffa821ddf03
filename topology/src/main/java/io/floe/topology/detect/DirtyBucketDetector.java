package io.floe.topology.detect;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.ManifestWork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * Works out from file statistics alone which buckets of which views one snapshot changed (DESIGN
 * §3.2–§3.4); no data file is read.
 *
 * <ul>
 *   <li>{@code replace} (compaction) changes no row and dirties nothing.
 *   <li>{@code append} dirties the buckets of the files it added.
 *   <li>{@code overwrite} and {@code delete} also dirty the buckets of the data files they removed
 *       (their statistics are read from the parent snapshot's manifests, since removed entries in
 *       new manifests carry none) and of every data file an added or removed delete file applies
 *       to, matched as Iceberg's planning matches them ({@link DeleteTargets}) from only the data
 *       manifests that can hold them.
 * </ul>
 *
 * Each file contributes {@code [floor(min), floor(max) + 1 bucket)} of its bucket-column bounds,
 * and the null bucket when it holds nulls ({@link FileBuckets}). When that cannot be made exact (no
 * bounds, an unknown operation, a bucket column the snapshot's schema lacks), the view is fully
 * refreshed, with the reason.
 */
public final class DirtyBucketDetector {

  private DirtyBucketDetector() {}

  /**
   * The dirty buckets of each view, for snapshot {@code snapshotId} of {@code table}.
   *
   * @param manifests where the manifests the walk reads are read ahead, at once, when the table is
   *     on a remote store ({@link ManifestWork#readAhead}); {@link ManifestWork#LOCAL_READS}: never
   * @return per view name, possibly {@link DirtyBuckets#none()}
   */
  public static Map<String, DirtyBuckets> detect(
      Table table, long snapshotId, List<BucketedView> views, ManifestWork manifests) {
    Snapshot snapshot = table.snapshot(snapshotId);
    Map<String, DirtyBuckets> dirty = new LinkedHashMap<>();
    if (views.isEmpty()) {
      return dirty;
    }
    if (snapshot == null) {
      views.forEach(
          v -> dirty.put(v.view(), DirtyBuckets.all("snapshot " + snapshotId + " has expired")));
      return dirty;
    }
    String operation = snapshot.operation();
    if (DataOperations.REPLACE.equals(operation)) {
      views.forEach(v -> dirty.put(v.view(), DirtyBuckets.none()));
      return dirty;
    }
    if (!DataOperations.APPEND.equals(operation)
        && !DataOperations.OVERWRITE.equals(operation)
        && !DataOperations.DELETE.equals(operation)) {
      views.forEach(
          v ->
              dirty.put(
                  v.view(),
                  DirtyBuckets.all(
                      "snapshot " + snapshotId + " has unknown operation " + operation)));
      return dirty;
    }

    Changes changes;
    try {
      changes = changes(table, snapshot, manifests);
    } catch (MissingStatisticsException e) {
      views.forEach(v -> dirty.put(v.view(), DirtyBuckets.all(e.getMessage())));
      return dirty;
    }
    Schema schema = schemaOf(table, snapshot);
    for (BucketedView view : views) {
      dirty.put(view.view(), dirtyBuckets(view, schema, changes));
    }
    return dirty;
  }

  /** The data files whose rows a snapshot changed, with their statistics. */
  private record Changes(List<ContentFile<?>> files) {}

  private static Changes changes(Table table, Snapshot snapshot, ManifestWork manifests) {
    // Iceberg's walk of the snapshot's changes and the walk of its parent's rewritten manifests
    // below read manifest after manifest: on a remote store they are read at once first (on local
    // files not even listed, which could read the parent's manifest list).
    manifests.readAhead(table, () -> changedManifests(table, snapshot));
    List<ContentFile<?>> files = new ArrayList<>();
    for (DataFile added : snapshot.addedDataFiles(table.io())) {
      files.add(added);
    }
    Set<String> removed = new HashSet<>();
    for (DataFile file : snapshot.removedDataFiles(table.io())) {
      removed.add(file.location());
    }
    if (!removed.isEmpty()) {
      files.addAll(removedWithStatistics(table, snapshot, removed));
    }
    List<DeleteFile> addedDeletes = list(snapshot.addedDeleteFiles(table.io()));
    if (!addedDeletes.isEmpty()) {
      files.addAll(DeleteTargets.dataFilesAffectedBy(table, snapshot, addedDeletes, manifests));
    }
    List<DeleteFile> removedDeletes = list(snapshot.removedDeleteFiles(table.io()));
    if (!removedDeletes.isEmpty() && snapshot.parentId() != null) {
      Snapshot parent = table.snapshot(snapshot.parentId());
      if (parent == null) {
        throw new MissingStatisticsException(
            "the parent of snapshot "
                + snapshot.snapshotId()
                + " has expired, so the rows its removed delete files bring back are unknown");
      }
      // Rows come back when a delete file goes, unless their data file went too (counted above).
      files.addAll(
          DeleteTargets.dataFilesAffectedBy(
              table,
              parent,
              removedDeletesWithStatistics(table, snapshot, parent, removedDeletes),
              manifests));
    }
    return new Changes(files);
  }

  /**
   * The manifests the walk of the snapshot's changes may read: those the snapshot wrote, and, for
   * an operation that can remove files, those of its parent that it rewrote.
   */
  private static List<ManifestFile> changedManifests(Table table, Snapshot snapshot) {
    List<ManifestFile> changed = new ArrayList<>();
    Set<String> listed = new HashSet<>();
    for (ManifestFile manifest : snapshot.allManifests(table.io())) {
      listed.add(manifest.path());
      if (Long.valueOf(snapshot.snapshotId()).equals(manifest.snapshotId())) {
        changed.add(manifest);
      }
    }
    Snapshot parent = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId());
    if (parent != null && !DataOperations.APPEND.equals(snapshot.operation())) {
      for (ManifestFile manifest : parent.allManifests(table.io())) {
        if (!listed.contains(manifest.path())) {
          changed.add(manifest);
        }
      }
    }
    return changed;
  }

  private static List<DeleteFile> list(Iterable<DeleteFile> files) {
    List<DeleteFile> list = new ArrayList<>();
    files.forEach(list::add);
    return list;
  }

  /**
   * The removed data files as the parent snapshot's manifests list them, with statistics. Only
   * manifests the snapshot rewrote can hold them.
   */
  private static List<DataFile> removedWithStatistics(
      Table table, Snapshot snapshot, Set<String> removed) {
    if (snapshot.parentId() == null || table.snapshot(snapshot.parentId()) == null) {
      throw new MissingStatisticsException(
          "the parent of snapshot "
              + snapshot.snapshotId()
              + " has expired, so the bounds of the files it removed are unknown");
    }
    Snapshot parent = table.snapshot(snapshot.parentId());
    List<DataFile> found =
        rewrittenEntries(
            snapshot.dataManifests(table.io()),
            parent.dataManifests(table.io()),
            manifest -> ManifestFiles.read(manifest, table.io(), table.specs()),
            removed);
    if (found.size() < removed.size()) {
      throw new MissingStatisticsException(
          "snapshot "
              + snapshot.snapshotId()
              + " removed data files whose entries are not in its parent's manifests");
    }
    return found;
  }

  /**
   * The removed delete files as the parent snapshot's delete manifests list them, with the
   * statistics that narrow what they apply to (removed entries carry none); any not found there
   * stay as they are and match conservatively. Only manifests the snapshot rewrote can hold them.
   */
  private static List<DeleteFile> removedDeletesWithStatistics(
      Table table, Snapshot snapshot, Snapshot parent, List<DeleteFile> removed) {
    Map<String, DeleteFile> byLocation = new LinkedHashMap<>();
    removed.forEach(file -> byLocation.put(file.location(), file));
    rewrittenEntries(
            snapshot.deleteManifests(table.io()),
            parent.deleteManifests(table.io()),
            manifest -> ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs()),
            byLocation.keySet())
        .forEach(file -> byLocation.put(file.location(), file));
    return new ArrayList<>(byLocation.values());
  }

  /**
   * The entries, with their statistics, of the files at {@code locations} in those of the parent's
   * {@code parentManifests} that the snapshot, whose manifests of the same content are {@code
   * manifests}, did not keep: only a manifest the snapshot rewrote can list a file it removed.
   */
  private static <F extends ContentFile<F>> List<F> rewrittenEntries(
      List<ManifestFile> manifests,
      List<ManifestFile> parentManifests,
      Function<ManifestFile, ManifestReader<F>> read,
      Set<String> locations) {
    Set<String> kept = new HashSet<>();
    for (ManifestFile manifest : manifests) {
      kept.add(manifest.path());
    }
    List<F> found = new ArrayList<>();
    for (ManifestFile manifest : parentManifests) {
      if (kept.contains(manifest.path())) {
        continue;
      }
      try (ManifestReader<F> reader = read.apply(manifest)) {
        for (F file : reader) {
          if (locations.contains(file.location())) {
            found.add(file.copy());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return found;
  }

  private static Schema schemaOf(Table table, Snapshot snapshot) {
    Integer id = snapshot.schemaId();
    Schema schema = id == null ? null : table.schemas().get(id);
    return schema == null ? table.schema() : schema;
  }

  private static DirtyBuckets dirtyBuckets(BucketedView view, Schema schema, Changes changes) {
    Types.NestedField field = schema.caseInsensitiveFindField(view.bucketColumn());
    if (field == null) {
      return DirtyBuckets.all(
          "the source schema has no column " + view.bucketColumn() + " any more");
    }
    Optional<BucketColumnType> type = BucketColumnType.of(field.type());
    if (type.isEmpty() || (type.get().isDate() && view.granularity().isTimeOfDay())) {
      return DirtyBuckets.all(
          "source column " + field.name() + " is now " + field.type() + ", not a bucket column");
    }
    FileBuckets.Union dirtied =
        new FileBuckets.Union(field, Bucketing.of(view.granularity(), type.get(), view.zone()));
    for (ContentFile<?> file : changes.files()) {
      if (!dirtied.add(file)) {
        return DirtyBuckets.all(
            "file " + file.location() + " has no bounds for bucket column " + field.name());
      }
    }
    return dirtied.dirty();
  }

  /** The statistics needed to bound a change are gone: views must fully refresh. */
  private static final class MissingStatisticsException extends RuntimeException {
    MissingStatisticsException(String message) {
      super(message);
    }
  }
}
