package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.Oracle;
import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.RefreshSettings;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
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
 * A dimension change recomputes what it changes (DESIGN §3.10), through {@link ViewRefresher} over
 * a real JDBC catalog and Parquet files: only the buckets of the fact files whose bounds on the
 * join column can hold a key whose dimension rows changed, every bucket where that cannot be
 * bounded, nothing for a compaction; and every target equals the oracle.
 */
class DimensionChangeRefreshTest {

  private static final String DAY = "2026-04-07";

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private Table symbols;
  private final ViewRefresher refresher = new ViewRefresher(name -> lake.catalog());
  private final CompiledView view = compiled();

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
    symbols =
        lake.createTable(
            "ref", "symbols", DimensionJoinRefreshTest.SYMBOLS, PartitionSpec.unpartitioned());
    // Given a dimension of three symbols in two files, ORCL not among them
    lake.append(
        symbols,
        List.of(
            DimensionJoinRefreshTest.symbol("AAPL", "tech"),
            DimensionJoinRefreshTest.symbol("MSFT", "tech")));
    lake.append(symbols, List.of(DimensionJoinRefreshTest.symbol("IBM", "services")));
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  /**
   * Trades in one file per symbol: AAPL in hours 0-3, MSFT in 4-7, IBM in 8-9, ORCL in 10-11, and
   * the view refreshed once over them.
   */
  private void givenTradesInAFilePerSymbolAndTheViewRefreshed() {
    tradesOf("AAPL", 0, 4);
    tradesOf("MSFT", 4, 8);
    tradesOf("IBM", 8, 10);
    tradesOf("ORCL", 10, 12);
    refreshAtTheFactsSnapshot();
  }

  private void tradesOf(String symbol, int fromHour, int toHour) {
    List<Record> rows = new ArrayList<>();
    for (int hour = fromHour; hour < toHour; hour++) {
      rows.add(lake.trade(symbol, at(hour, 10), 10.0 + hour, 1L + hour, "B"));
      rows.add(lake.trade(symbol, at(hour, 40), 11.0 + hour, 2L + hour, "S"));
    }
    lake.append(trades, rows);
  }

  private static String at(int hour, int minute) {
    return String.format("%sT%02d:%02d:00Z", DAY, hour, minute);
  }

  /** The hours {@code [from, to)} of the day, as the view's buckets of a timestamptz column. */
  private static BucketRange hours(int from, int to) {
    Instant midnight = Instant.parse(DAY + "T00:00:00Z");
    return new BucketRange(
        ChronoUnit.MICROS.between(Instant.EPOCH, midnight.plus(Duration.ofHours(from))),
        ChronoUnit.MICROS.between(Instant.EPOCH, midnight.plus(Duration.ofHours(to))));
  }

  private static CompiledView compiled() {
    return compiled(OptionalInt.empty());
  }

