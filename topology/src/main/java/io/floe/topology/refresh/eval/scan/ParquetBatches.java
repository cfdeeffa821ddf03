package io.floe.topology.refresh.eval.scan;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.iceberg.FileCaches;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.PrimitiveIterator;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.inmemory.InMemoryInputFile;
import org.apache.iceberg.io.IOUtil;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.parquet.ParquetMetricsRowGroupFilter;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.filter2.predicate.Operators;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Reads a planned Parquet file straight into batch vectors, a column chunk at a time through {@link
 * ParquetPages}: values are decoded into primitive arrays with no record or boxed value per row,
 * strings are decoded once per dictionary entry, and row groups whose bucket-column statistics miss
 * the chunk's buckets are never read (Iceberg's own {@link ParquetMetricsRowGroupFilter} decides,
 * as in Iceberg's reader). Position deletes and deletion vectors apply by file position. Files go
 * through any {@code FileIO}.
 *
 * <p>It reads flat columns of the types whose native value is a plain value (boolean, int, long,
 * float, double, date, time, timestamps, string) found by field id, including Iceberg's int to long
 * and float to double promotions; the columns of a file written without field ids are found as
 * Iceberg's reader finds them ({@link ScanColumns#withIds}: the table's name mapping, else by
 * position); {@link #read} returns null for any other file, which then goes to {@link
 * RecordBatches}. Pages whose column-index statistics of the bucket column miss the chunk's buckets
 * are skipped too (Parquet's column-index filter), so a time-sorted file is read about as far as
 * the chunk's rows go; the rows of the kept pages are read by their row indexes, the same decoder
 * as for a row group read whole.
 */
public final class ParquetBatches {

  private ParquetBatches() {}

  /** What reading a file through this reader cost. */
  public record Read(long rows, int rowGroupsRead, int rowGroupsSkipped) {}

  /** Whether a task may take this path at all: Parquet and no equality deletes. */
  public static boolean accepts(FileScanTask task) {
    if (task.file().format() != FileFormat.PARQUET) {
      return false;
    }
    for (DeleteFile delete : task.deletes()) {
      if (delete.content() == FileContent.EQUALITY_DELETES) {
        return false;
      }
    }
    return true;
  }

  /** Reads the task into {@code sink}, or returns null when the file needs the generic reader. */
  public static Read read(ScanColumns columns, FileScanTask task, BatchSink sink) {
    org.apache.iceberg.io.InputFile input = inputFile(columns, task);
    org.apache.parquet.io.InputFile file = parquetFile(input);
    ParquetMetadata footer = footer(input, file, task);
    MessageType fileSchema = columns.withIds(footer.getFileMetaData().getSchema());
    List<Types.NestedField> fields = columns.projection().columns();
    List<org.apache.parquet.schema.Type> requestedFields = new ArrayList<>();
    Vector[] vectors = new Vector[fields.size()];
    for (int c = 0; c < fields.size(); c++) {
      org.apache.parquet.schema.Type fileField = fieldById(fileSchema, fields.get(c).fieldId());
      if (fileField == null || !isReadable(fields.get(c).type(), fileField)) {
        return null;
      }
      requestedFields.add(fileField);
      vectors[c] = sink.vectors()[columns.positions()[c]];
    }
    MessageType requested = new MessageType(fileSchema.getName(), requestedFields);
    ParquetMetricsRowGroupFilter stats =
        columns.rowGroupFilter() == null
                || columns.rowGroupFilter().equals(Expressions.alwaysTrue())
            ? null
            : new ParquetMetricsRowGroupFilter(columns.projection(), columns.rowGroupFilter());
    List<BlockMetaData> blocks = footer.getBlocks();
    // The row groups to read: of this split, and not ruled out by the footer's statistics.
    List<Integer> toRead = new ArrayList<>();
    long[] firstPositions = new long[blocks.size()];
    long position = 0;
    int skipped = 0;
    for (int b = 0; b < blocks.size(); b++) {
      BlockMetaData block = blocks.get(b);
      firstPositions[b] = position;
      position += block.getRowCount();
      // A row group belongs to the split holding its midpoint, as in Parquet's own splits.
      long midpoint = block.getStartingPos() + block.getCompressedSize() / 2;
      if (midpoint < task.start() || midpoint >= task.start() + task.length()) {
        continue;
      }
      if (stats != null && !stats.shouldRead(fileSchema, block)) {
        skipped++;
        continue;
      }
      toRead.add(b);
    }
    if (toRead.isEmpty()) {
      // Nothing to read: a file whose row groups the footer's statistics rule out costs no request
      // beyond its (cached) footer.
      return new Read(0, 0, skipped);
    }
    long rows = 0;
    int read = 0;
    ParquetFileReader reader = null;
    try {
      RangedReads stream = new RangedReads(input.newStream());
      reader = open(stream, file, footer, columns, requested, toRead);
      PositionDeleteIndex deleted =
          task.deletes().isEmpty()
              ? null
              : new GenericDeleteFilter(
                      columns.io(), task, columns.tableSchema(), columns.projection())
                  .deletedRowPositions();
      for (int i = 0; i < toRead.size(); i++) {
        int b = toRead.get(i);
        if (!stream.holds(chunkRanges(blocks.get(b), requested))) {
          stream.prefetch(readAhead(blocks, requested, toRead, i));
        }
        try (PageReadStore filtered = reader.readFilteredRowGroup(b)) {
          if (filtered == null || filtered.getRowCount() == 0) {
            skipped++;
            continue;
          }
          read++;
          rows += readRowGroup(filtered, requested, vectors, firstPositions[b], deleted, sink);
        }
      }
      return new Read(rows, read, skipped);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + task.file().location(), e);
    } finally {
      closeQuietly(reader);
    }
  }

  private static void closeQuietly(ParquetFileReader reader) {
    if (reader != null) {
      try {
        reader.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * The file's footer, from {@link FileCaches} when read before: a footer never changes, and on an
   * object store reading it costs two requests (its length, then itself).
   */
  private static ParquetMetadata footer(
      org.apache.iceberg.io.InputFile input,
      org.apache.parquet.io.InputFile file,
      FileScanTask task) {
    long length = task.file().fileSizeInBytes();
    try {
      return FileCaches.footer(
          task.file().location(),
          length,
          () -> {
            ParquetMetadata fromTail = footerFromTail(input, length);
            if (fromTail != null) {
              return fromTail;
            }
            try (org.apache.parquet.io.SeekableInputStream stream = file.newStream()) {
              return ParquetFileReader.readFooter(file, readOptions().build(), stream);
            }
          });
    } catch (UncheckedIOException e) {
      throw new UncheckedIOException("Cannot read " + task.file().location(), e.getCause());
    }
  }

  /** Bytes of a file's end read for its footer in one request: most footers fit. */
  static final int FOOTER_TAIL_BYTES = 64 * 1024;

  /**
   * A data file no larger than this on a remote store is read whole, with the one request that
   * reads its footer (a footer's tail read is the whole of such a file anyway), and kept in {@link
   * FileCaches}: its column chunks then cost no request of their own, and a later refresh reading
   * it none at all. A stream writes such files, and each refresh of a view that recomputes the
   * buckets they hold reads every one of them again: a minute view over a commit every 200 ms read
   * each file of its minute at each refresh, a ranged request per file. On local files nothing is
   * kept: a read costs microseconds there.
   */
  static final int SMALL_FILE_BYTES = FOOTER_TAIL_BYTES;

  /**
   * The task's file, served from memory when it is a small file on a remote store ({@link
   * #SMALL_FILE_BYTES}), read whole by one request the first time.
   */
  private static org.apache.iceberg.io.InputFile inputFile(ScanColumns columns, FileScanTask task) {
    org.apache.iceberg.io.InputFile input = columns.io().newInputFile(task.file());
    long length = task.file().fileSizeInBytes();
    if (!columns.storage().isRemote() || length > SMALL_FILE_BYTES) {
      return input;
    }
    String location = task.file().location();
    return new InMemoryInputFile(
        location, FileCaches.smallFile(location, () -> readWhole(input, (int) length)));
  }

  /** The file's bytes, read in one request: a positioned read where the stream serves them. */
  private static byte[] readWhole(org.apache.iceberg.io.InputFile input, int length) {
    byte[] bytes = new byte[length];
    try (org.apache.iceberg.io.SeekableInputStream stream = input.newStream()) {
      if (stream instanceof RangeReadable ranges) {
        ranges.readFully(0, bytes, 0, length);
      } else {
        IOUtil.readFully(stream, bytes, 0, length);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + input.location(), e);
    }
    return bytes;
  }

  private static final byte[] MAGIC = "PAR1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /**
   * The footer read with one ranged request of the file's last {@value #FOOTER_TAIL_BYTES} bytes,
   * where the store's streams can ({@link RangeReadable}, as S3's, GCS's and ADLS's can): Parquet's
   * own reader reads the footer's length, then the footer, two requests. Null when the stream
   * cannot, or the footer is larger or encrypted: Parquet's reader then reads it.
   */
  private static ParquetMetadata footerFromTail(org.apache.iceberg.io.InputFile input, long length)
      throws IOException {
    if (length < 2L * MAGIC.length + 4) {
      return null;
    }
    try (org.apache.iceberg.io.SeekableInputStream stream = input.newStream()) {
      if (!(stream instanceof RangeReadable ranges)) {
        return null;
      }
      int tailLength = (int) Math.min(length, FOOTER_TAIL_BYTES);
      byte[] tail = new byte[tailLength];
      int read = ranges.readTail(tail, 0, tailLength);
      if (read != tailLength
          || !java.util.Arrays.equals(
              tail, tailLength - MAGIC.length, tailLength, MAGIC, 0, MAGIC.length)) {
        return null;
      }
      int footerLength =
          java.nio.ByteBuffer.wrap(tail, tailLength - 8, 4)
              .order(java.nio.ByteOrder.LITTLE_ENDIAN)
              .getInt();
      int footerStart = tailLength - 8 - footerLength;
      if (footerLength <= 0 || footerStart < 0) {
        return null;
      }
      // With the read options, as Parquet's reader parses footers (its bound on their size).
      return new ParquetMetadataConverter(readOptions().build())
          .readParquetMetadata(
              new java.io.ByteArrayInputStream(tail, footerStart, footerLength),
              ParquetMetadataConverter.NO_FILTER);
    }
  }

  /**
   * Reads the rows of a row group that remain, all of them or, with pages skipped, those of the
   * kept row ranges, as runs of consecutive rows: each column skips to a run's first row, then
   * reads its rows into the batch.
   */
  private static long readRowGroup(
      PageReadStore pages,
      MessageType requested,
      Vector[] vectors,
      long firstPosition,
      PositionDeleteIndex deleted,
      BatchSink sink) {
    List<ColumnDescriptor> descriptors = requested.getColumns();
    ParquetPages[] columns = new ParquetPages[descriptors.size()];
    for (int c = 0; c < columns.length; c++) {
      columns[c] =
          new ParquetPages(pages.getPageReader(descriptors.get(c)), descriptors.get(c), vectors[c]);
    }
    long total = pages.getRowCount();
    // With pages skipped, the indexes in the row group of the rows that remain, ascending.
    PrimitiveIterator.OfLong indexes = pages.getRowIndexes().orElse(null);
    long runStart = 0;
    long runLeft = indexes == null ? total : 0;
    // The first row of the run after the current one, once the current one's end is found.
    long nextRun = -1;
    long[] positions = deleted == null ? null : new long[Vectors.BATCH];
    long live = 0;
    for (long done = 0; done < total; ) {
      int n = (int) Math.min(Vectors.BATCH, total - done);
      for (int filled = 0; filled < n; ) {
        if (runLeft == 0) {
          runStart = nextRun >= 0 ? nextRun : indexes.nextLong();
          runLeft = 1;
          nextRun = -1;
          while (nextRun < 0 && indexes.hasNext()) {
            long index = indexes.nextLong();
            if (index == runStart + runLeft) {
              runLeft++;
            } else {
              nextRun = index;
            }
          }
        }
        int m = (int) Math.min(runLeft, n - filled);
        readRun(columns, runStart, filled, m, positions, firstPosition);
        filled += m;
        runStart += m;
        runLeft -= m;
      }
      int kept = n;
      if (deleted != null) {
        kept = 0;
        for (int i = 0; i < n; i++) {
          if (!deleted.isDeleted(positions[i])) {
            if (kept != i) {
              for (Vector vector : vectors) {
                vector.move(i, kept);
              }
            }
            kept++;
          }
        }
      }
      if (kept > 0) {
        sink.accept(kept);
      }
      live += kept;
      done += n;
    }
    return live;
  }

  /**
   * Reads rows {@code [first, first + m)} of the row group into batch rows {@code [offset, offset +
   * m)}, and their file positions when deletes apply.
   */
  private static void readRun(
      ParquetPages[] columns, long first, int offset, int m, long[] positions, long firstPosition) {
    for (ParquetPages column : columns) {
      column.skipTo(first);
      column.read(offset, m);
    }
    if (positions != null) {
      for (int i = 0; i < m; i++) {
        positions[offset + i] = firstPosition + first + i;
      }
    }
  }

  /**
   * Read options over a plain configuration: the default builder creates a Hadoop configuration,
   * which parses Hadoop's XML defaults again for every file (it was most of a small refresh).
   */
  private static ParquetReadOptions.Builder readOptions() {
    return ParquetReadOptions.builder(new PlainParquetConfiguration());
  }

  /**
   * Opens a file whose footer is known with the page filter of the recompute's buckets: the filter
   * needs the file's name of the bucket column, which only the footer knows. Parquet reads each row
   * group's ranges through {@link RangedReads}, coalesced; with the page filter, the column and
   * offset indexes of the row groups to read are read first, together, instead of one request per
   * column and row group.
   */
  private static ParquetFileReader open(
      RangedReads stream,
      org.apache.parquet.io.InputFile file,
      ParquetMetadata footer,
      ScanColumns columns,
      MessageType requested,
      List<Integer> toRead)
      throws IOException {
    org.apache.parquet.schema.Type bucketField =
        fieldById(columns.withIds(footer.getFileMetaData().getSchema()), columns.bucketFieldId());
    FilterPredicate pages = bucketField == null ? null : pageFilter(bucketField, columns);
    ParquetReadOptions.Builder options = readOptions().withUseHadoopVectoredIo(true);
    if (pages != null) {
      // Only the column-index (page) filter: row groups are pruned apart, rows checked exactly.
      options
          .withRecordFilter(FilterCompat.get(pages))
          .useColumnIndexFilter(true)
          .useStatsFilter(false)
          .useDictionaryFilter(false)
          .useBloomFilter(false)
          .useRecordFilter(false);
    }
    try {
      // The first row groups' column chunks and, with the page filter, every index the reader
      // will read, in one request where they lie close: a small file is read with one.
      List<long[]> first = new ArrayList<>(readAhead(footer.getBlocks(), requested, toRead, 0));
      if (pages != null) {
        first.addAll(indexRanges(footer, requested, toRead));
      }
      stream.prefetch(first);
      ParquetFileReader reader = new ParquetFileReader(file, footer, options.build(), stream);
      reader.setRequestedSchema(requested);
      return reader;
    } catch (IOException | RuntimeException e) {
      try {
        stream.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /**
   * The needed column chunks of the row groups to read from {@code toRead[from]} on, as many as fit
   * in one merged request ({@link RangedReads#MAX_MERGED}); none when the first alone does not: its
   * pages are then read as Parquet asks for them, coalesced, and only those a page filter keeps.
   */
  private static List<long[]> readAhead(
      List<BlockMetaData> blocks, MessageType requested, List<Integer> toRead, int from) {
    List<long[]> ranges = new ArrayList<>();
    long start = Long.MAX_VALUE;
    long end = Long.MIN_VALUE;
    for (int i = from; i < toRead.size(); i++) {
      List<long[]> chunks = chunkRanges(blocks.get(toRead.get(i)), requested);
      for (long[] chunk : chunks) {
        start = Math.min(start, chunk[0]);
        end = Math.max(end, chunk[0] + chunk[1]);
      }
      if (end - start > RangedReads.MAX_MERGED) {
        break;
      }
      ranges.addAll(chunks);
    }
    return ranges;
  }

  /** The column chunks of the requested columns in a row group, {@code {offset, length}} each. */
  private static List<long[]> chunkRanges(BlockMetaData block, MessageType requested) {
    java.util.Set<org.apache.parquet.hadoop.metadata.ColumnPath> paths = paths(requested);
    List<long[]> ranges = new ArrayList<>();
    for (org.apache.parquet.hadoop.metadata.ColumnChunkMetaData chunk : block.getColumns()) {
      if (paths.contains(chunk.getPath())) {
        ranges.add(new long[] {chunk.getStartingPos(), chunk.getTotalSize()});
      }
    }
    return ranges;
  }

  private static java.util.Set<org.apache.parquet.hadoop.metadata.ColumnPath> paths(
      MessageType requested) {
    java.util.Set<org.apache.parquet.hadoop.metadata.ColumnPath> paths = new java.util.HashSet<>();
    for (ColumnDescriptor column : requested.getColumns()) {
      paths.add(org.apache.parquet.hadoop.metadata.ColumnPath.get(column.getPath()));
    }
    return paths;
  }

  /** The column and offset indexes of the requested columns in the row groups to read. */
  private static List<long[]> indexRanges(
      ParquetMetadata footer, MessageType requested, List<Integer> toRead) {
    java.util.Set<org.apache.parquet.hadoop.metadata.ColumnPath> paths = paths(requested);
    List<long[]> ranges = new ArrayList<>();
    for (int b : toRead) {
      for (org.apache.parquet.hadoop.metadata.ColumnChunkMetaData chunk :
          footer.getBlocks().get(b).getColumns()) {
        if (paths.contains(chunk.getPath())) {
          for (org.apache.parquet.internal.hadoop.metadata.IndexReference index :
              java.util.Arrays.asList(
                  chunk.getColumnIndexReference(), chunk.getOffsetIndexReference())) {
            if (index != null) {
              ranges.add(new long[] {index.getOffset(), index.getLength()});
            }
          }
        }
      }
    }
    return ranges;
  }

  /** Beyond this many ranges, pages are pruned by their envelope. */
  private static final int MAX_PAGE_RANGES = 64;

  /**
   * A Parquet predicate on the bucket column that keeps the pages whose column-index statistics may
   * hold rows of the recomputed buckets, or null when the column is not a plain int or long.
   */
  static FilterPredicate pageFilter(org.apache.parquet.schema.Type field, ScanColumns columns) {
    if (!field.isPrimitive()) {
      return null;
    }
    PrimitiveTypeName physical = field.asPrimitiveType().getPrimitiveTypeName();
    if (physical != PrimitiveTypeName.INT64 && physical != PrimitiveTypeName.INT32) {
      return null;
    }
    boolean ints = physical == PrimitiveTypeName.INT32;
    String path = field.getName();
    List<BucketRange> ranges = columns.ranges().ranges();
    if (ranges.size() == 1
        && ranges.get(0).start() == Long.MIN_VALUE
        && ranges.get(0).end() == Long.MAX_VALUE) {
      // Every bucket: no page to skip, so no column index to read.
      return null;
    }
    if (ranges.size() > MAX_PAGE_RANGES) {
      ranges = List.of(new BucketRange(ranges.get(0).start(), ranges.get(ranges.size() - 1).end()));
    }
    FilterPredicate any = null;
    if (columns.nullBucket()) {
      any =
          ints
              ? FilterApi.eq(FilterApi.intColumn(path), (Integer) null)
              : FilterApi.eq(FilterApi.longColumn(path), (Long) null);
    }
    for (BucketRange range : ranges) {
      FilterPredicate one = ints ? intRange(path, range) : longRange(path, range);
      any = any == null ? one : FilterApi.or(any, one);
    }
    // No bucket at all: nothing to read, which the pruned row groups already ensure.
    return any;
  }

  private static FilterPredicate longRange(String path, BucketRange range) {
    Operators.LongColumn column = FilterApi.longColumn(path);
    FilterPredicate lower =
        range.start() == Long.MIN_VALUE
            ? FilterApi.notEq(column, (Long) null)
            : FilterApi.gtEq(column, range.start());
    FilterPredicate upper =
        range.end() == Long.MAX_VALUE
            ? FilterApi.notEq(column, (Long) null)
            : FilterApi.lt(column, range.end());
    return FilterApi.and(lower, upper);
  }

  private static FilterPredicate intRange(String path, BucketRange range) {
    Operators.IntColumn column = FilterApi.intColumn(path);
    FilterPredicate lower =
        range.start() <= Integer.MIN_VALUE
            ? FilterApi.notEq(column, (Integer) null)
            : FilterApi.gtEq(column, (int) Math.min(Integer.MAX_VALUE, range.start()));
    FilterPredicate upper =
        range.end() > Integer.MAX_VALUE
            ? FilterApi.notEq(column, (Integer) null)
            : FilterApi.lt(column, (int) Math.max(Integer.MIN_VALUE, range.end()));
    return FilterApi.and(lower, upper);
  }

  private static org.apache.parquet.schema.Type fieldById(MessageType schema, int id) {
    for (org.apache.parquet.schema.Type field : schema.getFields()) {
      if (field.getId() != null && field.getId().intValue() == id) {
        return field;
      }
    }
    return null;
  }

  /**
   * Whether {@link ParquetPages} decodes a file column into the native value of an Iceberg type: a
   * flat column whose physical and logical type hold that value as it is.
   */
  private static boolean isReadable(Type type, org.apache.parquet.schema.Type field) {
    if (!field.isPrimitive()
        || field.isRepetition(org.apache.parquet.schema.Type.Repetition.REPEATED)) {
      return false;
    }
    PrimitiveType primitive = field.asPrimitiveType();
    PrimitiveTypeName physical = primitive.getPrimitiveTypeName();
    LogicalTypeAnnotation logical = primitive.getLogicalTypeAnnotation();
    return switch (type.typeId()) {
      case BOOLEAN -> physical == PrimitiveTypeName.BOOLEAN;
      case INTEGER -> physical == PrimitiveTypeName.INT32 && isPlainInteger(logical);
      case LONG ->
          (physical == PrimitiveTypeName.INT64 || physical == PrimitiveTypeName.INT32)
              && isPlainInteger(logical);
      case DATE ->
          physical == PrimitiveTypeName.INT32
              && logical instanceof LogicalTypeAnnotation.DateLogicalTypeAnnotation;
      case TIME ->
          physical == PrimitiveTypeName.INT64
              && logical instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation time
              && time.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS;
      case TIMESTAMP -> isTimestamp(physical, logical, LogicalTypeAnnotation.TimeUnit.MICROS);
      case TIMESTAMP_NANO -> isTimestamp(physical, logical, LogicalTypeAnnotation.TimeUnit.NANOS);
      case FLOAT -> physical == PrimitiveTypeName.FLOAT;
      case DOUBLE -> physical == PrimitiveTypeName.DOUBLE || physical == PrimitiveTypeName.FLOAT;
      case STRING ->
          physical == PrimitiveTypeName.BINARY
              && (logical == null
                  || logical instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation);
      default -> false;
    };
  }

  private static boolean isPlainInteger(LogicalTypeAnnotation logical) {
    return logical == null
        || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation integer
            && integer.isSigned();
  }

  private static boolean isTimestamp(
      PrimitiveTypeName physical,
      LogicalTypeAnnotation logical,
      LogicalTypeAnnotation.TimeUnit unit) {
    return physical == PrimitiveTypeName.INT64
        && logical instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation timestamp
        && timestamp.getUnit() == unit;
  }

  /** Parquet's view of an Iceberg input file, so that every FileIO serves the reads. */
  private static org.apache.parquet.io.InputFile parquetFile(org.apache.iceberg.io.InputFile file) {
    return new org.apache.parquet.io.InputFile() {
      @Override
      public long getLength() {
        return file.getLength();
      }

      @Override
      public org.apache.parquet.io.SeekableInputStream newStream() {
        return new RangedReads(file.newStream());
      }
    };
  }
}
