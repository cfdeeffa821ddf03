package io.floe.topology.refresh;

import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

/**
 * One full refresh of a view over synthetic rows held in memory, which a new JVM runs once so that
 * its first real refresh finds the engine compiled: in a JVM that had refreshed nothing, the first
 * chunk of a 10 M-row backfill ran 5-6x slower than the next ones, in the interpreter and the first
 * compilation tiers, loading the classes of the Parquet reader, the engine and the writer. The rows
 * are written as Parquet with the same writer and read with the same reader and aggregation as
 * every refresh, under an in-memory catalog whose files are deleted afterwards. The view groups by
 * a string and a minute bucket and computes each of the common aggregates on a double and a long
 * column, so that the hot loops of each are compiled; views of other shapes still gain the reader,
 * the group table and the writer.
 *
 * <p>The synthetic source is shaped like the sources of real views, so that the reader's paths the
 * first real refresh takes are the ones compiled: nullable columns with a rare null (Iceberg's
 * columns are usually optional, and the reader decodes definition levels for them), a table
 * partitioned by day into a file a day, and prices that are dictionary-encoded in half of the files
 * (cents, as trades have) and plain in the others.
 */
public final class EngineWarmup {

  private static final String CATALOG = "floe_warmup";
  private static final Namespace NAMESPACE = Namespace.of("synthetic");

  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.optional(1, "key", Types.StringType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(3, "price", Types.DoubleType.get()),
          Types.NestedField.optional(4, "quantity", Types.LongType.get()));

  static final PartitionSpec BY_DAY = PartitionSpec.builderFor(SCHEMA).day("ts").build();

  private static final String QUERY =
      "SELECT key, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS first_price,"
          + " max_by(price, ts) AS last_price, min(price) AS low, max(price) AS high,"
          + " sum(quantity) AS quantity, avg(price) AS mean_price, count(*) AS n"
          + " FROM "
          + CATALOG
          + ".synthetic.source GROUP BY 1, 2";

  private static final Instant DAY = Instant.parse("2000-01-01T00:00:00Z");
  private static final int KEYS = 16;

  /** Days of the synthetic source, one file each. */
  static final int DAYS = 4;

  /** One row in this many has a null price, and one in a slightly larger number a null quantity. */
  private static final int NULL_EVERY = 997;

  /**
   * Rounds of a warm-up between refreshes: a refresh that arrives while one runs shares the cores
   * with an eighth of the warm-up at most, and the loops still run over every row in all.
   */
  static final int ROUNDS = 8;

  /** Waits until the warm-up may take the cores for one round. */
  @FunctionalInterface
  public interface Turn {
    void await() throws InterruptedException;
  }

  private EngineWarmup() {}

  /**
   * The warm-up of {@code rows} rows in {@link #ROUNDS} rounds of a fresh refresh each, every one
   * after {@code turn} lets it go: in a service, when its refreshes leave the cores idle.
   *
   * @return the rows the rounds' refreshes read, {@code rows} in all
   */
  public static long runBetween(int rows, Turn turn) throws InterruptedException {
    long read = 0;
    for (int round = 0; round < ROUNDS; round++) {
      int share = rows / ROUNDS + (round < rows % ROUNDS ? 1 : 0);
      turn.await();
      read += run(share).work().rowsRead();
    }
    return read;
  }

  /**
   * Writes {@code rows} synthetic rows and refreshes the view over them, then deletes what it
   * wrote.
   *
   * @return what the refresh did
   */
  public static RefreshOutcome run(int rows) {
    InMemoryCatalog catalog = new InMemoryCatalog();
    // In-memory files live in one map per JVM: a warehouse of its own keeps them apart.
    catalog.initialize(CATALOG, Map.of("warehouse", "memory://floe-warmup-" + UUID.randomUUID()));
    try {
      catalog.createNamespace(NAMESPACE);
      Table source =
          catalog
              .buildTable(TableIdentifier.of(NAMESPACE, "source"), SCHEMA)
              .withPartitionSpec(BY_DAY)
              .withProperty("format-version", "2")
              .create();
      AppendFiles append = source.newAppend();
      write(source, rows).forEach(append::appendFile);
      append.commit();
      CompiledView view =
          CompiledView.compile(
              ViewDefinition.of(
                  "floe_warmup", QUERY, TableName.parse(CATALOG + ".synthetic.target")),
              0);
      return new ViewRefresher(name -> catalog)
          .refresh(
              RefreshRequest.of(
                  view, source.currentSnapshot().snapshotId(), null, DirtyBuckets.none()),
              ViewRefresher.ProgressListener.NONE);
    } catch (InvalidViewException e) {
      throw new IllegalStateException("Invalid warm-up view: " + e.getMessage(), e);
    } finally {
      for (TableIdentifier table : catalog.listTables(NAMESPACE)) {
        catalog.dropTable(table, true);
      }
      try {
        catalog.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * {@code rows} rows over {@link #DAYS} days, in one file a day: a trade-like mix of keys, prices
   * and quantities, with prices in cents on even days and unrounded on odd ones.
   */
  static List<DataFile> write(Table table, int rows) {
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).dataFileFormat(FileFormat.PARQUET).build();
    OutputFileFactory files = OutputFileFactory.builderFor(table, 1, 1).build();
    Random random = new Random(rows);
    List<DataFile> written = new ArrayList<>();
    int row = 0;
    for (int day = 0; day < DAYS; day++) {
      int dayRows = rows / DAYS + (day < rows % DAYS ? 1 : 0);
      written.add(writeDay(table, writers, files, random, day, dayRows, row));
      row += dayRows;
    }
    return written;
  }

  private static DataFile writeDay(
      Table table,
      GenericFileWriterFactory writers,
      OutputFileFactory files,
      Random random,
      int day,
      int rows,
      int first) {
    GenericRecord row = GenericRecord.create(SCHEMA);
    Instant start = DAY.plus(Duration.ofDays(day));
    long step = 86_400_000_000L / Math.max(rows, 1);
    PartitionKey partition = new PartitionKey(table.spec(), SCHEMA);
    row.set(1, OffsetDateTime.ofInstant(start, ZoneOffset.UTC));
    partition.partition(new InternalRecordWrapper(SCHEMA.asStruct()).wrap(row));
    DataWriter<Record> writer =
        writers.newDataWriter(files.newOutputFile(partition), table.spec(), partition);
    try (writer) {
      for (int i = 0; i < rows; i++) {
        int n = first + i;
        Instant at = start.plusNanos(1000 * (i * step));
        double price = 100 + random.nextGaussian();
        row.set(0, "K" + random.nextInt(KEYS));
        row.set(1, OffsetDateTime.ofInstant(at, ZoneOffset.UTC));
        row.set(
            2, n % NULL_EVERY == 0 ? null : day % 2 == 0 ? Math.round(price * 100) / 100.0 : price);
        row.set(3, n % (NULL_EVERY + 2) == 0 ? null : 1L + random.nextInt(1000));
        writer.write(row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return writer.toDataFile();
  }
}
