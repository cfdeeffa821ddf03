package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.CompiledQuery;
import io.floe.topology.refresh.eval.ViewScan;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.BaseCombinedScanTask;
import org.apache.iceberg.CombinedScanTask;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.arrow.ArrowAllocation;
import org.apache.iceberg.arrow.ArrowSchemaUtil;
import org.apache.iceberg.arrow.vectorized.ArrowReader;
import org.apache.iceberg.arrow.vectorized.ColumnVector;
import org.apache.iceberg.arrow.vectorized.ColumnarBatch;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * Scenario {@code readers}: the engine question of a full refresh, measured. Over the live data
 * files of one snapshot of the backfill's source, one thread each, side by side in one JVM: how
 * fast Iceberg's generic reader, Iceberg's Arrow vectorized reader and DuckDB's own Parquet reader
 * decode the four columns the 1-minute OHLCV view reads, and how fast the 1-minute OHLCV
 * aggregation runs as a typed group-by over the generic reader, as Floe's {@link ViewScan} (its own
 * Parquet reader, {@code ParquetBatches}, and its vectorized aggregation), as DuckDB fed the Arrow
 * reader's batches, and as DuckDB over the files. Every reader makes an untimed pass first; the
 * figure is the best of the timed passes. Not part of the default set.
 */
final class ReadersScenario {

  static final String NAME = "readers";

  /** The columns of the source the 1-minute OHLCV view reads. */
  static final List<String> COLUMNS = List.of("symbol", "ts", "price", "quantity");

  /**
   * A group-by over the same columns with few groups and plain sums: what is left of a refresh when
   * its aggregation costs little, the closest Floe's public entry point comes to a decode rate.
   */
  static final String LIGHT_QUERY =
      "SELECT symbol, date_trunc('day', ts) AS day_ts, sum(price) AS turnover,"
          + " sum(quantity) AS volume, max(ts) AS last_ts, count(*) AS trades"
          + " FROM lake.market.trades GROUP BY 1, 2";

  /** DuckDB's nearest to a decode rate: every value of the four columns consumed. */
  static final String DUCKDB_SCAN =
      "SELECT sum(hash(symbol)), sum(epoch_us(ts)), sum(price), sum(quantity) FROM ";

  /** Rows per Arrow batch: Iceberg's default for vectorized Parquet reads. */
  static final int ARROW_BATCH = TableProperties.PARQUET_BATCH_SIZE_DEFAULT;

  static final String HEAP = "2g";
  private static final int WARMUP_PASSES = 2;
  private static final int TIMED_PASSES = 5;
  private static final Duration TIMEOUT = Duration.ofMinutes(30);

  /** A measurement: its key in the side's properties and its figure's name. */
  private record Reader(String key, String metric) {}

  private static final List<Reader> READERS =
      List.of(
          new Reader("generic", "decode: Iceberg generic reader (Records)"),
          new Reader("arrow", "decode: Iceberg Arrow vectorized reader"),
          new Reader("duckArrowScan", "decode: DuckDB fed Iceberg Arrow batches"),
          new Reader("duckScan", "decode: DuckDB read_parquet"),
          new Reader("floeLight", "light group-by: Floe ViewScan"),
          new Reader("duckLight", "light group-by: DuckDB read_parquet"),
          new Reader("genericOhlcv", "OHLCV 1m: generic reader + typed HashMap"),
          new Reader("floeOhlcv", "OHLCV 1m: Floe ViewScan (ParquetBatches)"),
          new Reader("duckArrowOhlcv", "OHLCV 1m: DuckDB fed Iceberg Arrow batches"),
          new Reader("duckOhlcv", "OHLCV 1m: DuckDB read_parquet"));

  private static final String BASELINE = "duckOhlcv";

  private ReadersScenario() {}

