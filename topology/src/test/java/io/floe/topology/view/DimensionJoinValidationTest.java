package io.floe.topology.view;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.topology.refresh.eval.join.DimensionTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A view that joins dimensions, validated against the schemas and sizes of real Iceberg tables:
 * each dimension's schema is loaded and bound, a missing dimension makes the view wait, and a
 * dimension whose hash table cannot fit {@code floe.join.dimension.bytes} is rejected with the
 * reason, from its snapshot's record counts alone.
 */
class DimensionJoinValidationTest {

  private static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()),
          Types.NestedField.optional(3, "lot", Types.LongType.get()));

  private static final String BY_SECTOR =
      """
      SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume
      FROM lake.market.trades t JOIN lake.ref.symbols s ON t.symbol = s.symbol
      GROUP BY s.sector, date_trunc('hour', t.ts)
      """;

  @TempDir Path dir;
  private IcebergFixture lake;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private Table symbols(int rows) {
    Table symbols = lake.createTable("ref", "symbols", SYMBOLS, PartitionSpec.unpartitioned());
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      GenericRecord record = GenericRecord.create(SYMBOLS);
      record.setField("symbol", "S" + i);
      record.setField("sector", "sector " + (i % 7));
      record.setField("lot", (long) i);
      records.add(record);
    }
    lake.append(symbols, records);
    return symbols;
  }

  /** The lake's tables, dimensions checked against a bound of {@code dimensionBytes}. */
  private ViewValidator.SchemaLookup lookup(long dimensionBytes) {
    return new ViewValidator.SchemaLookup() {
      @Override
      public Optional<Schema> schemaOf(TableName table) {
        return load(table).map(Table::schema);
      }

      @Override
      public Optional<String> tooLargeToJoin(ViewPlan.Dimension dimension) {
        return load(dimension.table())
            .flatMap(t -> DimensionTables.tooLarge(t, dimension.requiredColumns(), dimensionBytes));
      }
    };
  }

  private Optional<Table> load(TableName table) {
    try {
      return Optional.of(lake.catalog().loadTable(table.identifier()));
    } catch (NoSuchTableException e) {
      return Optional.empty();
    }
  }

  private static CompiledView view() throws InvalidViewException {
    return CompiledView.compile(
        ViewDefinition.of("by_sector", BY_SECTOR, TableName.parse("lake.analytics.by_sector")), 0);
  }

  @Test
  void shouldBindTheJoinToTheDimensionsSchema() throws InvalidViewException {
    // Given a dimension of symbols
    symbols(3);

    // When the view that joins it is validated
    ValidatedView validated = ViewValidator.validate(view(), lookup(DimensionTables.BYTES_DEFAULT));

    // Then the plan names the dimension, its join keys and the columns it contributes
    assertThat(validated.error()).isNull();
    ViewPlan.Dimension dimension = validated.plan().dimensions().get(0);
    assertThat(dimension.table()).isEqualTo(TableName.parse("lake.ref.symbols"));
    assertThat(dimension.kind()).isEqualTo(JoinKind.INNER);
    assertThat(dimension.factKeys()).containsExactly("symbol");
    assertThat(dimension.keys()).containsExactly("symbol");
    assertThat(dimension.requiredColumns()).containsExactly("symbol", "sector");
    assertThat(dimension.sourceColumns().toString()).contains("symbol").contains("sector");
  }

  @Test
  void shouldWaitForADimensionThatDoesNotExistYet() throws InvalidViewException {
    // Given no dimension table: When the view is validated
    ValidatedView validated = ViewValidator.validate(view(), lookup(DimensionTables.BYTES_DEFAULT));

    // Then it waits for the table, as for a missing source
    assertThat(validated.isValid()).isFalse();
    assertThat(validated.sourceMissing()).isTrue();
    assertThat(validated.error()).isEqualTo("dimension table lake.ref.symbols does not exist");
  }

  @Test
  void shouldRejectADimensionWhoseRowsCannotFitTheBound() throws InvalidViewException {
    // Given a dimension of 1,000 rows, which take at least 80 bytes each in a table of 2 columns
    symbols(1000);

    // When the view is validated under a bound of 50,000 bytes
    ValidatedView validated = ViewValidator.validate(view(), lookup(50_000));

    // Then it is rejected with the rows, the least bytes they take and the setting to raise
    assertThat(validated.isValid()).isFalse();
    assertThat(validated.sourceMissing()).isFalse();
    assertThat(validated.error())
        .contains("dimension lake.ref.symbols is too large to join")
        .contains("1,000 live rows")
        .contains("at least 80,000 bytes")
        .contains("over the bound of 50,000 bytes")
        .contains(DimensionTables.BYTES_CONFIG);
    // and under a bound it may fit, accepted
    assertThat(ViewValidator.validate(view(), lookup(80_000)).error()).isNull();
  }
}
