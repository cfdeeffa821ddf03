package io.floe.topology.refresh.eval.scan;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.iceberg.StorageKind;
import io.floe.topology.refresh.eval.vector.BatchSink;
import io.floe.topology.refresh.eval.vector.DictionaryVector;
import io.floe.topology.refresh.eval.vector.Vectors;
import io.floe.topology.refresh.eval.vector.Vectors.Vector;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A string column read into a {@link DictionaryVector} from a real file written by Iceberg's
 * writer: ids where the column chunk is dictionary-encoded, values from the page on which the
 * writer fell back to plain encoding, nulls, and the rows of pages the bucket column's column index
 * pruned.
 */
class DictionaryVectorScanTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "b", Types.LongType.get()),
          Types.NestedField.optional(3, "s", Types.StringType.get()));

  private static final int ROWS = 3000;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table table;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    // Pages of 100 rows; a dictionary of at most 512 bytes, which the first 1500 rows' five
    // values fit and the distinct values after them overflow, so the writer falls back to plain.
    table =
        lake.catalog()
            .createTable(
                TableIdentifier.of("market", "strings"),
                SCHEMA,
                PartitionSpec.unpartitioned(),
                Map.of(
                    "write.parquet.page-row-limit", "100",
                    "write.parquet.dict-size-bytes", "512"));
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      Record record = GenericRecord.create(SCHEMA);
      record.setField("id", (long) i);
      record.setField("b", (long) i);
      record.setField("s", i % 13 == 0 ? null : i < ROWS / 2 ? "s" + i % 5 : "distinct-" + i);
      records.add(record);
    }
    lake.append(table, records);
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReadDictionaryIdsThenValuesWhereTheWriterFellBackToPlain() throws IOException {
    // Given a file whose string column chunk is dictionary-encoded, then plain
    assertThat(encodingsOfS()).contains(Encoding.PLAIN_DICTIONARY, Encoding.PLAIN);

    // When it is read whole
    List<Row> rows = read(BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)));

    // Then every row holds the value the writer wrote, the dictionary-encoded ones as ids
    assertThat(rows).hasSize(ROWS);
    for (Row row : rows) {
      assertThat(row.value()).as("row %d", row.id()).isEqualTo(expected(row.id()));
    }
    assertThat(rows.stream().filter(r -> r.kind() >= 0).map(Row::id))
        .as("rows read as dictionary ids")
        .isNotEmpty()
        .allMatch(id -> id < ROWS / 2);
    assertThat(rows.stream().filter(r -> r.kind() == DictionaryVector.VALUE).map(Row::id))
        .as("rows read as values")
        .isNotEmpty()
        .allMatch(id -> id >= ROWS / 2 - 100);
    assertThat(rows.stream().filter(r -> r.kind() == DictionaryVector.NULL).map(Row::id))
        .as("null rows")
        .allMatch(id -> id % 13 == 0)
        .hasSize((ROWS + 12) / 13);
  }

  @Test
  void shouldReadTheIdsOfTheRowsOfPrunedPages() {
    // When only rows [1234, 1789) are asked for: pages of the dictionary-encoded part and of the
    // plain one
    List<Row> rows = read(BucketRangeSet.of(new BucketRange(1234, 1789)));

    // Then the kept pages' rows are read, and each holds its value
    assertThat(rows).extracting(Row::id).contains(1234L, 1788L).allMatch(id -> id >= 1200);
    assertThat(rows.size()).isLessThan(800);
    for (Row row : rows) {
      assertThat(row.value()).as("row %d", row.id()).isEqualTo(expected(row.id()));
    }
    assertThat(rows).anyMatch(r -> r.kind() >= 0).anyMatch(r -> r.kind() == DictionaryVector.VALUE);
  }

  @Test
  void shouldReferEachDictionaryRowToTheEntryThatHoldsItsValue() {
    List<Object> byIds = new ArrayList<>();
    List<Object> byValues = new ArrayList<>();
    int[] entries = new int[1];

    // When each batch's rows that refer to an entry are looked up in the batch's dictionary
    read(
        BucketRangeSet.of(new BucketRange(Long.MIN_VALUE, Long.MAX_VALUE)),
        (strings, n) -> {
          assertThat(strings.entries()).isEqualTo(strings.dictionary().length);
          entries[0] += strings.entries();
          for (int i = 0; i < n; i++) {
            int id = strings.ids()[i];
            if (id >= 0) {
              byIds.add(strings.entry(id));
              byValues.add(strings.get(i));
            }
          }
        });

    // Then each such row's entry is its value, and the dictionaries held entries
    assertThat(byIds).isNotEmpty().containsExactlyElementsOf(byValues).doesNotContainNull();
    assertThat(entries[0]).isGreaterThanOrEqualTo(5);
  }

  private static String expected(long id) {
    int i = (int) id;
    return i % 13 == 0 ? null : i < ROWS / 2 ? "s" + i % 5 : "distinct-" + i;
  }

  /** A row read: its id, its string, and how the vector held it (an id, VALUE or NULL). */
  private record Row(long id, String value, int kind) {}

  private interface Batches {
    void accept(DictionaryVector strings, int n);
  }

  private List<Row> read(BucketRangeSet ranges) {
    return read(ranges, (strings, n) -> {});
  }

  private List<Row> read(BucketRangeSet ranges, Batches batches) {
    ScanColumns columns =
        ScanColumns.of(
            table.io(),
            StorageKind.LOCAL,
            table.schema(),
            List.of("id", "b", "s"),
            Expressions.alwaysTrue(),
            "b",
            ranges,
            false,
            null);
    Vector[] vectors = new Vector[3];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = Vectors.forIceberg(SCHEMA.columns().get(c).type());
    }
    DictionaryVector strings = (DictionaryVector) vectors[2];
    List<Row> rows = new ArrayList<>();
    BatchSink sink =
        new BatchSink() {
          @Override
          public Vector[] vectors() {
            return vectors;
          }

          @Override
          public void accept(int n) {
            for (int i = 0; i < n; i++) {
              rows.add(new Row(vectors[0].getLong(i), (String) strings.get(i), strings.ids[i]));
            }
            batches.accept(strings, n);
          }
        };
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        assertThat(ParquetBatches.read(columns, task, sink)).as("read directly").isNotNull();
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return rows;
  }

  private Set<Encoding> encodingsOfS() throws IOException {
    Set<Encoding> encodings = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        String location = task.file().location();
        Path path =
            location.startsWith("file:")
                ? Path.of(java.net.URI.create(location))
                : Path.of(location);
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(path))) {
          for (var block : reader.getFooter().getBlocks()) {
            for (var chunk : block.getColumns()) {
              if (chunk.getPath().toDotString().equals("s")) {
                encodings.addAll(chunk.getEncodings());
              }
            }
          }
        }
      }
    }
    return encodings;
  }
}
