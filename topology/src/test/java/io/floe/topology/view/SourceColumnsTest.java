package io.floe.topology.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.mapping.MappedField;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SourceColumnsTest {

  private static final Schema TRADES =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "price", Types.DecimalType.of(9, 2)),
          Types.NestedField.optional(3, "quantity", Types.IntegerType.get()),
          Types.NestedField.optional(
              4, "Trade Tags", Types.ListType.ofOptional(5, Types.StringType.get())),
          Types.NestedField.optional(
              6,
              "venue",
              Types.StructType.of(Types.NestedField.optional(7, "mic", Types.StringType.get()))));

  private static final List<String> READ = List.of("price", "quantity", "Trade Tags", "venue");

  @Test
  void shouldRecordIdsAndTypesByNameAndReadThemBack() {
    // When the identity of the columns read is recorded
    SourceColumns columns = SourceColumns.of(TRADES, READ);

    // Then it names each column's id and type, without spaces, and reads back the same
    assertThat(columns.format())
        .isEqualTo(
            "price=2:decimal(9,2) quantity=3:int trade%20tags=4:list<5:string>"
                + " venue=6:struct<7:string>");
    assertThat(SourceColumns.parse(columns.format())).isEqualTo(columns);
  }

  @Test
  void shouldKeepTheIdentityWhenAColumnOrANestedFieldIsRenamedTheQueryStillResolves() {
    // Given a schema whose columns are renamed keeping ids and types (names are case-insensitive)
    Schema renamed =
        new Schema(
            Types.NestedField.optional(2, "PRICE", Types.DecimalType.of(9, 2)),
            Types.NestedField.optional(3, "Quantity", Types.IntegerType.get()),
            Types.NestedField.optional(
                4, "trade tags", Types.ListType.ofOptional(5, Types.StringType.get())),
            Types.NestedField.optional(
                6,
                "venue",
                Types.StructType.of(
                    Types.NestedField.optional(7, "exchange", Types.StringType.get()))));

    // Then nothing the view reads changed
    SourceColumns now =
        SourceColumns.of(renamed, List.of("PRICE", "Quantity", "trade tags", "venue"));
    assertThat(now.changesSince(SourceColumns.of(TRADES, READ))).isNull();
  }

  @Test
  void shouldNameTheColumnsWhoseIdOrTypeChanged() {
    // Given quantity dropped and added again, and price widened
    Schema changed =
        new Schema(
            Types.NestedField.optional(2, "price", Types.DecimalType.of(12, 2)),
            Types.NestedField.optional(8, "quantity", Types.IntegerType.get()));

    // Then both are named in the reason
    String reason =
        SourceColumns.of(changed, List.of("price", "quantity"))
            .changesSince(SourceColumns.of(TRADES, List.of("price", "quantity")));
    assertThat(reason)
        .isEqualTo(
            "the source schema changed what the view reads: column price changed type from"
                + " decimal(9,2) to decimal(12,2); column quantity is field 8, not field 3 the"
                + " target was computed from (dropped and added again, or renamed)");
  }

  @Test
  void shouldTellTwoColumnsThatSwappedNamesApart() {
    // Given two columns of one type that swapped names
    Schema before =
        new Schema(
            Types.NestedField.optional(1, "bid", Types.DoubleType.get()),
            Types.NestedField.optional(2, "ask", Types.DoubleType.get()));
    Schema after =
        new Schema(
            Types.NestedField.optional(1, "ask", Types.DoubleType.get()),
            Types.NestedField.optional(2, "bid", Types.DoubleType.get()));

    // Then the same ids and types read under other names are another identity
    assertThat(
            SourceColumns.of(after, List.of("ask", "bid"))
                .isSameAs(SourceColumns.of(before, List.of("bid", "ask"))))
        .isFalse();
  }

  @Test
  void shouldRecordHowTheNameMappingMapsTheColumnsRead() {
    // Given the columns read, through a name mapping whose names are listed in any order
    SourceColumns read = SourceColumns.of(TRADES, List.of("price", "quantity"));
    SourceColumns mapped =
        read.withNameMapping(
            NameMapping.of(MappedField.of(2, List.of("price", "px")), MappedField.of(3, "qty")));
    SourceColumns reordered =
        read.withNameMapping(
            NameMapping.of(
                MappedField.of(3, "qty"),
                MappedField.of(2, List.of("px", "price")),
                MappedField.of(1, "id")));

    // Then the mapping of those columns is part of the identity, and reads back
    assertThat(mapped.format()).matches("price=2:\\S+ quantity=3:int @name-mapping=[0-9a-f]{8}");
    assertThat(SourceColumns.parse(mapped.format())).isEqualTo(mapped);
    assertThat(reordered.isSameAs(mapped)).isTrue();
    assertThat(mapped.isSameAs(read)).isFalse();
    assertThat(mapped.digest()).isNotEqualTo(read.digest());
    // And setting, changing or removing it is a change of what the view reads, named as such
    assertThat(mapped.changesSince(read))
        .isEqualTo(
            "the source table changed what the view reads: the name mapping"
                + " (schema.name-mapping.default) through which files without field ids are read"
                + " was set");
    assertThat(
            read.withNameMapping(NameMapping.of(MappedField.of(2, "price"), MappedField.of(3, "q")))
                .changesSince(mapped))
        .endsWith("changed for the columns it reads");
    assertThat(read.changesSince(mapped)).endsWith("was removed");
  }

  @Test
  void shouldRefuseARecordThatIsNotAnIdentity() {
    assertThatThrownBy(() -> SourceColumns.parse("price:double"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Not a source column identity: 'price:double'");
  }
}