  static ScenarioResult run(BenchContext ctx) throws Exception {
    // The backfill's source, so that the figures of both scenarios are over the same data.
    long rows = BackfillScenario.sourceRows(ctx);
    int days = BackfillScenario.DAYS;
    ScenarioResult result =
        new ScenarioResult(
                NAME,
                "Readers and engines for a full refresh, one thread each, over the live files of"
                    + " one snapshot of "
                    + rows
                    + " trades: decode rate of the four columns the 1-minute OHLCV view reads,"
                    + " and that view's aggregation, beside DuckDB's over the same files.")
            .parameter("sourceRows", rows)
            .parameter("days", days)
            .parameter("columns", COLUMNS)
            .parameter("arrowBatchRows", ARROW_BATCH)
            .parameter("warmupPasses", WARMUP_PASSES)
            .parameter("timedPasses", TIMED_PASSES)
            .parameter("jvm", "-Xmx" + HEAP);
    Path dir = ctx.dir(NAME);
    try (BenchLake lake = new BenchLake(dir)) {
      ctx.progress(NAME, "writing " + rows + " trades over " + days + " days");
      Table trades = BackfillScenario.writeTrades(lake, rows, days);
      long snapshot = trades.currentSnapshot().snapshotId();
      result.parameter("dataFiles", DuckDb.liveFiles(trades, snapshot).size());
      ctx.progress(NAME, "measuring every reader, one thread each, in a JVM of its own");
      Properties measured =
          ChildJvm.run(
              "The readers' measurements",
              Side.class,
              dir,
              "readers-side",
              Side.JVM_OPTIONS,
              TIMEOUT,
              dir.toString(),
              Long.toString(snapshot));
      double baseline = rate(measured, BASELINE);
      Map<String, String> checks = new LinkedHashMap<>();
      for (Reader reader : READERS) {
        if (measured.getProperty(reader.key() + ".failed") != null) {
          result.note(
              reader.metric() + " FAILED: " + measured.getProperty(reader.key() + ".failed"));
          continue;
        }
        result.figure(
            new Figure(
                reader.metric(),
                "rows/s",
                rate(measured, reader.key()),
                baseline,
                "DuckDB read_parquet OHLCV, 1 thread",
                false));
        checks.put(reader.key(), measured.getProperty(reader.key() + ".check"));
        result.note(
            reader.metric() + ": passes " + measured.getProperty(reader.key() + ".passes") + " s");
      }
      result
          .note("checks (decodes: sum of quantity; group-bys: groups): " + checks)
          .note(
              "Iceberg's Arrow reader gives dictionary-encoded columns as their int32 ids; its"
                  + " decode pass reads values through its accessors (strings decoded once per"
                  + " dictionary id and batch), and DuckDB is fed the same, decoded into plain"
                  + " Arrow vectors (the other columns handed over as they are) through Arrow's C"
                  + " stream interface.")
          .note(
              "iceberg-arrow is the 1.11.0 release (no 1.12 is published) over the build's"
                  + " Iceberg; Arrow 15.0.2.");
    }
    return result;
  }

  private static double rate(Properties measured, String key) {
    String seconds = measured.getProperty(key + ".seconds");
    if (seconds == null) {
      return Double.NaN;
    }
    return Long.parseLong(measured.getProperty(key + ".rows")) / Double.parseDouble(seconds);
  }

  /**
   * The measurements, in the JVM they run in: {@code dir snapshot-id out-file}. Arrow's memory
   * needs {@code java.nio} opened to it on Java 17.
   */
  static final class Side {

    static final List<String> JVM_OPTIONS =
        List.of(
            "-Xmx" + HEAP,
            "-Xms" + HEAP,
            "-XX:+ExitOnOutOfMemoryError",
            "--add-opens=java.base/java.nio=ALL-UNNAMED");

    /** Where every pass puts what it consumed, so that the JIT cannot drop the work. */
    static volatile long blackhole;

    private Side() {}

    /** One pass of a reader over every file: rows read and a check of what it read. */
    private interface Pass {
      long[] run(int pass) throws Exception;
    }

