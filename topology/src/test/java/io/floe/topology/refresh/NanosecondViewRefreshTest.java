package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.detect.BucketedView;
import io.floe.topology.detect.DirtyBucketDetector;
import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Views bucketed on a {@code timestamp_ns} or {@code timestamptz_ns} column (format v3): bucket
 * filters must be built in nanoseconds on the source and in microseconds on the target, and both
 * refresh paths must agree with the oracle to the nanosecond.
 */
class NanosecondViewRefreshTest {

  private static final String TICKS =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS ticks,
             sum(quantity) AS volume, min(ts) AS first_ts, max(ts) AS last_ts,
             max_by(price, ts) AS close
      FROM lake.market.ticks
      GROUP BY symbol, date_trunc('minute', ts)
      """;

  @TempDir Path dir;
  private IcebergFixture lake;
  private ViewRefresher refresher;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    refresher = new ViewRefresher(name -> lake.catalog());
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  private Table createTicks(Type tsType) {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "symbol", Types.StringType.get()),
            Types.NestedField.optional(3, "ts", tsType),
            Types.NestedField.optional(4, "price", Types.DoubleType.get()),
            Types.NestedField.optional(5, "quantity", Types.LongType.get()));
    ((SupportsNamespaces) lake.catalog()).createNamespace(Namespace.of("market"));
    // timestamp_ns needs format v3.
    return lake.catalog()
        .createTable(
            TableIdentifier.of("market", "ticks"),
            schema,
            PartitionSpec.builderFor(schema).day("ts").build(),
            Map.of("format-version", "3"));
  }

  private static Record tick(Table table, long id, String symbol, String ts, double price) {
    GenericRecord record = GenericRecord.create(table.schema());
    Instant instant = Instant.parse(ts);
    boolean zoned = ((Types.TimestampNanoType) table.schema().findType("ts")).shouldAdjustToUTC();
    record.setField("id", id);
    record.setField("symbol", symbol);
    record.setField(
        "ts",
        zoned
            ? OffsetDateTime.ofInstant(instant, ZoneOffset.UTC)
            : LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    record.setField("price", price);
    record.setField("quantity", id);
    return record;
  }

  private RefreshOutcome refresh(
      ViewDefinition view, long snapshot, Long watermark, DirtyBuckets d) {
    return refresher.refresh(
        ViewRefresherTest.request(view, snapshot, watermark, d),
        ViewRefresher.ProgressListener.NONE);
  }

  /** What a view's two refreshes did, each checked by the oracle. */
  private record TwoRefreshes(RefreshOutcome first, DirtyBuckets dirty, RefreshOutcome second) {}

  /**
   * Refreshes view {@code name} of {@code query} over the ticks {@code first} (of a table with a
   * zoned or plain nanosecond column) as its first refresh, then again once {@code second} is
   * appended and detected; after each, the target matches the oracle.
   */
  private TwoRefreshes refreshTwice(
      boolean zoned,
      String name,
      String query,
      Function<Table, List<Record>> first,
      Function<Table, List<Record>> second) {
    Table ticks =
        createTicks(
            zoned ? Types.TimestampNanoType.withZone() : Types.TimestampNanoType.withoutZone());
    long s1 = lake.append(ticks, first.apply(ticks));
    ViewDefinition view = ViewDefinition.of(name, query, TableName.parse("lake.analytics." + name));
    RefreshOutcome firstRefresh = refresh(view, s1, null, DirtyBuckets.none());
    OracleAssertions.assertMatches(target(view), ticks, s1, query);

    long s2 = lake.append(ticks, second.apply(ticks));
    DirtyBuckets dirty = detect(ticks, s2, view);
    RefreshOutcome secondRefresh = refresh(view, s2, s1, dirty);
    OracleAssertions.assertMatches(target(view), ticks, s2, query);
    return new TwoRefreshes(firstRefresh, dirty, secondRefresh);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(booleans = {false, true})
  void shouldRefreshAViewBucketedOnANanosecondColumnIncrementally(boolean zoned) {
    TwoRefreshes refreshed =
        refreshTwice(
            zoned,
            "ticks_1m",
            TICKS,
            ticks ->
                List.of(
                    tick(ticks, 1, "AAPL", "2026-04-08T10:00:01.000000001Z", 10.0),
                    tick(ticks, 2, "AAPL", "2026-04-08T10:00:01.000000002Z", 11.0),
                    tick(ticks, 3, "MSFT", "2026-04-08T10:00:59.999999999Z", 99.0),
                    tick(ticks, 4, "AAPL", "2026-04-08T10:01:00Z", 12.0),
                    tick(ticks, 5, "AAPL", "2026-04-09T09:00:00.123456789Z", 13.0)),
            // A late tick inside the first minute, a nanosecond before the last one's.
            ticks -> List.of(tick(ticks, 6, "MSFT", "2026-04-08T10:00:59.999999998Z", 98.0)));
    RefreshOutcome second = refreshed.second();

    assertThat(refreshed.first().full()).isTrue();
    assertThat(second.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(second.full()).isFalse();
    // Only the day file of April 8th is read, and only the 10:00 bars are replaced.
    assertThat(second.work().rowsRead()).isEqualTo(5);
    assertThat(second.work().rowsRemoved()).isEqualTo(2);
  }

  private static final String VOLUME =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts, count(*) AS ticks,
             sum(quantity) AS volume, min(ts) AS first_ts
      FROM lake.market.ticks
      GROUP BY 1, 2
      """;

