package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.ObjectStoreRequests;
import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.testing.IcebergFixture;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.iceberg.CountingFileIO;
import io.floe.topology.iceberg.RequestKind;
import io.floe.topology.iceberg.RequestStage;
import io.floe.topology.iceberg.RequestTally;
import io.floe.topology.refresh.RefreshHooks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store requests of the real topology over a catalog whose FileIO Floe counts: resolve
 * counts in the process's tally, each refresh's in its refresh event.
 */
class ObjectStoreRequestsTopologyTest {

  @TempDir Path dir;
  private TopologyHarness floe;
  private IcebergFixture writer;
  private IcebergFixture lake;
  private Table trades;

  @BeforeEach
  void setUp() throws Exception {
    // The source is written through a catalog of its own, as another process would: Floe has
    // none of it in its caches until it reads it
    writer = IcebergFixture.create(dir);
    lake = IcebergFixture.create(CountingFileIO.install(writer.catalogProperties()));
    floe = new TopologyHarness(lake, dir, Runnable::run, Runnable::run, RefreshHooks.NONE);
    trades = writer.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
    writer.close();
  }

  @Test
  void shouldReportEachRefreshsRequestsInItsEventAndCountResolving() {
    // Given a view refreshed once over the source's first snapshot
    writer.append(trades, List.of(writer.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 5L, "B")));
    floe.define("ohlcv_1m", TradeViews.OHLCV_1M);
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.events()).hasSize(1);
    RequestTally process = RequestTally.process();
    long resolved = process.requests(RequestKind.TABLE_METADATA, RequestStage.RESOLVE);

    // When a commit to the source is announced
    writer.append(trades, List.of(writer.trade("AAPL", "2026-04-08T10:05:30Z", 11.0, 1L, "S")));
    floe.announce("lake.market.trades");
    floe.idle(Duration.ofSeconds(2));

    // Then resolving read the source's new metadata file, not the target's (whose commit notice
    // the refresh published; Floe wrote it: 2 on main); and the refresh event lists the refresh's
    // requests by stage, the source's metadata file not read again by plan (2 on main)
    assertThat(process.requests(RequestKind.TABLE_METADATA, RequestStage.RESOLVE) - resolved)
        .isEqualTo(1);
    List<RefreshEvent> events = floe.events();
    assertThat(events).hasSize(1);
    RefreshEvent event = events.get(0);
    assertThat(event.getMode()).isEqualTo(RefreshMode.INCREMENTAL);
    assertThat(event.getRequests())
        .extracting(ObjectStoreRequests::getStage)
        .containsOnly("plan", "read", "write", "commit");
    assertThat(event.getRequests()).filteredOn(r -> r.getKind().equals("table-metadata")).isEmpty();
    assertThat(event.getRequests())
        .filteredOn(r -> r.getStage().equals("read") && r.getKind().equals("data-footer"))
        .extracting(ObjectStoreRequests::getCount)
        // Only the new file holds the dirty minute: its footer's length, then its footer.
        .containsExactly(2L);
    assertThat(event.getStoreBytesRead()).isPositive();
    assertThat(event.getStoreBytesWritten()).isPositive();
  }
}