  private static CompiledView compiled(OptionalInt chunkBuckets) {
    try {
      return CompiledView.compile(
          new ViewDefinition(
              "volume_by_sector",
              DimensionJoinRefreshTest.BY_SECTOR,
              TableName.parse("lake.analytics.volume_by_sector"),
              List.of(),
              null,
              new RefreshSettings(Duration.ZERO, Duration.ZERO, chunkBuckets)),
          0);
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
  }

  /** A refresh at the fact's current snapshot, as a dimension's commit notice asks for. */
  private RefreshOutcome refreshAtTheFactsSnapshot() {
    long fact = current(trades);
    return refresher.refresh(
        RefreshRequest.of(view, fact, watermark(), DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);
  }

  /** A refresh of the fact's last snapshot, its changes detected. */
  private RefreshOutcome refreshTheFactsChange(long watermark) {
    long fact = current(trades);
    DirtyBuckets dirty =
        DirtyBucketDetector.detect(
                trades, fact, List.of(BucketedView.of(view)), ManifestWork.LOCAL_READS)
            .get(view.name());
    return refresher.refresh(
        RefreshRequest.of(view, fact, watermark, dirty), ViewRefresher.ProgressListener.NONE);
  }

  private Long watermark() {
    Optional<Table> target = target();
    return target.map(t -> Bookmark.of(t).sourceSnapshotId()).orElse(null);
  }

  private Optional<Table> target() {
    try {
      return Optional.of(lake.catalog().loadTable(view.target().identifier()));
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      return Optional.empty();
    }
  }

  private long current(Table table) {
    table.refresh();
    return table.currentSnapshot().snapshotId();
  }

  /** How the target differs from the view over the fact's and the dimension's current snapshots. */
  private Optional<String> differenceFromTheOracle() {
    long fact = current(trades);
    return Oracle.difference(
        "view " + view.name(),
        fact,
        Oracle.expected(
            new Oracle.Source(trades, "lake.market.trades", fact),
            List.of(new Oracle.Source(symbols, "lake.ref.symbols", current(symbols))),
            DimensionJoinRefreshTest.BY_SECTOR),
        Oracle.actual(target().orElseThrow()));
  }

  private String recordedDimensionStates() {
    return target().orElseThrow().properties().get(FloeProperties.DIMENSION_STATES);
  }

  @Test
  void shouldRecomputeOnlyTheBucketsOfFactFilesThatCanHoldAnUpdatedKey() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When IBM moves to another sector (a copy-on-write overwrite of its file)
    lake.overwrite(
        symbols,
        r -> "IBM".equals(r.getField("symbol")),
        List.of(DimensionJoinRefreshTest.symbol("IBM", "hardware")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then only IBM's hours are recomputed, and the target equals the oracle
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges()).isEqualTo(BucketRangeSet.of(hours(8, 10)));
    assertThat(outcome.recomputed().nullBucket()).isFalse();
    assertThat(outcome.work().rowsRead()).isEqualTo(4);
    assertThat(differenceFromTheOracle()).isEmpty();
    assertThat(recordedDimensionStates()).contains("\"snapshot-id\":\"" + current(symbols) + "\"");
  }

  @Test
  void shouldRecomputeTheBucketsOfAKeyAppendedToTheDimension() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When ORCL, traded but so far without a sector, is appended to the dimension
    lake.append(symbols, List.of(DimensionJoinRefreshTest.symbol("ORCL", "software")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then only ORCL's hours are recomputed
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges()).isEqualTo(BucketRangeSet.of(hours(10, 12)));
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecomputeTheBucketsOfAKeyDeletedFromTheDimensionByPosition() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When AAPL's row is deleted through a position delete file
    lake.deleteByPosition(symbols, r -> "AAPL".equals(r.getField("symbol")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then only AAPL's hours are recomputed, its trades now without a sector
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges()).isEqualTo(BucketRangeSet.of(hours(0, 4)));
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecomputeTheBucketsOfEveryKeyAnOverwriteChangedAndNoOther() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When one overwrite moves MSFT to another sector and removes IBM (rewriting AAPL's row, which
    // shares MSFT's file, unchanged)
    lake.overwrite(
        symbols,
        r -> "MSFT".equals(r.getField("symbol")) || "IBM".equals(r.getField("symbol")),
        List.of(DimensionJoinRefreshTest.symbol("MSFT", "software")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then MSFT's and IBM's hours are recomputed, AAPL's and ORCL's are not
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges()).isEqualTo(BucketRangeSet.of(hours(4, 10)));
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecordTheDimensionWithoutRecomputingWhenNoFactFileCanHoldTheChangedKey() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When a symbol nobody trades is appended to the dimension
    lake.append(symbols, List.of(DimensionJoinRefreshTest.symbol("ZZZZ", "none")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then no bucket is recomputed, and the target records the dimension as it is now
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.recomputed().isEmpty()).isTrue();
    assertThat(outcome.work().rowsRead()).isZero();
    assertThat(recordedDimensionStates()).contains("\"snapshot-id\":\"" + current(symbols) + "\"");
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecomputeTheFactsDirtyBucketsAndTheChangedKeysBucketsInOneIncrementalRefresh() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();
    long watermark = current(trades);

    // When IBM moves sector and an AAPL trade is appended in the 02:00 hour
    lake.overwrite(
        symbols,
        r -> "IBM".equals(r.getField("symbol")),
        List.of(DimensionJoinRefreshTest.symbol("IBM", "hardware")));
    lake.append(trades, List.of(lake.trade("AAPL", at(2, 30), 12.0, 1L, "B")));
    RefreshOutcome outcome = refreshTheFactsChange(watermark);

    // Then both are recomputed, not folded into rows that joined the earlier dimension
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.INCREMENTAL);
    assertThat(outcome.recomputed().ranges())
        .isEqualTo(BucketRangeSet.of(hours(2, 3), hours(8, 10)));
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecomputeEveryBucketWhenTheFactFilesCarryNoBoundsOnTheJoinColumn() {
    // Given trades written without statistics on the join column
    trades.updateProperties().set("write.metadata.metrics.column.symbol", "none").commit();
    givenTradesInAFilePerSymbolAndTheViewRefreshed();

    // When IBM moves to another sector
    lake.overwrite(
        symbols,
        r -> "IBM".equals(r.getField("symbol")),
        List.of(DimensionJoinRefreshTest.symbol("IBM", "hardware")));
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then every bucket is recomputed, and the refresh says why
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(outcome.recomputed().full()).isTrue();
    assertThat(outcome.reason())
        .startsWith("dimension lake.ref.symbols changed from snapshot ")
        .contains("has no bounds on join columns");
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldNeitherRecomputeNorCommitForACompactionOfTheDimension() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();
    long targetSnapshot = target().orElseThrow().currentSnapshot().snapshotId();

    // When the dimension is compacted (a replace snapshot, the same rows) and the view refreshed
    lake.compact(symbols);
    assertThat(symbols.currentSnapshot().operation()).isEqualTo("replace");
    RefreshOutcome outcome = refreshAtTheFactsSnapshot();

    // Then nothing is recomputed and the target is not committed to
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.ALREADY_APPLIED);
    assertThat(target().orElseThrow().currentSnapshot().snapshotId()).isEqualTo(targetSnapshot);
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldFoldAFactAppendIntoTheTargetAfterACompactionOfTheDimension() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();
    long watermark = current(trades);

    // When the dimension is compacted and then a trade appended
    lake.compact(symbols);
    lake.append(trades, List.of(lake.trade("IBM", at(9, 30), 12.0, 3L, "B")));
    RefreshOutcome outcome = refreshTheFactsChange(watermark);

    // Then the delta path still folds the appended row in, and the target records the dimension's
    // compacted snapshot
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.DELTA);
    assertThat(differenceFromTheOracle()).isEmpty();
    assertThat(recordedDimensionStates()).contains("\"snapshot-id\":\"" + current(symbols) + "\"");
  }

  @Test
  void shouldResumeAChunkedRefreshOfADimensionChangeAfterACrashWithoutApplyingAChunkTwice() {
    givenTradesInAFilePerSymbolAndTheViewRefreshed();
    CompiledView chunked = compiled(OptionalInt.of(1));
    // and a refresher that stops after the first chunk's commit, as a crash would
    ViewRefresher crashing =
        new ViewRefresher(
            name -> lake.catalog(),
            new RefreshHooks() {
              @Override
              public void committed(String view, ChunkId chunk) {
                throw new IllegalStateException("crash after " + chunk);
              }
            });
    lake.overwrite(
        symbols,
        r -> "IBM".equals(r.getField("symbol")),
        List.of(DimensionJoinRefreshTest.symbol("IBM", "hardware")));
    long fact = current(trades);
    RefreshRequest request = RefreshRequest.of(chunked, fact, fact, DirtyBuckets.none());
    assertThatThrownBy(() -> crashing.refresh(request, ViewRefresher.ProgressListener.NONE))
        .hasMessageContaining("crash after");
    assertThat(target().orElseThrow().properties().get(FloeProperties.PROGRESS)).isNotNull();

    // When the refresh runs again
    RefreshOutcome outcome = refresher.refresh(request, ViewRefresher.ProgressListener.NONE);

    // Then it commits only the chunk left (IBM's 09:00 hour, after its 08:00 one), and the target
    // equals the oracle
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(outcome.recomputed().ranges()).isEqualTo(BucketRangeSet.of(hours(8, 10)));
    assertThat(outcome.work().chunks()).isEqualTo(1);
    assertThat(target().orElseThrow().properties().get(FloeProperties.PROGRESS)).isNull();
    assertThat(differenceFromTheOracle()).isEmpty();
  }

  @Test
  void shouldRecomputeEveryBucketWhenTheJoinColumnIsFloatingPoint() {
    // Given a view joining trades to price bands on a double column, refreshed once
    Schema bandsSchema =
        new Schema(
            Types.NestedField.optional(1, "price", Types.DoubleType.get()),
            Types.NestedField.optional(2, "band", Types.StringType.get()));
    Table bands = lake.createTable("ref", "bands", bandsSchema, PartitionSpec.unpartitioned());
    lake.append(bands, List.of(band(bandsSchema, 10.0, "low"), band(bandsSchema, 11.0, "high")));
    tradesOf("AAPL", 0, 4);
    String query =
        """
        SELECT b.band, date_trunc('hour', t.ts) AS hour_ts, count(*) AS trades
        FROM lake.market.trades t LEFT JOIN lake.ref.bands b ON t.price = b.price
        GROUP BY b.band, date_trunc('hour', t.ts)
        """;
    CompiledView byBand;
    try {
      byBand =
          CompiledView.compile(
              new ViewDefinition(
                  "trades_by_band",
                  query,
                  TableName.parse("lake.analytics.trades_by_band"),
                  List.of(),
                  null,
                  new RefreshSettings(Duration.ZERO, Duration.ZERO, OptionalInt.empty())),
              0);
    } catch (InvalidViewException e) {
      throw new AssertionError(e);
    }
    long fact = current(trades);
    refresher.refresh(
        RefreshRequest.of(byBand, fact, null, DirtyBuckets.none()),
        ViewRefresher.ProgressListener.NONE);

    // When a band changes
    lake.overwrite(
        bands, r -> r.getField("price").equals(11.0), List.of(band(bandsSchema, 11.0, "mid")));
    RefreshOutcome outcome =
        refresher.refresh(
            RefreshRequest.of(byBand, fact, fact, DirtyBuckets.none()),
            ViewRefresher.ProgressListener.NONE);

    // Then every bucket is recomputed, saying why: bounds order -0.0 and 0.0 apart, SQL does not
    assertThat(outcome.mode()).isEqualTo(RefreshOutcome.Mode.FULL);
    assertThat(outcome.reason()).contains("join column price of type double cannot be bounded");
    Table target = lake.catalog().loadTable(byBand.target().identifier());
    assertThat(
            Oracle.difference(
                "view trades_by_band",
                fact,
                Oracle.expected(
                    new Oracle.Source(trades, "lake.market.trades", fact),
                    List.of(new Oracle.Source(bands, "lake.ref.bands", current(bands))),
                    query),
                Oracle.actual(target)))
        .isEmpty();
  }

  private static Record band(Schema schema, double price, String band) {
    GenericRecord record = GenericRecord.create(schema);
    record.setField("price", price);
    record.setField("band", band);
    return record;
  }
}
