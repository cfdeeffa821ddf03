package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Whether a target is current, told from the tables alone (DESIGN §3.6). */
class FreshnessTest {

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private CompiledView view;

  @BeforeEach
  void setUp() throws InvalidViewException {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    view =
        CompiledView.compile(
            ViewDefinition.of(
                "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m")),
            1);
    long snapshot =
        lake.append(trades, List.of(lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    new ViewRefresher(name -> lake.catalog())
        .refresh(
            RefreshRequest.of(view, snapshot, null, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldTellARefreshedTargetCurrent() {
    assertThat(Freshness.isCurrent(target(), trades, view.version())).isTrue();
  }

  @Test
  void shouldNotTellATargetCurrentWhenAColumnItReadsWasDroppedAndAddedAgainWithoutASnapshot() {
    // When quantity is dropped and added again, which creates no snapshot
    trades.updateSchema().deleteColumn("quantity").commit();
    trades.updateSchema().addColumn("quantity", Types.LongType.get()).commit();

    // Then the target, which still holds the old quantities, waits for a refresh
    assertThat(Freshness.isCurrent(target(), trades, view.version())).isFalse();
  }

  @Test
  void shouldNotTellATargetCurrentWhenTheSourceGetsANameMappingWithoutASnapshot() {
    // When the source is given a name mapping, which creates no snapshot
    trades
        .updateProperties()
        .set(
            TableProperties.DEFAULT_NAME_MAPPING,
            NameMappingParser.toJson(MappingUtil.create(trades.schema())))
        .commit();

    // Then the target waits for a refresh
    assertThat(Freshness.isCurrent(target(), trades, view.version())).isFalse();
  }

  @Test
  void shouldKeepTellingATargetCurrentWhenTheSchemaChangesOnlyInWhatTheViewDoesNotRead() {
    // When a column the view does not read is added, and one it reads renamed in case only
    trades.updateSchema().addColumn("venue", Types.StringType.get()).commit();
    trades.updateSchema().renameColumn("price", "Price").commit();

    // Then the target is still current
    assertThat(Freshness.isCurrent(target(), trades, view.version())).isTrue();
  }

  @Test
  void shouldTellATargetOfAnEarlierReleaseThatRecordsNoColumnsCurrent() {
    // Given a target that records no source columns, and a source with a name mapping since
    target().updateProperties().remove(FloeProperties.SOURCE_COLUMNS).commit();
    trades
        .updateProperties()
        .set(
            TableProperties.DEFAULT_NAME_MAPPING,
            NameMappingParser.toJson(MappingUtil.create(trades.schema())))
        .commit();

    // Then its snapshot bookmark alone decides
    assertThat(Freshness.isCurrent(target(), trades, view.version())).isTrue();
  }

  private Table target() {
    return lake.load("analytics", "ohlcv_1m");
  }
}