  @ParameterizedTest(name = "{0}")
  @ValueSource(booleans = {false, true})
  void shouldFoldAppendsNearTheEndsOfTheNanosecondRangeIntoADecomposableView(boolean zoned) {
    // Nanoseconds reach from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z:
    // the first and the last minute of the range are not whole, and their buckets saturate.
    TwoRefreshes refreshed =
        refreshTwice(
            zoned,
            "volume",
            VOLUME,
            ticks ->
                List.of(
                    tick(ticks, 1, "AAPL", "1677-09-21T00:12:50Z", 10.0),
                    tick(ticks, 2, "AAPL", "2026-04-08T10:00:01Z", 11.0),
                    tick(ticks, 3, "AAPL", "2262-04-11T23:47:01Z", 12.0)),
            ticks ->
                List.of(
                    tick(ticks, 4, "AAPL", "2262-04-11T23:47:16.5Z", 13.0),
                    tick(ticks, 5, "AAPL", "1677-09-21T00:12:59.999999999Z", 14.0)));
    DirtyBuckets dirty = refreshed.dirty();
    RefreshOutcome outcome = refreshed.second();

    assertThat(dirty.ranges().ranges()).hasSize(2);
    assertThat(dirty.ranges().ranges().get(0).start()).isEqualTo(Long.MIN_VALUE);
    assertThat(dirty.ranges().ranges().get(1).isOpenEnded()).isTrue();
    assertThat(outcome.delta()).isTrue();
    assertThat(outcome.work().rowsRead()).isEqualTo(2);
    assertThat(outcome.work().rowsRemoved()).isEqualTo(2);
  }

  private static final String BINS =
      """
      SELECT symbol, date_bin(INTERVAL '5' MINUTE, ts, TIMESTAMP '2026-04-08 10:02:00') AS bar_ts,
             count(*) AS ticks, sum(quantity) AS volume, min(ts) AS first_ts, max(ts) AS last_ts
      FROM lake.market.ticks
      GROUP BY 1, 2
      """;

  @ParameterizedTest(name = "{0}")
  @ValueSource(booleans = {false, true})
  void shouldBinNanosecondTimestampsFromAnOriginToTheNanosecond(boolean zoned) {
    TwoRefreshes refreshed =
        refreshTwice(
            zoned,
            "bins_5m",
            BINS,
            ticks ->
                List.of(
                    tick(ticks, 1, "AAPL", "2026-04-08T10:01:59.999999999Z", 10.0),
                    tick(ticks, 2, "AAPL", "2026-04-08T10:02:00Z", 11.0),
                    tick(ticks, 3, "AAPL", "2026-04-08T10:06:59.999999999Z", 12.0),
                    tick(ticks, 4, "MSFT", "2026-04-08T10:07:00.000000001Z", 99.0)),
            // A late tick a nanosecond before the 10:07 boundary dirties the bin from 10:02 only.
            ticks -> List.of(tick(ticks, 5, "MSFT", "2026-04-08T10:06:59.999999998Z", 98.0)));
    DirtyBuckets dirty = refreshed.dirty();
    RefreshOutcome second = refreshed.second();

    assertThat(dirty.ranges().ranges()).hasSize(1);
    assertThat(BucketColumnType.TIMESTAMP_NS.toInstant(dirty.ranges().ranges().get(0).start()))
        .isEqualTo(Instant.parse("2026-04-08T10:02:00Z"));
    assertThat(second.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(second.full()).isFalse();
  }

  private static DirtyBuckets detect(Table table, long snapshot, ViewDefinition view) {
    table.refresh();
    BucketedView buckets = BucketedView.of(ViewRefresherTest.compiled(view));
    return DirtyBucketDetector.detect(table, snapshot, List.of(buckets), ManifestWork.LOCAL_READS)
        .get(view.name());
  }

  private Table target(ViewDefinition view) {
    return lake.catalog().loadTable(view.target().identifier());
  }
}
