package io.floe.app.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.store.StoredView;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TargetPartitionField;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ViewsFileTest {

  @Test
  void shouldReadEveryField() throws ViewsFileException {
    List<ViewDefinition> views =
        ViewsFile.parse(
            "views.yaml",
            """
            views:
              - name: ohlcv_1m
                query: |
                  SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n
                  FROM lake.market.trades
                  GROUP BY 1, 2
                target: lake.analytics.ohlcv_1m
                target_partitioning: [day(minute_ts), "bucket(16, symbol)"]
                timezone: Europe/Paris
                refresh:
                  linger: 500ms
                  min_interval: 1m
                  chunk_rows: 500_000
                  chunk_buckets: 1440
              - name: daily
                query: SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.t GROUP BY 1
                target: lake.analytics.daily
            """);

    assertThat(views).hasSize(2);
    ViewDefinition ohlcv = views.get(0);
    assertThat(ohlcv.name()).isEqualTo("ohlcv_1m");
    assertThat(ohlcv.query()).startsWith("SELECT symbol").endsWith("GROUP BY 1, 2\n");
    assertThat(ohlcv.target()).isEqualTo(TableName.parse("lake.analytics.ohlcv_1m"));
    assertThat(ohlcv.targetPartitioning())
        .containsExactly(
            new TargetPartitionField("day", "minute_ts", 0),
            new TargetPartitionField("bucket", "symbol", 16));
    assertThat(ohlcv.zone()).isEqualTo(ZoneId.of("Europe/Paris"));
    assertThat(ohlcv.refresh())
        .isEqualTo(
            new RefreshSettings(
                Duration.ofMillis(500),
                Duration.ofMinutes(1),
                OptionalInt.of(1440),
                java.util.OptionalLong.of(500_000)));
    ViewDefinition daily = views.get(1);
    assertThat(daily.zone().getId()).isEqualTo("UTC");
    assertThat(daily.refresh()).isEqualTo(RefreshSettings.DEFAULTS);
    assertThat(daily.targetPartitioning()).isEmpty();
  }

  @Test
  void shouldAcceptTrinoArrayPartitioningAsWrittenForIcebergIvm() throws ViewsFileException {
    List<ViewDefinition> views =
        ViewsFile.parse(
            "views.yaml",
            """
            views:
              - name: v
                query: q
                target: lake.a.v
                target_partitioning: "ARRAY['day(minute)', 'symbol']"
            """);

    assertThat(views.get(0).targetPartitioning())
        .containsExactly(
            new TargetPartitionField("day", "minute", 0),
            new TargetPartitionField("identity", "symbol", 0));
  }

  @Test
  void shouldReadAnExplicitEmptyListAsNoViews() throws ViewsFileException {
    assertThat(ViewsFile.parse("views.yaml", "views: []")).isEmpty();
    assertThat(ViewsFile.parse("views.yaml", "# every view retired\nviews: [ ]\n")).isEmpty();
  }

  @Test
  void shouldRejectAFileWithoutADocumentRatherThanReadNoViews() {
    for (String empty : List.of("", "  \n\n", "# views are coming\n", "---\n")) {
      assertThatThrownBy(() -> ViewsFile.parse("views.yaml", empty))
          .as("%s", empty)
          .isInstanceOf(ViewsFileException.class)
          .hasMessage(
              "views.yaml: the views file is empty (if it is being written, it is read again);"
                  + " write 'views: []' to remove every view");
    }
  }

  @Test
  void shouldRejectAViewsKeyWithoutAListAsAFileCutShort() {
    for (String cut : List.of("views:", "views:\n", "views: ~\n")) {
      assertThatThrownBy(() -> ViewsFile.parse("views.yaml", cut))
          .as("%s", cut)
          .isInstanceOf(ViewsFileException.class)
          .hasMessage(
              "views.yaml:1:1: 'views' has no list (the file may be cut short); write"
                  + " 'views: []' to remove every view");
    }
  }

  @Test
  void shouldNameTheFileWhenAZeroByteFileIsLoaded(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("views.yaml"), "");

    assertThatThrownBy(() -> ViewsFile.load(file))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageStartingWith(file + ": the views file is empty");
  }

  @Test
  void shouldReportMalformedYamlWithItsPosition() {
    assertThatThrownBy(
            () -> ViewsFile.parse("views.yaml", "views:\n  - name: a\n    query: [unclosed\n"))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageStartingWith("views.yaml:4:1: malformed YAML: ");
  }

  @Test
  void shouldNameFileLineViewAndFieldOfAnUnknownField() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml",
                    """
                    views:
                      - name: ohlcv_1m
                        querry: SELECT 1
                        target: lake.a.b
                    """))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageContaining(
            "views.yaml:3:5: view 'ohlcv_1m': unknown field 'querry' (expected one of: name, query,"
                + " target, target_partitioning, timezone, refresh)")
        .hasMessageContaining("views.yaml:2:5: view 'ohlcv_1m': missing field 'query'");
  }

  @Test
  void shouldReportAMissingNameByLine() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml", "views:\n  - query: SELECT 1\n    target: lake.a.b\n"))
        .isInstanceOf(ViewsFileException.class)
        .hasMessage("views.yaml:2:5: view at line 2: missing field 'name'");
  }

  @Test
  void shouldRejectADuplicateName() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml",
                    """
                    views:
                      - name: v
                        query: q
                        target: lake.a.v
                      - name: v
                        query: q2
                        target: lake.a.w
                    """))
        .isInstanceOf(ViewsFileException.class)
        .hasMessage("views.yaml:5:5: view 'v' is declared twice (first at line 2)");
  }

  @Test
  void shouldRejectBadValuesNamingTheField() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml",
                    """
                    views:
                      - name: v
                        query: q
                        target: analytics_v
                        timezone: Mars/Olympus
                        target_partitioning: [weekly(x)]
                        refresh:
                          linger: soon
                          min_interval: 1s
                          every: 5m
                    """))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageContaining(
            "views.yaml:4:13: view 'v': field 'target': Table name 'analytics_v' must be qualified"
                + " as catalog.namespace.table")
        .hasMessageContaining("views.yaml:5:15: view 'v': field 'timezone': unknown time zone")
        .hasMessageContaining("field 'target_partitioning': 'weekly(x)' is not a partition field")
        .hasMessageContaining(
            "views.yaml:8:15: view 'v': field 'refresh.linger' must be a duration such as 500ms")
        .hasMessageContaining("view 'v': unknown field 'refresh.every'");
  }

  @Test
  void shouldReadAViewsStalenessObjectiveAndLeaveTheOthersOnFloesDefault() throws Exception {
    // Given two views, one with an objective of its own
    String file =
        """
        views:
          - name: fast
            query: q
            target: lake.analytics.fast
            refresh:
              max_staleness: 30s
          - name: slow
            query: q
            target: lake.analytics.slow
        """;

    // When the file is read
    List<ViewDefinition> views = ViewsFile.parse("views.yaml", file);

    // Then the first has its objective, through the views topic too, and the second none
    assertThat(views.get(0).refresh().maxStaleness()).contains(Duration.ofSeconds(30));
    assertThat(views.get(1).refresh().maxStaleness()).isEmpty();
    StoredView stored =
        StoredView.of(StoredView.toRecord(views.get(0), "file", java.time.Instant.EPOCH));
    assertThat(stored.maxStaleness(Duration.ofMinutes(5))).isEqualTo(Duration.ofSeconds(30));
    assertThat(stored.toDefinition().refresh()).isEqualTo(views.get(0).refresh());
    assertThat(
            StoredView.of(StoredView.toRecord(views.get(1), "file", java.time.Instant.EPOCH))
                .maxStaleness(Duration.ofMinutes(5)))
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void shouldRejectAStalenessObjectiveThatIsNotAPositiveDuration() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml",
                    """
                    views:
                      - name: v
                        query: q
                        target: lake.analytics.v
                        refresh:
                          max_staleness: 0s
                      - name: w
                        query: q
                        target: lake.analytics.w
                        refresh:
                          max_staleness: soon
                    """))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageContaining("view 'v': field 'refresh': max_staleness must be positive")
        .hasMessageContaining(
            "view 'w': field 'refresh.max_staleness' must be a duration such as 500ms");
  }

  @Test
  void shouldRejectTheSettingsOfEarlierReleasesNamingTheirReplacements() {
    assertThatThrownBy(
            () ->
                ViewsFile.parse(
                    "views.yaml",
                    """
                    views:
                      - name: v
                        query: q
                        target: lake.a.v
                        refresh: {debounce: 10s, max_delay: 1s}
                    """))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageContaining(
            "views.yaml:5:15: view 'v': field 'refresh.debounce' is no longer supported: use"
                + " 'refresh.linger'")
        .hasMessageContaining(
            "view 'v': field 'refresh.max_delay' is no longer supported: use 'refresh.linger'")
        .hasMessageContaining("'refresh.min_interval'");
  }

  @Test
  void shouldRejectATopLevelThatIsNotViews() {
    assertThatThrownBy(() -> ViewsFile.parse("views.yaml", "- name: v\n"))
        .isInstanceOf(ViewsFileException.class)
        .hasMessage("views.yaml:1:1: expected a mapping with a 'views' list");
    assertThatThrownBy(() -> ViewsFile.parse("views.yaml", "view:\n  - name: v\n"))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageContaining("unknown top-level field 'view' (expected: views)");
  }

  @Test
  void shouldRejectANameDeclaredInTwoFiles(@TempDir Path dir) throws Exception {
    Path a =
        Files.writeString(
            dir.resolve("a.yaml"), "views:\n  - {name: v, query: q, target: l.a.v}\n");
    Path b =
        Files.writeString(
            dir.resolve("b.yaml"), "views:\n  - {name: v, query: q, target: l.a.w}\n");

    assertThatThrownBy(() -> ViewsFile.loadAll(List.of(a, b)))
        .isInstanceOf(ViewsFileException.class)
        .hasMessage(b + ": view 'v' is already declared in " + a);
  }

  @Test
  void shouldSayWhenTheFileCannotBeRead(@TempDir Path dir) {
    assertThatThrownBy(() -> ViewsFile.load(dir.resolve("missing.yaml")))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageStartingWith(dir.resolve("missing.yaml") + ": cannot read views file");
  }

  @Test
  void shouldChangeTheVersionWithTheQueryButNotItsWhitespace() {
    TableName target = TableName.parse("lake.a.v");
    ViewDefinition one = ViewDefinition.of("v", "SELECT a\n  FROM t", target);
    ViewDefinition reformatted = ViewDefinition.of("v", "SELECT a FROM t  ", target);
    ViewDefinition changed = ViewDefinition.of("v", "SELECT b FROM t", target);

    assertThat(one.version()).isEqualTo(reformatted.version()).hasSize(16);
    assertThat(changed.version()).isNotEqualTo(one.version());
  }
}