    public static void main(String[] args) throws Exception {
      Path dir = Path.of(args[0]);
      long snapshot = Long.parseLong(args[1]);
      Properties measured = new Properties();
      try (BenchLake lake = new BenchLake(dir);
          Connection duck = DriverManager.getConnection("jdbc:duckdb:");
          Statement sql = duck.createStatement()) {
        Table trades = lake.catalog().loadTable(TableIdentifier.of("market", "trades"));
        Schema schema = trades.schemas().get(trades.snapshot(snapshot).schemaId());
        Schema projection = schema.select(COLUMNS);
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned =
            trades.newScan().useSnapshot(snapshot).planFiles()) {
          planned.forEach(tasks::add);
        }
        long rows = tasks.stream().mapToLong(t -> t.file().recordCount()).sum();
        sql.execute("SET TimeZone = 'UTC'");
        sql.execute("SET threads = 1");
        DuckDb.createSource(sql, DuckDb.liveFiles(trades, snapshot));
        String ohlcv = Oracle.forDuckDb(BackfillScenario.QUERY, trades.name());
        String light = Oracle.forDuckDb(LIGHT_QUERY, trades.name());
        DuckDBConnection duckdb = duck.unwrap(DuckDBConnection.class);

        measure(measured, "generic", p -> generic(trades.io(), tasks, projection));
        measure(measured, "arrow", p -> arrow(trades, snapshot, tasks));
        measure(
            measured,
            "duckArrowScan",
            p -> {
              long sum =
                  overArrow(
                      duckdb, sql, trades, snapshot, tasks, "a" + p, s -> DUCKDB_SCAN + s, true);
              return new long[] {rows, sum};
            });
        measure(measured, "duckScan", p -> new long[] {rows, scalar(sql, DUCKDB_SCAN + "src", 4)});
        measure(measured, "floeLight", p -> floe(trades, schema, tasks, LIGHT_QUERY));
        measure(measured, "duckLight", p -> new long[] {rows, groups(sql, light)});
        measure(measured, "genericOhlcv", p -> genericOhlcv(trades.io(), tasks, projection));
        measure(measured, "floeOhlcv", p -> floe(trades, schema, tasks, BackfillScenario.QUERY));
        measure(
            measured,
            "duckArrowOhlcv",
            p -> {
              long groups =
                  overArrow(
                      duckdb,
                      sql,
                      trades,
                      snapshot,
                      tasks,
                      "b" + p,
                      s -> ohlcv.replaceAll("\\bsrc\\b", s),
                      false);
              return new long[] {rows, groups};
            });
        measure(measured, "duckOhlcv", p -> new long[] {rows, groups(sql, ohlcv)});
      }
      measured.setProperty("blackhole", Long.toString(blackhole));
      ChildJvm.write(measured, args[2], "The readers' measurements");
    }

