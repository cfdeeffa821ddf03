package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The life of a view's state table ({@link StateTable}) beside its target, on a real JDBC catalog
 * with real Parquet files: dropped with the target of a deleted view, and its snapshots expired
 * only while they agree with what the target records.
 */
class StateTableLifecycleTest {

  private static final String DAILY_AVG =
      """
      SELECT symbol, date_trunc('day', ts) AS day, avg(price) AS mean, count(*) AS trades
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  private static final String DAILY =
      """
      SELECT symbol, date_trunc('day', ts) AS day, count(*) AS trades, sum(quantity) AS volume
      FROM lake.market.trades
      GROUP BY 1, 2
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private ViewRefresher refresher;
  private final Random random = new Random(3);
  private Long watermark;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private static ViewDefinition view(String name, String query) {
    return ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
  }

  private RefreshOutcome refresh(ViewRefresher with, ViewDefinition view) {
    trades.refresh();
    long current = trades.currentSnapshot().snapshotId();
    DirtyBuckets dirty = ViewRefresherTest.detected(trades, watermark, current, view);
    RefreshOutcome outcome =
        with.refresh(
            ViewRefresherTest.request(view, current, watermark, dirty),
            ViewRefresher.ProgressListener.NONE);
    watermark = current;
    OracleAssertions.assertMatches(target(view), trades, current, view.query());
    return outcome;
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }

  private TableIdentifier stateOf(ViewDefinition view) {
    return StateTable.identifier(view.target().identifier());
  }

  private void appendTrades(int n) {
    lake.append(trades, lake.randomTrades(random, n, "2026-04-07", 8, 18));
  }

  @Test
  void shouldDropTheStateTableWithTheTargetOfADeletedView() {
    // Given a view with averages, refreshed once: its target and its state table exist
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    appendTrades(100);
    refresh(refresher, view);
    assertThat(lake.catalog().tableExists(stateOf(view))).isTrue();

    // When its target is dropped as the view is deleted
    boolean dropped = TargetTables.drop(lake.catalog(), view.target(), view.name());

    // Then both are gone
    assertThat(dropped).isTrue();
    assertThat(lake.catalog().tableExists(view.target().identifier())).isFalse();
    assertThat(lake.catalog().tableExists(stateOf(view))).isFalse();
  }

  @Test
  void shouldLeaveATableBesideTheTargetThatFloeDidNotCreateAsTheViewsState() {
    // Given a decomposable view (no state table) and a table of the state table's name made by
    // someone else
    ViewDefinition view = view("daily", DAILY);
    appendTrades(50);
    refresh(refresher, view);
    lake.createTable(
        "analytics",
        "daily" + StateTable.SUFFIX,
        IcebergFixture.TRADES,
        PartitionSpec.unpartitioned());

    // When the view's target is dropped
    TargetTables.drop(lake.catalog(), view.target(), view.name());

    // Then the other table stays
    assertThat(lake.catalog().tableExists(view.target().identifier())).isFalse();
    assertThat(lake.catalog().tableExists(stateOf(view))).isTrue();
  }

