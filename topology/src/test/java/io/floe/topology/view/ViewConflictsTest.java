package io.floe.topology.view;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.topology.view.ViewConflicts.ExistingTable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ViewConflictsTest {

  private static ViewDefinition view(String name, String source, String target) {
    return ViewDefinition.of(
        name,
        "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n FROM "
            + source
            + " GROUP BY 1, 2",
        TableName.parse(target));
  }

  private static final ViewDefinition ONE_MINUTE =
      view("ohlcv_1m", "lake.market.trades", "lake.analytics.ohlcv_1m");
  private static final ViewDefinition ONE_HOUR =
      view("ohlcv_1h", "lake.analytics.ohlcv_1m", "lake.analytics.ohlcv_1h");

  /** A catalog where only the given tables exist. */
  private static ViewConflicts.Targets tables(Map<String, ExistingTable> existing) {
    return name -> {
      if (!name.catalog().equals("lake")) {
        throw new IllegalArgumentException("unknown catalog '" + name.catalog() + "'");
      }
      return Optional.ofNullable(existing.get(name.toString()));
    };
  }

  private static final ViewConflicts.Targets NOTHING = tables(Map.of());

  @Test
  void shouldAcceptChainedViewsAndAViewRewritingItsOwnTarget() {
    Map<String, ExistingTable> existing =
        Map.of("lake.analytics.ohlcv_1m", new ExistingTable("ohlcv_1m"));

    Map<String, String> refused =
        ViewConflicts.check(List.of(ONE_MINUTE), List.of(ONE_MINUTE, ONE_HOUR), tables(existing));

    assertThat(refused).isEmpty();
  }

  @Test
  void shouldRefuseAViewThatWritesItsOwnSource() {
    ViewDefinition loop = view("loop", "lake.market.trades", "lake.market.trades");

    Map<String, String> refused = ViewConflicts.check(List.of(), List.of(loop), NOTHING);

    assertThat(refused)
        .containsExactly(
            Map.entry("loop", "View 'loop' cannot write lake.market.trades: it is its source"));
  }

  @Test
  void shouldRefuseTheTargetOfAnotherViewInForceNamingIt() {
    ViewDefinition copy = view("copy", "lake.market.quotes", "lake.analytics.ohlcv_1m");

    Map<String, String> refused = ViewConflicts.check(List.of(ONE_MINUTE), List.of(copy), NOTHING);

    assertThat(refused)
        .containsExactly(
            Map.entry(
                "copy",
                "View 'copy' cannot write lake.analytics.ohlcv_1m: it is the target of view"
                    + " 'ohlcv_1m'; a target belongs to one view"));
  }

  @Test
  void shouldRefuseBothViewsOfOneWriteThatShareATarget() {
    ViewDefinition a = view("a", "lake.market.trades", "lake.analytics.bars");
    ViewDefinition b = view("b", "lake.market.quotes", "lake.Analytics.BARS");

    Map<String, String> refused = ViewConflicts.check(List.of(), List.of(a, b), NOTHING);

    assertThat(refused).containsOnlyKeys("a", "b");
    assertThat(refused.get("a")).contains("it is the target of view 'b'");
    assertThat(refused.get("b")).contains("it is the target of view 'a'");
  }

  @Test
  void shouldRefuseAnExistingTableFloeDidNotCreate() {
    Map<String, ExistingTable> existing = Map.of("lake.analytics.ohlcv_1m", ExistingTable.FOREIGN);

    Map<String, String> refused =
        ViewConflicts.check(List.of(), List.of(ONE_MINUTE), tables(existing));

    assertThat(refused)
        .containsExactly(
            Map.entry(
                "ohlcv_1m",
                "View 'ohlcv_1m' cannot write lake.analytics.ohlcv_1m: the table exists and"
                    + " Floe did not create it; choose another target, or drop the table"));
  }

  @Test
  void shouldRefuseATableFloeCreatedForAnotherViewNamingIt() {
    Map<String, ExistingTable> existing =
        Map.of("lake.analytics.ohlcv_1m", new ExistingTable("old_bars"));

    Map<String, String> refused =
        ViewConflicts.check(List.of(), List.of(ONE_MINUTE), tables(existing));

    assertThat(refused.get("ohlcv_1m"))
        .contains("the table exists and Floe created it for view 'old_bars'");
  }

  @Test
  void shouldRefuseATargetWhoseCatalogCannotBeChecked() {
    ViewDefinition elsewhere = view("elsewhere", "lake.market.trades", "other.analytics.x");

    Map<String, String> refused = ViewConflicts.check(List.of(), List.of(elsewhere), NOTHING);

    assertThat(refused.get("elsewhere"))
        .isEqualTo(
            "Cannot check the target other.analytics.x of view 'elsewhere': unknown catalog"
                + " 'other'");
  }

  @Test
  void shouldRefuseAChangeThatClosesACycleWithTheViewsInForce() {
    ViewDefinition backwards =
        view("ohlcv_1m", "lake.analytics.ohlcv_1h", "lake.analytics.ohlcv_1m");

    Map<String, String> refused =
        ViewConflicts.check(List.of(ONE_MINUTE, ONE_HOUR), List.of(backwards), NOTHING);

    assertThat(refused)
        .containsExactly(
            Map.entry(
                "ohlcv_1m",
                "View 'ohlcv_1m' cannot read lake.analytics.ohlcv_1h: views would form a cycle,"
                    + " ohlcv_1m -> ohlcv_1h -> ohlcv_1m (each reads the target of the one"
                    + " before)"));
  }

  @Test
  void shouldRefuseACycleAmongTheViewsOfOneWrite() {
    ViewDefinition a = view("a", "lake.x.c", "lake.x.a");
    ViewDefinition b = view("b", "lake.x.a", "lake.x.b");
    ViewDefinition c = view("c", "lake.x.b", "lake.x.c");

    Map<String, String> refused = ViewConflicts.check(List.of(), List.of(a, b, c), NOTHING);

    assertThat(refused).containsOnlyKeys("a", "b", "c");
    assertThat(refused.get("a")).contains("a -> b -> c -> a");
    assertThat(refused.get("b")).contains("b -> c -> a -> b");
  }

  @Test
  void shouldRefuseAViewThatJoinsItsOwnTargetOrADownstreamTargetAsADimension() {
    // Given a view that joins its own target, and one that joins the target of a view reading it
    ViewDefinition self =
        ViewDefinition.of(
            "self",
            "SELECT d.n, date_trunc('minute', t.ts) AS minute_ts, count(*) AS c"
                + " FROM lake.market.trades t JOIN lake.x.self d ON t.symbol = d.symbol"
                + " GROUP BY 1, 2",
            TableName.parse("lake.x.self"));
    ViewDefinition upstream =
        ViewDefinition.of(
            "upstream",
            "SELECT d.n, date_trunc('minute', t.ts) AS minute_ts, count(*) AS c"
                + " FROM lake.market.trades t JOIN lake.x.down d ON t.symbol = d.symbol"
                + " GROUP BY 1, 2",
            TableName.parse("lake.x.up"));
    ViewDefinition downstream = view("downstream", "lake.x.up", "lake.x.down");

    // When they are written, Then each is refused: each commit would drive the next refresh
    Map<String, String> refused =
        ViewConflicts.check(List.of(), List.of(self, upstream, downstream), NOTHING);

    assertThat(refused.get("self"))
        .isEqualTo("View 'self' cannot write lake.x.self: it is a dimension it joins");
    assertThat(refused.get("upstream")).contains("upstream -> downstream -> upstream");
  }

  @Test
  void shouldKeepARefusedViewInForceForTheOtherWrites() {
    // ohlcv_1m may not move to a foreign table, so it keeps lake.analytics.ohlcv_1m, which the new
    // view then may not take.
    ViewDefinition moved = view("ohlcv_1m", "lake.market.trades", "lake.analytics.foreign");
    ViewDefinition taker = view("taker", "lake.market.quotes", "lake.analytics.ohlcv_1m");
    Map<String, ExistingTable> existing = Map.of("lake.analytics.foreign", ExistingTable.FOREIGN);

    Map<String, String> refused =
        ViewConflicts.check(List.of(ONE_MINUTE), List.of(moved, taker), tables(existing));

    assertThat(refused).containsOnlyKeys("ohlcv_1m", "taker");
    assertThat(refused.get("taker")).contains("it is the target of view 'ohlcv_1m'");
  }

  @Test
  void shouldAcceptTwoViewsSwappingTheirTargetsInOneWrite() {
    ViewDefinition a = view("a", "lake.market.trades", "lake.analytics.one");
    ViewDefinition b = view("b", "lake.market.quotes", "lake.analytics.two");
    ViewDefinition aSwapped = view("a", "lake.market.trades", "lake.analytics.two");
    ViewDefinition bSwapped = view("b", "lake.market.quotes", "lake.analytics.one");
    Map<String, ExistingTable> existing =
        Map.of(
            "lake.analytics.one", new ExistingTable("a"),
            "lake.analytics.two", new ExistingTable("b"));

    // Each table was created for the other view: the swap is refused by ownership, not by sharing.
    Map<String, String> refused =
        ViewConflicts.check(List.of(a, b), List.of(aSwapped, bSwapped), tables(existing));
    assertThat(refused.get("a")).contains("Floe created it for view 'b'");

    // Before the targets exist, the swap is fine.
    assertThat(ViewConflicts.check(List.of(a, b), List.of(aSwapped, bSwapped), NOTHING)).isEmpty();
  }
}
