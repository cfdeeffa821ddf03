package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.iceberg.CountingFileIO;
import java.net.URL;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What writing a target's files costs besides the rows: the set-up of each file's writer. */
class TargetWriterTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "bucket", Types.TimestampType.withZone()),
          Types.NestedField.required(2, "symbol", Types.StringType.get()),
          Types.NestedField.optional(3, "volume", Types.LongType.get()));

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table target;

  @BeforeEach
  void setUp() {
    // Floe's own FileIO, as every catalog of floe run has it: not Hadoop's, so Iceberg's Parquet
    // writer makes a Hadoop configuration of its own for each file.
    Map<String, String> properties =
        CountingFileIO.install(
            Map.of(
                CatalogUtil.ICEBERG_CATALOG_TYPE,
                "jdbc",
                "uri",
                "jdbc:sqlite:" + dir.resolve("catalog.db"),
                "warehouse",
                dir.resolve("warehouse").toUri().toString(),
                "jdbc.schema-version",
                "V1"));
    lake = IcebergFixture.create(properties);
    target =
        lake.createTable(
            "analytics",
            "volume_1h",
            SCHEMA,
            PartitionSpec.builderFor(SCHEMA).day("bucket").build());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldNotSearchTheClassPathForHadoopsDefaultsForEachFileItWrites() {
    // Given: a context class loader that counts the searches for Hadoop's default resources
    AtomicInteger searches = new AtomicInteger();
    ClassLoader counting =
        new ClassLoader(Thread.currentThread().getContextClassLoader()) {
          @Override
          public URL getResource(String name) {
            if (name.equals("core-default.xml") || name.equals("core-site.xml")) {
              searches.incrementAndGet();
            }
            return super.getResource(name);
          }
        };
    ClassLoader previous = Thread.currentThread().getContextClassLoader();
    List<DataFile> files;

    // When: rows of three days, one file each
    Thread.currentThread().setContextClassLoader(counting);
    try (TargetWriter writer = new TargetWriter(target, SCHEMA, "test")) {
      for (String day : List.of("2026-04-06", "2026-04-07", "2026-04-08")) {
        writer.writeOutputRow(new Object[] {micros(day + "T10:00:00Z"), "AAPL", 10L});
        writer.writeOutputRow(new Object[] {micros(day + "T11:00:00Z"), "MSFT", 20L});
      }
      files = writer.complete();
    } finally {
      Thread.currentThread().setContextClassLoader(previous);
    }

    // Then
    assertThat(files).hasSize(3);
    assertThat(files).allSatisfy(file -> assertThat(file.recordCount()).isEqualTo(2));
    assertThat(searches).hasValue(0);
  }

  private static long micros(String instant) {
    Instant at = Instant.parse(instant);
    return at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000;
  }
}