  @Test
  void shouldNotExpireTheStateSnapshotItsTargetRecordsAfterAStateCommitItsTargetNeverGot()
      throws InterruptedException {
    // Given a view with averages, refreshed once, whose state table keeps one snapshot
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    appendTrades(100);
    refresh(refresher, view);
    Table state = lake.catalog().loadTable(stateOf(view));
    long recorded = state.currentSnapshot().snapshotId();
    state
        .updateProperties()
        .set(TableProperties.MAX_SNAPSHOT_AGE_MS, "1")
        .set(TableProperties.MIN_SNAPSHOTS_TO_KEEP, "1")
        .commit();
    // and a refresh of an append that stopped after the state commit, before the target's
    appendTrades(10);
    trades.refresh();
    long appended = trades.currentSnapshot().snapshotId();
    ViewRefresher stopping =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void stateCommitted(String name, ChunkId chunk) {
                throw new IllegalStateException("stopped after the state commit");
              }
            });
    assertThatThrownBy(
            () ->
                stopping.refresh(
                    ViewRefresherTest.request(
                        view,
                        appended,
                        watermark,
                        ViewRefresherTest.detected(trades, watermark, appended, view)),
                    ViewRefresher.ProgressListener.NONE))
        .hasMessage("stopped after the state commit");
    Thread.sleep(5);

    // When the state table's upkeep runs past its retention
    state.refresh();
    int expired =
        TargetMaintenance.afterStateCommit(
            state,
            target(view),
            ViewRefresherTest.compiled(view),
            System.currentTimeMillis(),
            ManifestWork.LOCAL_READS);

    // Then the snapshot the target records stays, and the next refresh folds the append once
    assertThat(expired).isZero();
    state.refresh();
    assertThat(state.snapshot(recorded)).isNotNull();
    assertThat(refresh(refresher, view).delta()).isTrue();
  }

  @Test
  void shouldExpireTheStateTablesSnapshotsThroughTheGuardedCommitOnceItAgreesWithItsTarget()
      throws InterruptedException {
    // Given a view with averages, refreshed twice, whose state table keeps one snapshot
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    appendTrades(100);
    refresh(refresher, view);
    Table state = lake.catalog().loadTable(stateOf(view));
    state
        .updateProperties()
        .set(TableProperties.MAX_SNAPSHOT_AGE_MS, "1")
        .set(TableProperties.MIN_SNAPSHOTS_TO_KEEP, "1")
        .commit();
    Thread.sleep(5);

    // When an append is folded in (its upkeep runs after the target's commit)
    appendTrades(10);
    assertThat(refresh(refresher, view).delta()).isTrue();

    // Then the state keeps only the snapshot its target records, and stays trusted
    state.refresh();
    assertThat(state.snapshots()).hasSize(1);
    assertThat(target(view).currentSnapshot().summary())
        .containsEntry(
            FloeProperties.STATE_SNAPSHOT_ID, Long.toString(state.currentSnapshot().snapshotId()));
    appendTrades(10);
    assertThat(refresh(refresher, view).delta()).isTrue();
  }

  @Test
  void shouldCompactTheStateTablesSmallFilesAndKeepFoldingIntoThem() {
    // Given a view with averages over three days, refreshed once, whose state table is compacted
    // from two small files of a tier on
    ViewDefinition view = view("daily_avg", DAILY_AVG);
    for (String day : List.of("2026-04-06", "2026-04-07", "2026-04-08")) {
      lake.append(trades, lake.randomTrades(random, 100, day, 8, 18));
    }
    refresh(refresher, view);
    Table state = lake.catalog().loadTable(stateOf(view));
    state.updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();

    // When appends to each day are folded in, one refresh each (each day's states rewritten
    // alone: small files)
    for (String day : List.of("2026-04-06", "2026-04-07", "2026-04-08")) {
      lake.append(trades, lake.randomTrades(random, 10, day, 8, 18));
      assertThat(refresh(refresher, view).delta()).isTrue();
    }

    // Then the state table was compacted (a replace), its target records the compacted snapshot,
    // and the next append still folds into the states (the oracle holds at each step)
    state.refresh();
    assertThat(state.snapshots())
        .extracting(org.apache.iceberg.Snapshot::operation)
        .contains(org.apache.iceberg.DataOperations.REPLACE);
    long compacted = state.currentSnapshot().snapshotId();
    assertThat(Bookmark.of(target(view)).stateSnapshotId()).isEqualTo(compacted);
    lake.append(trades, lake.randomTrades(random, 10, "2026-04-07", 8, 18));
    assertThat(refresh(refresher, view).delta()).isTrue();
    state.refresh();
    // (the fold commits new states on the compacted ones, which may be compacted again at once:
    // hourly states leave a small file per dirty sub-bucket)
    assertThat(state.currentSnapshot().snapshotId()).isNotEqualTo(compacted);
    assertThat(SnapshotUtil.isAncestorOf(state, state.currentSnapshot().snapshotId(), compacted))
        .isTrue();
    assertThat(Bookmark.of(target(view)).stateSnapshotId())
        .isEqualTo(state.currentSnapshot().snapshotId());
  }
}
