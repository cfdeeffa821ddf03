package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.ViewRecord;
import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Definition revisions against any history of floe.views (DESIGN §3.6): a topic recreated or
 * mirrored with other offsets must neither freeze a view nor hide a real conflict.
 */
class ViewRevisionsTest {

  private static final String OHLCV = TradeViews.OHLCV_1M;
  private static final String COUNTED =
      "SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS n"
          + " FROM lake.market.trades GROUP BY 1, 2";
  private static final TableName TARGET = TableName.parse("lake.analytics.bars");

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private TopologyHarness floe;

  @BeforeEach
  void setUp() throws Exception {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    floe = new TopologyHarness(lake, dir, Runnable::run, Runnable::run, RefreshHooks.NONE);
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  private static ViewDefinition bars(String query) {
    return ViewDefinition.of("bars", query, TARGET);
  }

  private long trade(String at) {
    return lake.append(trades, List.of(lake.trade("AAPL", at, 10.0, 1L, "B")));
  }

  /** Floe on a views topic that starts again from offset 0, over the same lake. */
  private void recreateViewsTopic(String name) throws Exception {
    floe.closeTopology();
    floe =
        new TopologyHarness(
            lake, dir.resolve(name), Runnable::run, Runnable::run, RefreshHooks.NONE);
  }

  /** A view defined once, then redefined: its target holds the second definition's revision. */
  private void defineThenRedefine() {
    trade("2026-04-08T10:00:05Z");
    floe.define(bars(OHLCV));
    floe.idle(Duration.ofSeconds(1));
    floe.define(bars(COUNTED));
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.target("bars").properties())
        .containsEntry(FloeProperties.VIEW_REVISION, "1")
        .containsEntry(FloeProperties.VIEW_VERSION, bars(COUNTED).version());
    floe.events();
  }

  @Test
  void shouldRefreshARedefinedViewAfterItsViewsTopicIsRecreated() throws Exception {
    // Given a view redefined once, and a views topic recreated holding its last definition only
    defineThenRedefine();
    recreateViewsTopic("recreated");
    floe.define(bars(COUNTED));

    // When the source commits
    long s2 = trade("2026-04-08T10:07:05Z");
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));

    // Then the view refreshes as before and equals the oracle
    List<RefreshEvent> events = floe.events();
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.INCREMENTAL);
    assertThat(events.get(0).getSourceSnapshotId()).isEqualTo(s2);
    assertThat(floe.state("bars").status()).isEqualTo(ViewState.Status.IDLE);
    OracleAssertions.assertMatches(floe.target("bars"), trades, s2, COUNTED);
  }

  @Test
  void shouldFollowTheRevisionsOfMirroredRecordsWhateverTheirOffsets() throws Exception {
    // Given definitions that carry their revisions, mirrored to a topic whose offsets start far
    // beyond those of the original
    trade("2026-04-08T10:00:05Z");
    floe.views.pipeInput("bars", withRevision(bars(OHLCV), 0));
    floe.idle(Duration.ofSeconds(1));
    floe.views.pipeInput("bars", withRevision(bars(COUNTED), 1));
    floe.idle(Duration.ofSeconds(1));
    recreateViewsTopic("mirrored");
    for (int i = 0; i < 100; i++) {
      floe.views.pipeInput("unrelated-" + i, null);
    }
    floe.views.pipeInput("bars", withRevision(bars(OHLCV), 0));
    floe.views.pipeInput("bars", withRevision(bars(COUNTED), 1));
    floe.events();

    // When the source commits
    long s2 = trade("2026-04-08T10:07:05Z");
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));

    // Then the later definition is the one in force, and it refreshes the target
    assertThat(floe.index.view("bars"))
        .hasValueSatisfying(v -> assertThat(v.revision()).isEqualTo(1));
    assertThat(floe.events())
        .extracting(RefreshEvent::getMode)
        .containsExactly(RefreshMode.INCREMENTAL);
    assertThat(floe.target("bars").properties()).containsEntry(FloeProperties.VIEW_REVISION, "1");
    OracleAssertions.assertMatches(floe.target("bars"), trades, s2, COUNTED);
  }

  @Test
  void shouldReportAnErrorWhenTheTargetHoldsANewerOtherDefinition() throws Exception {
    // Given a views topic recreated with the view's first definition only, while the target holds
    // the second one, at a larger revision
    defineThenRedefine();
    recreateViewsTopic("stale");
    floe.define(bars(OHLCV));

    // When the source commits
    long s2 = trade("2026-04-08T10:07:05Z");
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));

    // Then the view says so in its status and a refresh event, and leaves the target as it was
    ViewState state = floe.state("bars");
    assertThat(state.status()).isEqualTo(ViewState.Status.ERROR);
    assertThat(state.lastError())
        .contains("revision 1", "revision 0", bars(COUNTED).version(), bars(OHLCV).version());
    List<RefreshEvent> events = floe.events();
    assertThat(events).isNotEmpty();
    assertThat(events.get(0).getMode()).isEqualTo(RefreshMode.FAILED);
    assertThat(events.get(0).getError()).isEqualTo(state.lastError());
    assertThat(floe.target("bars").properties())
        .containsEntry(FloeProperties.VIEW_VERSION, bars(COUNTED).version());
    assertThat(floe.target("bars").properties().get(FloeProperties.SOURCE_SNAPSHOT_ID))
        .isNotEqualTo(Long.toString(s2));
  }

  private static ViewRecord withRevision(ViewDefinition view, long revision) {
    ViewRecord record = StoredView.toRecord(view, "api", Instant.EPOCH);
    record.setRevision(revision);
    return record;
  }
}
