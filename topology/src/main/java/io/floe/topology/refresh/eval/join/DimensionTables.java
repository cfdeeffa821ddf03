package io.floe.topology.refresh.eval.join;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.scan.RecordBatches;
import io.floe.topology.refresh.eval.scan.ScanColumns;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The hash tables of the dimensions joined by the views in force, each built once per pinned
 * dimension snapshot and kept while it is in use: a table is keyed by the dimension's UUID, the
 * snapshot and the columns it holds, so a refresh that pins the same snapshot reuses it, and a new
 * snapshot of the dimension builds a new one (the old one ages out). Together they take at most
 * {@link #BYTES_CONFIG} bytes of heap, and a dimension that alone would take more is rejected with
 * the reason ({@link DimensionTable.DimensionTooLargeException}). Thread-safe: concurrent refreshes
 * asking for the same table wait for one build.
 */
public final class DimensionTables {

  /** The setting that bounds the heap of the dimensions' hash tables, in bytes. */
  public static final String BYTES_CONFIG = "floe.join.dimension.bytes";

  /** Its default: 256 MiB. */
  public static final long BYTES_DEFAULT = 256L << 20;

  /** A built table: which dimension, snapshot, keys and columns. */
  private record Key(String table, long snapshotId, List<String> keys, List<String> columns) {}

  /** The snapshot id of a dimension that has none yet: its table has no rows. */
  public static final long NO_SNAPSHOT = -1L;

  private final long maxBytes;
  private final ManifestWork manifests;
  private final Cache<Key, DimensionTable> tables;
  private final AtomicLong builds = new AtomicLong();

  /**
   * Tables whose dimensions are planned as a local table is.
   *
   * @param maxBytes the heap all tables may take together, and each alone
   */
  public DimensionTables(long maxBytes) {
    this(maxBytes, ManifestWork.LOCAL_READS);
  }

  /**
   * @param maxBytes the heap all tables may take together, and each alone
   * @param manifests where a dimension's scan reads its manifests (on a remote store, the pool of
   *     remote reads)
   */
  public DimensionTables(long maxBytes, ManifestWork manifests) {
    this.maxBytes = maxBytes;
    this.manifests = manifests;
    this.tables =
        Caffeine.newBuilder()
            .maximumWeight(maxBytes)
            .weigher(
                (Key key, DimensionTable table) -> (int) Math.min(Integer.MAX_VALUE, table.bytes()))
            .build();
  }

  /**
   * The hash table of {@code dimension} at snapshot {@code snapshotId}, built from it (every live
   * row, deletes applied) unless a table of the same snapshot, keys and columns is held; empty at
   * {@link #NO_SNAPSHOT}.
   *
   * @param keys the dimension's key columns, in the order of the join's keys
   * @param columns the columns the view needs (keys and contributed columns), in schema order
   * @throws DimensionTable.DimensionTooLargeException when its table would take more than the bound
   */
  public DimensionTable tableOf(
      Table dimension, long snapshotId, List<String> keys, List<String> columns) {
    Key key =
        new Key(dimension.uuid().toString(), snapshotId, List.copyOf(keys), List.copyOf(columns));
    return tables.get(key, k -> build(dimension, snapshotId, k));
  }

  /**
   * Why the hash table of {@code dimension} at its current snapshot cannot fit {@code maxBytes},
   * judged without reading a row: its live rows are at least the records of its data files less its
   * position deletes (the snapshot summary's totals, which Iceberg keeps from the manifests), and
   * each row takes at least {@link DimensionTable.Builder#minimumBytes}. Empty when it may fit, or
   * when equality deletes make the live rows unbounded from below; the build enforces the bound on
   * the rows it reads.
   *
   * @param columns the columns its table holds (keys and contributed columns)
   */
  public static Optional<String> tooLarge(Table dimension, List<String> columns, long maxBytes) {
    Snapshot current = dimension.currentSnapshot();
    if (current == null || current.summary() == null) {
      return Optional.empty();
    }
    Map<String, String> summary = current.summary();
    long records = total(summary, SnapshotSummary.TOTAL_RECORDS_PROP);
    long positionDeletes = total(summary, SnapshotSummary.TOTAL_POS_DELETES_PROP);
    long equalityDeletes = total(summary, SnapshotSummary.TOTAL_EQ_DELETES_PROP);
    if (records < 0 || positionDeletes < 0 || equalityDeletes != 0) {
      return Optional.empty();
    }
    long rows = Math.max(0, records - positionDeletes);
    long least = DimensionTable.Builder.minimumBytes(rows, columns.size());
    if (least <= maxBytes) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            "dimension %s is too large to join: its %,d live rows at snapshot %d take at least"
                + " %,d bytes in a hash table of %d columns (%s), over the bound of %,d bytes"
                + " %s sets; join a smaller dimension (a subset in a table of its own) or raise %s",
            dimension.name(),
            rows,
            current.snapshotId(),
            least,
            columns.size(),
            String.join(", ", columns),
            maxBytes,
            BYTES_CONFIG,
            BYTES_CONFIG));
  }

  /** A total of a snapshot summary, 0 when absent, -1 when it does not parse. */
  private static long total(Map<String, String> summary, String key) {
    String value = summary.get(key);
    if (value == null) {
      return 0;
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** How many tables were built so far (not found held). */
  public long builds() {
    return builds.get();
  }

  private DimensionTable build(Table dimension, long snapshotId, Key key) {
    builds.incrementAndGet();
    Snapshot snapshot = snapshotId == NO_SNAPSHOT ? null : dimension.snapshot(snapshotId);
    if (snapshotId != NO_SNAPSHOT && snapshot == null) {
      throw new IllegalArgumentException(
          "Cannot join dimension " + dimension.name() + ": it has no snapshot " + snapshotId);
    }
    Schema schema =
        snapshot == null ? dimension.schema() : SnapshotUtil.schemaFor(dimension, snapshotId);
    List<Types.NestedField> fields = schema.columns();
    Schema projection = schema.select(key.columns());
    int[] positions = new int[projection.columns().size()];
    Type[] types = new Type[positions.length];
    for (int i = 0; i < positions.length; i++) {
      Types.NestedField field = projection.columns().get(i);
      positions[i] = fields.indexOf(schema.findField(field.fieldId()));
      types[i] = field.type();
    }
    int[] keyPositions = new int[key.keys().size()];
    for (int k = 0; k < keyPositions.length; k++) {
      keyPositions[k] = fields.indexOf(schema.findField(key.keys().get(k)));
    }
    DimensionTable.Builder builder =
        new DimensionTable.Builder(
            dimension.name() + " at snapshot " + snapshotId,
            fields.size(),
            keyPositions,
            positions,
            types,
            maxBytes,
            BYTES_CONFIG);
    String mapping = dimension.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    NameMapping nameMapping = mapping == null ? null : NameMappingParser.fromJson(mapping);
    ScanColumns columns =
        new ScanColumns(
            dimension.io(),
            StorageKind.of(dimension),
            schema,
            projection,
            positions,
            Expressions.alwaysTrue(),
            -1,
            null,
            false,
            nameMapping);
    Vector[] vectors = new Vector[fields.size()];
    for (int i = 0; i < positions.length; i++) {
      vectors[positions[i]] = Vectors.forIceberg(types[i]);
    }
    Object[] row = new Object[fields.size()];
    BatchSink sink =
        BatchSink.of(
            vectors,
            n -> {
              for (int r = 0; r < n; r++) {
                for (int p : positions) {
                  row[p] = vectors[p].get(r);
                }
                builder.add(row);
              }
            });
    if (snapshot == null) {
      return builder.build();
    }
    try (CloseableIterable<FileScanTask> tasks =
        manifests
            .scan(
                dimension.newScan().useSnapshot(snapshotId).select(key.columns()),
                dimension,
                snapshot)
            .planFiles()) {
      for (FileScanTask task : tasks) {
        RecordBatches.read(columns, task, sink);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read dimension " + dimension.name(), e);
    }
    return builder.build();
  }
}
