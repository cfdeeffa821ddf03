package io.floe.topology.view;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The index of the views in force: lookups by name, source and target, and what it refuses. */
class ViewIndexTest {

  private static final String QUERY =
      "SELECT symbol, date_trunc('minute', ts) AS m, count(*) AS n FROM %s GROUP BY 1, 2";

  private static ViewDefinition view(String name, String source) {
    return ViewDefinition.of(
        name, String.format(QUERY, source), TableName.parse("lake.analytics." + name));
  }

  @Test
  void shouldAnswerByNameSourceAndTarget() {
    ViewIndex index = new ViewIndex();

    index.put(view("a", "lake.market.trades"), 0);
    index.put(view("b", "lake.market.trades"), 1);
    index.put(view("c", "lake.analytics.a"), 2);

    assertThat(index.view("a")).hasValueSatisfying(v -> assertThat(v.revision()).isZero());
    assertThat(index.readingTable(TableName.parse("lake.market.trades")))
        .extracting(CompiledView::name)
        .containsExactlyInAnyOrder("a", "b");
    assertThat(index.writingTable(TableName.parse("lake.analytics.a")))
        .hasValueSatisfying(v -> assertThat(v.name()).isEqualTo("a"));
    assertThat(index.isWatched(TableName.parse("lake.analytics.a"))).isTrue();
    assertThat(index.isWatched(TableName.parse("lake.analytics.c"))).isFalse();
  }

  @Test
  void shouldKeepTheCompiledFormWhenOnlySettingsChange() throws InvalidViewException {
    ViewIndex index = new ViewIndex();
    ViewDefinition first = view("a", "lake.market.trades");
    index.put(first, 0);
    CompiledView compiled = index.view("a").orElseThrow();
    ViewDefinition slower =
        new ViewDefinition(
            "a",
            first.query(),
            first.target(),
            first.targetPartitioning(),
            first.zone(),
            new RefreshSettings(
                java.time.Duration.ofSeconds(1),
                java.time.Duration.ofSeconds(5),
                java.util.OptionalInt.empty()));

    index.put(slower, 3);

    CompiledView redefined = index.view("a").orElseThrow();
    assertThat(redefined.revision()).isEqualTo(3);
    assertThat(redefined.version()).isEqualTo(compiled.version());
    assertThat(redefined.query()).isSameAs(compiled.query());
  }

  @Test
  void shouldSkipAnInvalidDefinitionKeepingTheOneInForce() {
    ViewIndex index = new ViewIndex();
    index.put(view("a", "lake.market.trades"), 0);
    long generation = index.generation();

    index.put(ViewDefinition.of("a", "SELECT 1", TableName.parse("lake.analytics.a")), 1);
    index.put(ViewDefinition.of("a", "SELECT 1", TableName.parse("lake.analytics.a")), 1);

    assertThat(index.view("a")).hasValueSatisfying(v -> assertThat(v.revision()).isZero());
    assertThat(index.rejected()).containsKey("a");
    assertThat(index.rejected().get("a").reason()).contains("line 1");
    assertThat(index.generation()).isEqualTo(generation + 1);
    assertThat(index.readingTable(TableName.parse("lake.market.trades"))).hasSize(1);
  }

  @Test
  void shouldIgnoreADefinitionOlderThanTheOneInForce() {
    ViewIndex index = new ViewIndex();
    index.put(view("a", "lake.market.quotes"), 5);

    index.put(view("a", "lake.market.trades"), 4);

    assertThat(index.view("a").orElseThrow().source())
        .isEqualTo(TableName.parse("lake.market.quotes"));
  }

  @Test
  void shouldForgetADeletedView() {
    ViewIndex index = new ViewIndex();
    index.put(view("a", "lake.market.trades"), 0);

    index.remove("a");

    assertThat(index.view("a")).isEmpty();
    assertThat(index.views()).isEmpty();
    assertThat(index.sources()).isEmpty();
  }
}
