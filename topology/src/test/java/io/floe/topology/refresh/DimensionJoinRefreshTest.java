package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Refreshes of a view that joins its fact table to a dimension (DESIGN §3.10), through {@link
 * ViewRefresher} over a real JDBC catalog and Parquet files: each dimension is pinned at one
 * snapshot for the whole refresh, and every target equals the oracle (DuckDB joining every live row
 * of each table's snapshot).
 */
class DimensionJoinRefreshTest {

  static final Schema SYMBOLS =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));

  static final String BY_SECTOR =
      """
      SELECT s.sector, date_trunc('hour', t.ts) AS hour_ts, sum(t.quantity) AS volume,
             count(*) AS trades
      FROM lake.market.trades t LEFT JOIN lake.ref.symbols s ON t.symbol = s.symbol
      GROUP BY s.sector, date_trunc('hour', t.ts)
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private Table symbols;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    // Given trades of AAPL, MSFT, IBM and ORCL over a day, and IBM only in the 23:00 hour
    trades = lake.createTrades("market", "trades");
    List<Record> rows = new ArrayList<>();
    for (Record trade : lake.randomTrades(new Random(5), 2000, "2026-04-07", 0, 23)) {
      if (!"IBM".equals(trade.getField("symbol"))) {
        rows.add(trade);
      }
    }
    lake.append(trades, rows);
    lake.append(
        trades,
        List.of(
            lake.trade("IBM", "2026-04-07T23:10:00Z", 10.0, 4L, "B"),
            lake.trade("IBM", "2026-04-07T23:20:00Z", 11.0, 6L, "S")));
    // and a dimension of symbols without ORCL
    symbols = lake.createTable("ref", "symbols", SYMBOLS, PartitionSpec.unpartitioned());
    lake.append(
        symbols,
        List.of(symbol("AAPL", "tech"), symbol("MSFT", "tech"), symbol("IBM", "services")));
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  static Record symbol(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SYMBOLS);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }

  private static ViewDefinition view(int chunkBuckets) {
    return new ViewDefinition(
        "volume_by_sector",
        BY_SECTOR,
        TableName.parse("lake.analytics.volume_by_sector"),
        List.of(),
        null,
        new RefreshSettings(
            Duration.ZERO,
            Duration.ZERO,
            chunkBuckets == 0 ? OptionalInt.empty() : OptionalInt.of(chunkBuckets)));
  }

  private static CompiledView compiled(ViewDefinition view) {
    try {
      return CompiledView.compile(view, 0);
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
  }

  private RefreshOutcome refresh(
      ViewRefresher refresher, CompiledView view, Long watermark, DirtyBuckets dirty) {
    trades.refresh();
    return refresher.refresh(
        RefreshRequest.of(view, trades.currentSnapshot().snapshotId(), watermark, dirty),
        ViewRefresher.ProgressListener.NONE);
  }

  /** How the target differs from the view over the fact's and the dimension's given snapshots. */
  private Optional<String> difference(long factSnapshot, long symbolsSnapshot) {
    Table target = lake.catalog().loadTable(view(0).target().identifier());
    return Oracle.difference(
        "view " + target.name(),
        factSnapshot,
        Oracle.expected(
            new Oracle.Source(trades, "lake.market.trades", factSnapshot),
            List.of(new Oracle.Source(symbols, "lake.ref.symbols", symbolsSnapshot)),
            BY_SECTOR),
        Oracle.actual(target));
  }

  private long current(Table table) {
    table.refresh();
    return table.currentSnapshot().snapshotId();
  }

  @Test
  void shouldEqualTheOracleOnTheFirstRefreshOfAJoinView() {
    // When the view that joins trades to symbols is refreshed for the first time
    RefreshOutcome outcome =
        refresh(
            new ViewRefresher(name -> lake.catalog()),
            compiled(view(0)),
            null,
            DirtyBuckets.none());

    // Then every bucket is computed from both tables
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(difference(current(trades), current(symbols))).isEmpty();
  }

  @Test
  void shouldFoldAFactAppendIntoTheTargetWhileTheDimensionIsUnchanged() {
    // Given a decomposable join view refreshed once
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    CompiledView view = compiled(view(0));
    refresh(refresher, view, null, DirtyBuckets.none());
    long watermark = current(trades);

    // When trades are appended, the dimension unchanged, and their buckets refreshed
    lake.append(
        trades,
        List.of(
            lake.trade("AAPL", "2026-04-07T23:30:00Z", 12.0, 1L, "B"),
            lake.trade("IBM", "2026-04-07T05:30:00Z", 12.0, 3L, "B")));
    RefreshOutcome outcome = refresh(refresher, view, watermark, detected(view));

    // Then the appended rows, joined to the dimension, fold into the target's rows
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.DELTA);
    assertThat(difference(current(trades), current(symbols))).isEmpty();
  }

  @Test
  void shouldRecomputeTheBucketsOfEveryFileThatCanHoldTheChangedKeyBeforeAFactAppend() {
    // Given a decomposable join view refreshed once
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    CompiledView view = compiled(view(0));
    refresh(refresher, view, null, DirtyBuckets.none());
    long watermark = current(trades);
    long before = current(symbols);
    // and IBM moved to another sector, IBM trading only in the 23:00 hour
    lake.overwrite(
        symbols, r -> "IBM".equals(r.getField("symbol")), List.of(symbol("IBM", "hardware")));

    // When a trade is appended in the 05:00 hour and its bucket refreshed
    lake.append(trades, List.of(lake.trade("AAPL", "2026-04-07T05:30:00Z", 12.0, 1L, "B")));
    RefreshOutcome outcome = refresh(refresher, view, watermark, detected(view));

    // Then the buckets of every fact file whose symbols' bounds hold IBM (the day's random trades,
    // AAPL to ORCL, and IBM's own) are recomputed with the dimension as it is now, not only the
    // 05:00 one, nor folded into rows that joined its earlier version
    assertThat(current(symbols)).isNotEqualTo(before);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().contains(micros("2026-04-07T05:30:00Z"))).isTrue();
    assertThat(outcome.recomputed().contains(micros("2026-04-07T23:10:00Z"))).isTrue();
    assertThat(difference(current(trades), current(symbols))).isEmpty();
  }

  @Test
  void shouldRecomputeATargetAtTheFactsSnapshotWhenOnlyTheDimensionChanged() {
    // Given a join view refreshed at the fact's current snapshot
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    CompiledView view = compiled(view(0));
    refresh(refresher, view, null, DirtyBuckets.none());
    long fact = current(trades);
    // and a dimension change (as a restarted instance finds it, with no fact commit since)
    lake.overwrite(
        symbols, r -> "IBM".equals(r.getField("symbol")), List.of(symbol("IBM", "hardware")));

    // When the view is refreshed at the same fact snapshot
    RefreshOutcome outcome = refresh(refresher, view, fact, DirtyBuckets.none());

    // Then it is a refresh of its own that recomputes the buckets of the files that can hold IBM,
    // and the target records both sources' states
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().contains(micros("2026-04-07T23:10:00Z"))).isTrue();
    assertThat(outcome.refreshId()).isNotEqualTo(RefreshId.of(view.name(), view.version(), fact));
    assertThat(difference(fact, current(symbols))).isEmpty();
    Table target = lake.catalog().loadTable(view.target().identifier());
    DimensionStates recorded = Bookmark.of(target).parsedDimensionStates();
    assertThat(recorded.states())
        .singleElement()
        .satisfies(
            state -> {
              assertThat(state.table()).isEqualTo(TableName.parse("lake.ref.symbols"));
              assertThat(state.uuid()).isEqualTo(symbols.uuid().toString());
              assertThat(state.snapshotId()).isEqualTo(current(symbols));
            });
    assertThat(target.currentSnapshot().summary())
        .containsEntry(
            EngineMetadata.DEPENDS_ON_TABLES,
            "market.trades=" + fact + ",ref.symbols=" + current(symbols))
        .containsEntry(FloeProperties.DIMENSION_STATES, recorded.format());
    assertThat(target.currentSnapshot().summary().get(EngineMetadata.REFRESH_STATE))
        .contains("\"name\":\"trades\"")
        .contains("\"name\":\"symbols\",\"uuid\":\"" + symbols.uuid() + "\"");

    // and once applied, the same refresh again finds nothing to do
    RefreshOutcome again = refresh(refresher, view, fact, DirtyBuckets.none());
    assertThat(again.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
  }

  @Test
  void shouldRefuseACommitStartedFromAnotherDimensionState() {
    // Given a join view's bookmark
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
    refresh(refresher, compiled(view(0)), null, DirtyBuckets.none());
    Table target = lake.catalog().loadTable(view(0).target().identifier());

    // Then a commit guarded by it requires the dimension states it records unchanged
    assertThat(Bookmark.of(target).expected())
        .containsEntry(
            FloeProperties.DIMENSION_STATES,
            target.properties().get(FloeProperties.DIMENSION_STATES));
    assertThat(target.properties().get(FloeProperties.DIMENSION_STATES)).contains("symbols");
  }

  private static long micros(String instant) {
    return java.time.temporal.ChronoUnit.MICROS.between(
        java.time.Instant.EPOCH, java.time.Instant.parse(instant));
  }

  private DirtyBuckets detected(CompiledView view) {
    return DirtyBucketDetector.detect(
            trades, current(trades), List.of(BucketedView.of(view)), ManifestWork.LOCAL_READS)
        .get(view.name());
  }

  @Test
  void shouldJoinOneSnapshotOfTheDimensionInEveryChunkOfARefresh() {
    // Given a refresh of four-hour chunks, during which the dimension changes after the first
    // chunk's commit
    long before = current(symbols);
    AtomicLong chunks = new AtomicLong();
    RefreshHooks changeDimension =
        new RefreshHooks() {
          @Override
          public void committed(String view, ChunkId chunk) {
            if (chunks.incrementAndGet() == 1) {
              lake.overwrite(symbols, r -> true, List.of(symbol("IBM", "hardware")));
            }
          }
        };
    ViewRefresher refresher = new ViewRefresher(name -> lake.catalog(), changeDimension);

    // When the view is refreshed for the first time
    RefreshOutcome outcome = refresh(refresher, compiled(view(4)), null, DirtyBuckets.none());

    // Then every chunk joined the dimension as the refresh pinned it
    assertThat(chunks.get()).isGreaterThan(1);
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(current(symbols)).isNotEqualTo(before);
    assertThat(difference(current(trades), before)).isEmpty();
  }

  @Test
  void shouldFailARefreshWhoseDimensionPassesItsMemoryBoundWithTheReason() {
    // Given a refresher whose dimension tables may take 100 bytes
    ViewRefresher refresher =
        new ViewRefresher(
            name -> lake.catalog(),
            RefreshHooks.NONE,
            view -> true,
            Runnable::run,
            io.floe.topology.iceberg.ManifestWork.LOCAL_READS,
            new DimensionTables(100));

    // When the join view is refreshed, Then the refresh fails for good, naming the bound
    assertThatThrownBy(() -> refresh(refresher, compiled(view(0)), null, DirtyBuckets.none()))
        .isInstanceOf(ViewRefreshException.class)
        .hasMessageContaining("lake.ref.symbols")
        .hasMessageContaining(DimensionTables.BYTES_CONFIG);
  }
}
