package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineWarmupTest {

  @Test
  void shouldRefreshTheSyntheticViewOverEveryRowItWrote() {
    // Given / When a warm-up over 20 000 rows
    RefreshOutcome outcome = EngineWarmup.run(20_000);

    // Then its refresh read every row through the engine and wrote the groups of 16 keys (and a
    // null key) over the minutes of its days
    assertThat(outcome.work().rowsRead()).isEqualTo(20_000);
    assertThat(outcome.work().rowsWritten())
        .isBetween(EngineWarmup.DAYS * 1_440L, EngineWarmup.DAYS * 17L * 1_440);
  }

  @Test
  void shouldWriteASourceShapedLikeARealOneForTheReadersPathsToBeCompiled(@TempDir Path dir)
      throws Exception {
    // Given a partitioned table of the warm-up's schema in memory
    try (InMemoryCatalog catalog = new InMemoryCatalog()) {
      catalog.initialize(
          "warmup_test", Map.of("warehouse", "memory://warmup-test-" + UUID.randomUUID()));
      catalog.createNamespace(Namespace.of("s"));
      Table table =
          catalog.createTable(
              TableIdentifier.of("s", "t"), EngineWarmup.SCHEMA, EngineWarmup.BY_DAY);

      // When the warm-up writes its rows
      List<DataFile> files = EngineWarmup.write(table, 20_000);

      // Then it wrote a file a day, nullable columns with nulls in them, and prices both
      // dictionary-encoded and plain
      assertThat(files).hasSize(EngineWarmup.DAYS);
      assertThat(EngineWarmup.SCHEMA.columns()).allMatch(Types.NestedField::isOptional);
      assertThat(files).allMatch(f -> f.nullValueCounts().get(3) > 0);
      List<Boolean> dictionaryPrices = new ArrayList<>();
      for (DataFile file : files) {
        Path copy = dir.resolve(UUID.randomUUID() + ".parquet");
        try (InputStream in = table.io().newInputFile(file.location()).newStream()) {
          Files.copy(in, copy);
        }
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(copy))) {
          ColumnChunkMetaData price = reader.getFooter().getBlocks().get(0).getColumns().get(2);
          dictionaryPrices.add(price.hasDictionaryPage());
        }
      }
      assertThat(dictionaryPrices).contains(true, false);
    }
  }

  @Test
  void shouldReadEveryRowOverItsRoundsEachAfterItsTurn() throws Exception {
    // Given a warm-up that counts the turns it waits for
    AtomicInteger turns = new AtomicInteger();

    // When it runs between refreshes over 20 003 rows
    long read = EngineWarmup.runBetween(20_003, turns::incrementAndGet);

    // Then every row was read, over one round a turn
    assertThat(read).isEqualTo(20_003);
    assertThat(turns).hasValue(EngineWarmup.ROUNDS);
  }
}
