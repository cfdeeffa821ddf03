package io.floe.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Checks each topic schema against every released version kept under {@code compat/} (main
 * resources, since {@link AvroSerde} reads records of those versions too): a consumer on either
 * version must read what the other writes, so instances can be upgraded one at a time. When a
 * schema changes, copy its released version to a new {@code compat/vN} directory.
 */
class SchemaEvolutionTest {

  static Stream<Schema> currentSchemas() {
    return Stream.of(
        TableCommitted.SCHEMA$,
        SnapshotEvent.SCHEMA$,
        RefreshEvent.SCHEMA$,
        ViewRecord.SCHEMA$,
        ViewCommand.SCHEMA$);
  }

  @ParameterizedTest
  @MethodSource("currentSchemas")
  void shouldReadAndBeReadByEveryEarlierVersion(Schema current) {
    List<Schema> earlier = AvroSerde.earlierVersions(current.getName());

    assertThat(earlier).as("compat/v1/%s.avsc", current.getName()).isNotEmpty();
    for (Schema previous : earlier) {
      assertThat(SchemaCompatibility.checkReaderWriterCompatibility(current, previous).getType())
          .as("current %s reads %s", current.getName(), previous)
          .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
      assertThat(SchemaCompatibility.checkReaderWriterCompatibility(previous, current).getType())
          .as("%s reads current %s", previous, current.getName())
          .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }
  }

  @ParameterizedTest
  @MethodSource("currentSchemas")
  void shouldDocumentEveryRecordAndField(Schema current) {
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(current, undocumented, new ArrayList<>());

    assertThat(undocumented).as("records and fields without doc").isEmpty();
  }

  private static void collectUndocumented(Schema schema, List<String> out, List<String> seen) {
    switch (schema.getType()) {
      case RECORD -> {
        if (seen.contains(schema.getFullName())) {
          return;
        }
        seen.add(schema.getFullName());
        if (isBlank(schema.getDoc())) {
          out.add(schema.getFullName());
        }
        for (Schema.Field field : schema.getFields()) {
          if (isBlank(field.doc())) {
            out.add(schema.getFullName() + "." + field.name());
          }
          collectUndocumented(field.schema(), out, seen);
        }
      }
      case UNION -> schema.getTypes().forEach(t -> collectUndocumented(t, out, seen));
      case ARRAY -> collectUndocumented(schema.getElementType(), out, seen);
      case MAP -> collectUndocumented(schema.getValueType(), out, seen);
      case ENUM -> {
        if (isBlank(schema.getDoc())) {
          out.add(schema.getFullName());
        }
      }
      default -> {}
    }
  }

  private static boolean isBlank(String s) {
    return s == null || s.isBlank();
  }
}