    /**
     * Untimed passes, then the timed ones, each after a collection; a reader that fails is recorded
     * as failed.
     */
    private static void measure(Properties measured, String key, Pass pass) {
      try {
        for (int p = 0; p < WARMUP_PASSES; p++) {
          pass.run(TIMED_PASSES + 1 + p);
        }
        double best = Double.MAX_VALUE;
        long[] read = null;
        double[] seconds = new double[TIMED_PASSES];
        for (int p = 1; p <= TIMED_PASSES; p++) {
          System.gc();
          long start = System.nanoTime();
          read = pass.run(p);
          seconds[p - 1] = (System.nanoTime() - start) / 1e9;
          best = Math.min(best, seconds[p - 1]);
        }
        measured.setProperty(key + ".seconds", Double.toString(best));
        measured.setProperty(key + ".rows", Long.toString(read[0]));
        measured.setProperty(key + ".check", Long.toString(read[1]));
        measured.setProperty(
            key + ".passes",
            String.join(
                ", ",
                Arrays.stream(seconds)
                    .mapToObj(s -> String.format(Locale.ROOT, "%.3f", s))
                    .toList()));
      } catch (Exception | Error e) {
        e.printStackTrace();
        measured.setProperty(key + ".failed", e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }

    /** Iceberg's generic reader, a Record per row, every value consumed. */
    private static long[] generic(FileIO io, List<FileScanTask> tasks, Schema projection)
        throws IOException {
      int symbol = position(projection, "symbol");
      int ts = position(projection, "ts");
      int price = position(projection, "price");
      int quantity = position(projection, "quantity");
      long rows = 0;
      long hash = 0;
      long volume = 0;
      for (FileScanTask task : tasks) {
        try (CloseableIterable<Record> records = records(io, task, projection)) {
          for (Record record : records) {
            rows++;
            hash = 31 * hash + record.get(symbol, String.class).hashCode();
            OffsetDateTime time = record.get(ts, OffsetDateTime.class);
            if (time != null) {
              hash += micros(time);
            }
            Double p = record.get(price, Double.class);
            if (p != null) {
              hash += Double.doubleToRawLongBits(p);
            }
            Long q = record.get(quantity, Long.class);
            if (q != null) {
              volume += q;
            }
          }
        }
      }
      blackhole += hash;
      return new long[] {rows, volume};
    }

    /** The 1-minute OHLCV view as a typed hash aggregation over the generic reader's records. */
    private static long[] genericOhlcv(FileIO io, List<FileScanTask> tasks, Schema projection)
        throws IOException {
      int symbol = position(projection, "symbol");
      int ts = position(projection, "ts");
      int price = position(projection, "price");
      int quantity = position(projection, "quantity");
      Map<MinuteKey, Ohlcv> groups = new HashMap<>();
      long rows = 0;
      for (FileScanTask task : tasks) {
        try (CloseableIterable<Record> records = records(io, task, projection)) {
          for (Record record : records) {
            rows++;
            OffsetDateTime time = record.get(ts, OffsetDateTime.class);
            long at = time == null ? Long.MIN_VALUE : micros(time);
            MinuteKey key =
                new MinuteKey(
                    record.get(symbol, String.class),
                    time == null ? Long.MIN_VALUE : Math.floorDiv(at, 60_000_000L));
            groups
                .computeIfAbsent(key, k -> new Ohlcv())
                .add(
                    at,
                    time != null,
                    record.get(price, Double.class),
                    record.get(quantity, Long.class));
          }
        }
      }
      long sum = 0;
      for (Ohlcv group : groups.values()) {
        sum += group.trades + Double.doubleToRawLongBits(group.open + group.close);
      }
      blackhole += sum;
      return new long[] {rows, groups.size()};
    }

    private record MinuteKey(String symbol, long minute) {}

    /** One group's OHLCV state, with SQL's null rules. */
    private static final class Ohlcv {
      long openTs = Long.MAX_VALUE;
      long closeTs = Long.MIN_VALUE;
      double open;
      double close;
      double high = Double.NEGATIVE_INFINITY;
      double low = Double.POSITIVE_INFINITY;
      long volume;
      long trades;

      void add(long ts, boolean hasTs, Double price, Long quantity) {
        trades++;
        if (quantity != null) {
          volume += quantity;
        }
        if (price == null) {
          return;
        }
        double p = price;
        high = Math.max(high, p);
        low = Math.min(low, p);
        if (hasTs && ts < openTs) {
          openTs = ts;
          open = p;
        }
        if (hasTs && ts > closeTs) {
          closeTs = ts;
          close = p;
        }
      }
    }

    private static CloseableIterable<Record> records(
        FileIO io, FileScanTask task, Schema projection) {
      return Parquet.read(io.newInputFile(task.file()))
          .project(projection)
          .split(task.start(), task.length())
          .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(projection, fileSchema))
          .build();
    }

    /** Floe's ViewScan with one worker: its Parquet reader and its aggregation. */
    private static long[] floe(Table trades, Schema schema, List<FileScanTask> tasks, String query)
        throws Exception {
      CompiledView view =
          BenchLake.compiled(
              ViewDefinition.of("readers", query, TableName.parse("lake.analytics.readers")));
      CompiledView.Bound bound = view.bind(schema);
      ViewPlan plan = bound.plan();
      CompiledQuery evaluator = CompiledQuery.of(plan);
      ViewScan.Result result =
          ViewScan.evaluate(
              evaluator,
              new ViewScan.Scan(
                  trades.io(),
                  StorageKind.of(trades),
                  schema,
                  tasks,
                  plan.requiredColumns(),
                  plan.bucketColumn(),
                  BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
                  true,
                  Expressions.alwaysTrue(),
                  null,
                  List.of()),
              // One worker, the calling thread: no helper is asked for.
              Runnable::run,
              1);
      blackhole += result.rows().hashCode();
      return new long[] {result.stats().rowsRead(), result.rows().size()};
    }

    /** Iceberg's Arrow reader over the same files. */
    private static ArrowReader arrowReader(Table trades, long snapshot, boolean reuseContainers) {
      TableScan scan = trades.newScan().useSnapshot(snapshot).select(COLUMNS);
      return new ArrowReader(scan, ARROW_BATCH, reuseContainers);
    }

    private static CloseableIterable<CombinedScanTask> combined(List<FileScanTask> tasks) {
      return CloseableIterable.withNoopClose(List.of(new BaseCombinedScanTask(tasks)));
    }

    /**
     * Iceberg's Arrow vectorized reader, every value consumed through its accessors: dictionary ids
     * resolve per value; a string is decoded once per dictionary id and batch.
     */
    private static long[] arrow(Table trades, long snapshot, List<FileScanTask> tasks)
        throws IOException {
      Schema projection = trades.schema().select(COLUMNS);
      int symbol = position(projection, "symbol");
      int ts = position(projection, "ts");
      int price = position(projection, "price");
      int quantity = position(projection, "quantity");
      long rows = 0;
      long hash = 0;
      long volume = 0;
      int[] idHashes = new int[0];
      try (ArrowReader reader = arrowReader(trades, snapshot, true);
          CloseableIterator<ColumnarBatch> batches = reader.open(combined(tasks))) {
        while (batches.hasNext()) {
          ColumnarBatch batch = batches.next();
          int n = batch.numRows();
          rows += n;
          ColumnVector symbols = batch.column(symbol);
          FieldVector symbolVector = symbols.getFieldVector();
          if (symbolVector instanceof VarCharVector plain) {
            for (int i = 0; i < n; i++) {
              hash = 31 * hash + plain.hashCode(i);
            }
          } else {
            IntVector ids = (IntVector) symbolVector;
            Arrays.fill(idHashes, 0);
            for (int i = 0; i < n; i++) {
              int id = ids.get(i);
              if (id >= idHashes.length) {
                idHashes = Arrays.copyOf(idHashes, Math.max(id + 1, 2 * idHashes.length));
              }
              if (idHashes[id] == 0) {
                idHashes[id] = symbols.getString(i).hashCode() | 1;
              }
              hash = 31 * hash + idHashes[id];
            }
          }
          ColumnVector times = batch.column(ts);
          ColumnVector prices = batch.column(price);
          ColumnVector quantities = batch.column(quantity);
          for (int i = 0; i < n; i++) {
            if (!times.isNullAt(i)) {
              hash += times.getLong(i);
            }
            if (!prices.isNullAt(i)) {
              hash += Double.doubleToRawLongBits(prices.getDouble(i));
            }
            if (!quantities.isNullAt(i)) {
              volume += quantities.getLong(i);
            }
          }
        }
      }
      blackhole += hash;
      return new long[] {rows, volume};
    }

    /**
     * A DuckDB query over Iceberg's Arrow batches, handed over through Arrow's C stream interface;
     * returns the query's first value ({@code scan}) or the number of rows it made.
     */
    private static long overArrow(
        DuckDBConnection duckdb,
        Statement sql,
        Table trades,
        long snapshot,
        List<FileScanTask> tasks,
        String name,
        java.util.function.UnaryOperator<String> query,
        boolean scan)
        throws Exception {
      Schema projection = trades.schema().select(COLUMNS);
      try (BufferAllocator allocator =
              ArrowAllocation.rootAllocator().newChildAllocator(name, 0, Long.MAX_VALUE);
          ArrowReader iceberg = arrowReader(trades, snapshot, false)) {
        PlainBatches batches =
            new PlainBatches(allocator, iceberg.open(combined(tasks)), projection);
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
        try {
          Data.exportArrayStream(allocator, batches, stream);
          duckdb.registerArrowStream(name, stream);
          long value = scan ? scalar(sql, query.apply(name), 4) : groups(sql, query.apply(name));
          sql.execute("DROP VIEW IF EXISTS " + name);
          return value;
        } finally {
          stream.release();
          stream.close();
        }
      }
    }

    /** The first value of a query; the others (up to {@code columns}) go to the blackhole. */
    private static long scalar(Statement sql, String query, int columns) throws Exception {
      try (ResultSet rs = sql.executeQuery(query)) {
        rs.next();
        for (int c = 1; c <= columns; c++) {
          blackhole += rs.getString(c).hashCode();
        }
        return rs.getLong(4);
      }
    }

    /** Runs an aggregation into a temporary table; returns its rows. */
    private static long groups(Statement sql, String query) throws Exception {
      sql.execute("CREATE OR REPLACE TEMP TABLE readers_result AS " + query);
      try (ResultSet rs = sql.executeQuery("SELECT count(*) FROM readers_result")) {
        rs.next();
        return rs.getLong(1);
      }
    }

    private static int position(Schema projection, String column) {
      return projection.columns().indexOf(projection.findField(column));
    }

    private static long micros(OffsetDateTime time) {
      return time.toEpochSecond() * 1_000_000L + time.getNano() / 1_000;
    }
  }

