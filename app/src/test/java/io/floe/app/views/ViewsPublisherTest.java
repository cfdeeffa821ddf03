package io.floe.app.views;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewConflicts;
import io.floe.topology.view.ViewDefinition;
import io.floe.topology.view.ViewValidator;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class ViewsPublisherTest {

  private static final TableName TRADES = TableName.parse("lake.market.trades");
  private static final TableName BARS = TableName.parse("lake.analytics.bars");

  @Test
  void shouldLoadEachSourceOncePerPublication() {
    // Given a catalog that counts its loads
    List<TableName> loads = new ArrayList<>();
    ViewValidator.SchemaLookup catalog =
        table -> {
          loads.add(table);
          return Optional.of(new Schema(Types.NestedField.required(1, "ts", Types.LongType.get())));
        };

    // When one publication asks for the same source three times
    ViewValidator.SchemaLookup lookup = ViewsPublisher.loadedOnce(catalog);
    lookup.schemaOf(TRADES);
    lookup.schemaOf(TRADES);
    Optional<Schema> schema = lookup.schemaOf(TRADES);

    // Then the catalog loaded it once
    assertThat(schema).isPresent();
    assertThat(loads).containsExactly(TRADES);
  }

  @Test
  void shouldLoadEachTargetOncePerPublication() {
    // Given a catalog whose target was created for view bars, counting its loads
    List<TableName> loads = new ArrayList<>();
    ViewConflicts.Targets catalog =
        table -> {
          loads.add(table);
          return Optional.of(new ViewConflicts.ExistingTable("bars", OptionalLong.of(4)));
        };
    ViewDefinition view =
        ViewDefinition.of(
            "bars",
            "SELECT date_trunc('minute', ts) AS m, count(*) AS n FROM lake.market.trades GROUP BY 1",
            BARS);

    // When the rules of view writes and the revision both ask for it
    ViewConflicts.Targets targets = ViewsPublisher.loadedOnce(catalog);
    targets.existing(BARS);
    OptionalLong revision = targets.revision(view);

    // Then the catalog loaded it once
    assertThat(revision).hasValue(4);
    assertThat(loads).containsExactly(BARS);
  }
}
