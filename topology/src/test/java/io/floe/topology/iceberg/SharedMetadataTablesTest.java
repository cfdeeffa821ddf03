package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loads of a source that share the metadata parsed from the file the catalog names current. */
class SharedMetadataTablesTest {

  private static final TableIdentifier TRADES = TableIdentifier.of("market", "trades");

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table writer;

  @BeforeEach
  void createSource() {
    lake = IcebergFixture.create(dir);
    writer = lake.createTrades("market", "trades");
    lake.append(writer, List.of(lake.trade("AAPL", "2024-01-02T10:00:00Z", 1.0, 1L, "B")));
  }

  @AfterEach
  void close() throws Exception {
    lake.close();
  }

  @Test
  void shouldParseAMetadataFileOnceForEveryLoadThatFindsItCurrent() {
    // Given: the views of a source, each loading it after its commit
    Table first = SharedMetadataTables.load(lake.catalog(), TRADES);

    // When
    Table second = SharedMetadataTables.load(lake.catalog(), TRADES);

    // Then: one parsed metadata, and one snapshot object, whose manifest list is read once
    assertThat(metadata(second)).isSameAs(metadata(first));
    assertThat(second.currentSnapshot()).isSameAs(first.currentSnapshot());
    assertThat(second.currentSnapshot().snapshotId())
        .isEqualTo(lake.load("market", "trades").currentSnapshot().snapshotId());
  }

  @Test
  void shouldSeeTheCommitThatMovedTheMetadataFile() {
    // Given
    Table before = SharedMetadataTables.load(lake.catalog(), TRADES);

    // When
    long committed =
        lake.append(writer, List.of(lake.trade("MSFT", "2024-01-02T11:00:00Z", 2.0, 1L, "S")));
    Table after = SharedMetadataTables.load(lake.catalog(), TRADES);

    // Then: the new file, while the earlier load keeps what it was loaded with
    assertThat(after.currentSnapshot().snapshotId()).isEqualTo(committed);
    assertThat(metadata(after).metadataFileLocation())
        .isEqualTo(metadata(lake.load("market", "trades")).metadataFileLocation());
    assertThat(before.currentSnapshot().snapshotId()).isNotEqualTo(committed);
    before.refresh();
    assertThat(before.currentSnapshot().snapshotId()).isEqualTo(committed);
  }

  @Test
  void shouldLoadTheNewTableWhenTheSourceWasDroppedAndRecreated() {
    // Given
    Table dropped = SharedMetadataTables.load(lake.catalog(), TRADES);
    lake.catalog().dropTable(TRADES, true);
    Table recreated = lake.createTrades("market", "trades");

    // When
    Table loaded = SharedMetadataTables.load(lake.catalog(), TRADES);

    // Then
    assertThat(loaded.uuid()).isEqualTo(recreated.uuid()).isNotEqualTo(dropped.uuid());
    assertThat(loaded.currentSnapshot()).isNull();
  }

  @Test
  void shouldFailAsTheCatalogDoesWhenTheSourceWasDropped() {
    // Given
    SharedMetadataTables.load(lake.catalog(), TRADES);

    // When
    lake.catalog().dropTable(TRADES, true);

    // Then
    assertThatThrownBy(() -> SharedMetadataTables.load(lake.catalog(), TRADES))
        .isInstanceOf(NoSuchTableException.class)
        .hasMessageContaining("trades");
  }

  @Test
  void shouldRefuseACommitThroughASharedLoad() {
    // Given
    Table shared = SharedMetadataTables.load(lake.catalog(), TRADES);

    // When / Then
    assertThatThrownBy(() -> shared.updateProperties().set("owner", "someone").commit())
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("Cannot commit to lake.market.trades");
    assertThat(lake.load("market", "trades").properties()).doesNotContainKey("owner");
  }

  private static TableMetadata metadata(Table table) {
    return ((HasTableOperations) table).operations().current();
  }
}