  /**
   * Iceberg's Arrow batches as an Arrow stream of plain vectors, for DuckDB: a column the reader
   * gives as dictionary ids is decoded through its accessors (a string once per id and batch); the
   * others are handed over as they are.
   */
  static final class PlainBatches extends org.apache.arrow.vector.ipc.ArrowReader {

    private final CloseableIterator<ColumnarBatch> batches;
    private final org.apache.arrow.vector.types.pojo.Schema schema;
    private final List<Types.NestedField> fields;
    private byte[][] strings = new byte[0][];

    PlainBatches(
        BufferAllocator allocator, CloseableIterator<ColumnarBatch> batches, Schema projection) {
      super(allocator);
      this.batches = batches;
      this.schema = ArrowSchemaUtil.convert(projection);
      this.fields = projection.columns();
    }

    @Override
    protected org.apache.arrow.vector.types.pojo.Schema readSchema() {
      return schema;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      prepareLoadNextBatch();
      if (!batches.hasNext()) {
        return false;
      }
      ColumnarBatch batch = batches.next();
      int n = batch.numRows();
      VectorSchemaRoot root = getVectorSchemaRoot();
      for (int c = 0; c < fields.size(); c++) {
        ColumnVector column = batch.column(c);
        FieldVector from = column.getFieldVector();
        FieldVector to = root.getVector(c);
        if (from.getMinorType() == to.getMinorType()) {
          from.makeTransferPair(to).transfer();
        } else {
          decode(column, to, n);
        }
      }
      root.setRowCount(n);
      return true;
    }

