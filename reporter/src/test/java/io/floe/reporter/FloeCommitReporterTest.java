package io.floe.reporter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.schemas.TableCommitted;
import java.time.Instant;
import java.util.Map;
import org.apache.iceberg.metrics.CommitMetrics;
import org.apache.iceberg.metrics.CommitMetricsResult;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.ImmutableCommitReport;
import org.junit.jupiter.api.Test;

/** The notice the reporter makes of a writer's commit report. */
class FloeCommitReporterTest {

  private static final Instant NOW = Instant.parse("2026-04-08T10:00:00Z");

  private static CommitReport report(String tableName, long snapshotId) {
    return ImmutableCommitReport.builder()
        .tableName(tableName)
        .snapshotId(snapshotId)
        .sequenceNumber(7L)
        .operation("append")
        .commitMetrics(CommitMetricsResult.from(CommitMetrics.noop(), Map.of()))
        .build();
  }

  @Test
  void shouldNameTheTableAndSnapshotOfTheCommit() {
    TableCommitted notice = FloeCommitReporter.notice(report("lake.market.trades", 42L), null, NOW);

    assertThat(notice.getCatalog()).isEqualTo("lake");
    assertThat(notice.getNamespace()).containsExactly("market");
    assertThat(notice.getTable()).isEqualTo("trades");
    assertThat(notice.getSnapshotId()).isEqualTo(42L);
    assertThat(notice.getEventTime()).isEqualTo(NOW);
    assertThat(notice.getProducer()).isEqualTo("metrics-reporter");
  }

  @Test
  void shouldUseFloesNameForTheCatalogAndKeepNestedNamespaces() {
    // Spark calls the catalog by its session name; Floe may know it by another.
    TableCommitted notice =
        FloeCommitReporter.notice(report("spark_catalog.prod.market.trades", 1L), "lake", NOW);

    assertThat(notice.getCatalog()).isEqualTo("lake");
    assertThat(notice.getNamespace()).containsExactly("prod", "market");
    assertThat(notice.getTable()).isEqualTo("trades");
  }

  @Test
  void shouldRefuseATableNameWithoutCatalogAndNamespace() {
    assertThatThrownBy(() -> FloeCommitReporter.notice(report("trades", 1L), "lake", NOW))
        .hasMessageContaining("has no catalog and namespace");
  }

  @Test
  void shouldRequireTheBrokerAndNeverFailTheWritersCommit() {
    FloeCommitReporter reporter = new FloeCommitReporter();
    assertThatThrownBy(() -> reporter.initialize(Map.of()))
        .hasMessageContaining(FloeCommitReporter.BOOTSTRAP_SERVERS);

    // A broker that is not there: the report is dropped with a warning, the writer goes on.
    reporter.initialize(
        Map.of(
            FloeCommitReporter.BOOTSTRAP_SERVERS, "127.0.0.1:1", "floe.kafka.max.block.ms", "200"));
    reporter.report(report("lake.market.trades", 42L));
    reporter.report(report("trades", 43L));
    reporter.close();
  }
}