    private void decode(ColumnVector column, FieldVector to, int n) {
      to.clear();
      if (to instanceof VarCharVector text) {
        IntVector ids = (IntVector) column.getFieldVector();
        Arrays.fill(strings, null);
        text.allocateNew(n);
        for (int i = 0; i < n; i++) {
          if (column.isNullAt(i)) {
            text.setNull(i);
            continue;
          }
          int id = ids.get(i);
          if (id >= strings.length) {
            strings = Arrays.copyOf(strings, Math.max(id + 1, 2 * strings.length));
          }
          byte[] value = strings[id];
          if (value == null) {
            value = column.getString(i).getBytes(StandardCharsets.UTF_8);
            strings[id] = value;
          }
          text.setSafe(i, value);
        }
      } else if (to instanceof Float8Vector doubles) {
        doubles.allocateNew(n);
        for (int i = 0; i < n; i++) {
          if (column.isNullAt(i)) {
            doubles.setNull(i);
          } else {
            doubles.set(i, column.getDouble(i));
          }
        }
      } else if (to instanceof BigIntVector longs) {
        longs.allocateNew(n);
        for (int i = 0; i < n; i++) {
          if (column.isNullAt(i)) {
            longs.setNull(i);
          } else {
            longs.set(i, column.getLong(i));
          }
        }
      } else if (to instanceof TimeStampVector times) {
        times.allocateNew(n);
        for (int i = 0; i < n; i++) {
          if (column.isNullAt(i)) {
            times.setNull(i);
          } else {
            times.set(i, column.getLong(i));
          }
        }
      } else {
        throw new UnsupportedOperationException("No decoding into " + to.getField());
      }
      to.setValueCount(n);
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {
      try {
        batches.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
