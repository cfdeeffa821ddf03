package io.floe.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.schemas.RefreshEvent;
import io.floe.schemas.RefreshMode;
import io.floe.schemas.TableCommitted;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.maintain.ViewState;
import io.floe.topology.refresh.ChunkId;
import io.floe.topology.refresh.FloeProperties;
import io.floe.topology.refresh.RefreshHooks;
import io.floe.topology.refresh.RefreshId;
import io.floe.topology.view.TableName;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.StreamSupport;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Source schema changes (DESIGN §3.4), driven through the real topology over a real catalog and
 * checked against the oracle after each step: what a view reads is decided by field id and type,
 * not by name, so a column dropped and added again or a promoted type refreshes every bucket, a
 * rename that keeps id and type needs nothing, and a change that creates no snapshot still reaches
 * the views.
 */
class SourceSchemaChangeTest {

  private static final String TRADES = "lake.market.trades";
  private static final String OHLCV = TradeViews.OHLCV_1M;
  private static final String FILLS = "lake.market.fills";

  /** Trades with the narrow types a writer may start with: a float price, an int quantity. */
  private static final Schema FILLS_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.required(2, "symbol", Types.StringType.get()),
          Types.NestedField.optional(3, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(4, "price", Types.FloatType.get()),
          Types.NestedField.optional(5, "quantity", Types.IntegerType.get()));

  private static final String TURNOVER =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts,
             sum(price * quantity) AS turnover, max(quantity) AS biggest, count(*) AS fills
      FROM lake.market.fills
      GROUP BY symbol, date_trunc('minute', ts)
      """;

  @TempDir Path dir;
  private TopologyHarness floe;
  private long nextId = 1;
  // Where a test stops a refresh, as a crash would.
  private RefreshHooks crash = RefreshHooks.NONE;

  @BeforeEach
  void setUp() throws Exception {
    RefreshHooks hooks =
        new RefreshHooks() {
          @Override
          public void committed(String view, ChunkId chunk) {
            crash.committed(view, chunk);
          }
        };
    floe = new TopologyHarness(dir, Runnable::run, Runnable::run, hooks);
  }

  @AfterEach
  void tearDown() throws Exception {
    floe.close();
  }

  @Test
  void shouldRecomputeEveryBucketWhenAColumnTheViewReadsIsDroppedAndAddedAgain() {
    // Given a view over trades in three minutes, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades,
        List.of(
            floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B"),
            floe.lake.trade("AAPL", "2026-04-08T10:01:01Z", 11.0, 4L, "B"),
            floe.lake.trade("AAPL", "2026-04-08T10:02:01Z", 12.0, 5L, "S")));
    floe.define("ohlcv_1m", OHLCV);
    refreshAfterNotice(TRADES);
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);

    // When quantity is dropped and added again (a new field id: every earlier row reads null) and
    // a trade lands in one minute
    trades().updateSchema().deleteColumn("quantity").commit();
    trades().updateSchema().addColumn("quantity", Types.LongType.get()).commit();
    append(
        trades(),
        Map.of(
            "symbol",
            "AAPL",
            "ts",
            ts("2026-04-08T10:01:30Z"),
            "price",
            13.0,
            "quantity",
            7L,
            "side",
            "B"));
    List<RefreshEvent> events = refreshAfterNotice(TRADES);

    // Then every minute equals the oracle, and the refresh says why it was full
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);
    assertThat(events)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getMode()).isEqualTo(RefreshMode.FULL);
              assertThat(e.getReason()).contains("quantity");
            });
    assertThat(floe.state("ohlcv_1m").last().reason()).contains("quantity");
  }

  @Test
  void shouldRecomputeEveryBucketWhenAFloatTheViewReadsIsPromotedToDouble() {
    // Given a view multiplying a float price, refreshed
    Table fills = createFills();
    appendFills(fills, "2026-04-08T10:00:01Z", 0.1f, 3, "2026-04-08T10:01:01Z", 0.7f, 9);
    floe.define("turnover", TURNOVER);
    refreshAfterNotice(FILLS);
    assertCurrent(FILLS, "turnover", TURNOVER);

    // When price is promoted to double (its products are now computed at double precision) and a
    // fill lands in one minute
    fills().updateSchema().updateColumn("price", Types.DoubleType.get()).commit();
    append(
        fills(),
        Map.of("symbol", "AAPL", "ts", ts("2026-04-08T10:01:30Z"), "price", 0.3, "quantity", 2));
    List<RefreshEvent> events = refreshAfterNotice(FILLS);

    // Then every minute equals the oracle
    assertCurrent(FILLS, "turnover", TURNOVER);
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    assertThat(events.get(0).getReason()).contains("price");
  }

  @Test
  void shouldRecomputeEveryBucketWhenAnIntTheViewReadsIsPromotedToLong() {
    // Given a view over an int quantity, refreshed
    Table fills = createFills();
    appendFills(fills, "2026-04-08T10:00:01Z", 1.5f, 3, "2026-04-08T10:01:01Z", 2.5f, 9);
    floe.define("turnover", TURNOVER);
    refreshAfterNotice(FILLS);

    // When quantity is promoted to long and a fill lands in one minute
    fills().updateSchema().updateColumn("quantity", Types.LongType.get()).commit();
    append(
        fills(),
        Map.of("symbol", "AAPL", "ts", ts("2026-04-08T10:01:30Z"), "price", 0.5f, "quantity", 4L));
    List<RefreshEvent> events = refreshAfterNotice(FILLS);

    // Then the view was refreshed whole, and equals the oracle
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    assertThat(events.get(0).getReason()).contains("quantity").contains("long");
    assertCurrent(FILLS, "turnover", TURNOVER);
  }

  @Test
  void shouldRefreshOnlyTheChangedBucketsWhenAColumnIsRenamedKeepingItsIdAndType() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades,
        List.of(
            floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B"),
            floe.lake.trade("AAPL", "2026-04-08T10:02:01Z", 12.0, 5L, "S")));
    floe.define("ohlcv_1m", OHLCV);
    refreshAfterNotice(TRADES);

    // When a column it reads is renamed to a name the query still resolves to (same field id and
    // type), one it does not read is renamed, and a trade lands in one minute
    trades().updateSchema().renameColumn("quantity", "Quantity").commit();
    trades().updateSchema().renameColumn("side", "aggressor").commit();
    append(
        trades(),
        Map.of(
            "symbol",
            "AAPL",
            "ts",
            ts("2026-04-08T10:02:30Z"),
            "price",
            13.0,
            "Quantity",
            7L,
            "aggressor",
            "B"));
    List<RefreshEvent> events = refreshAfterNotice(TRADES);

    // Then only that minute was recomputed, and the view equals the oracle
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.INCREMENTAL);
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);
  }

  @Test
  void shouldRefreshFullyOnACommitNoticeWhenTheSchemaChangedWithoutASnapshot() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades,
        List.of(
            floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B"),
            floe.lake.trade("MSFT", "2026-04-08T10:05:01Z", 11.0, 4L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    refreshAfterNotice(TRADES);
    long snapshot = trades().currentSnapshot().snapshotId();

    // When quantity is dropped and added again, which creates no snapshot, and a notice names the
    // table's new metadata file (as the catalog watcher publishes it)
    trades().updateSchema().deleteColumn("quantity").commit();
    trades().updateSchema().addColumn("quantity", Types.LongType.get()).commit();
    assertThat(trades().currentSnapshot().snapshotId()).isEqualTo(snapshot);
    floe.commits.pipeInput(TRADES, watcherNotice(TRADES, trades()));
    floe.idle(Duration.ofSeconds(1));

    // Then the view was refreshed whole at the same snapshot, and equals the oracle
    List<RefreshEvent> events = floe.events();
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    assertThat(events.get(0).getSourceSnapshotId()).isEqualTo(snapshot);
    assertThat(events.get(0).getReason()).contains("quantity");
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);

    // And a second notice of the same change refreshes nothing again
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.events()).isEmpty();
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);
  }

  @Test
  void shouldGiveAFullRefreshAfterASchemaOnlyChangeARefreshIdOfItsOwn() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    String first = refreshAfterNotice(TRADES).get(0).getRefreshId();
    long snapshot = trades().currentSnapshot().snapshotId();

    // When quantity is dropped and added again, which creates no snapshot, and the table announced
    trades().updateSchema().deleteColumn("quantity").commit();
    trades().updateSchema().addColumn("quantity", Types.LongType.get()).commit();
    floe.commits.pipeInput(TRADES, watcherNotice(TRADES, trades()));
    floe.idle(Duration.ofSeconds(1));

    // Then the full refresh at the same snapshot is another refresh, under an id of its own that
    // names the snapshot, and the target records that id
    List<RefreshEvent> events = floe.events();
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    String second = events.get(0).getRefreshId();
    assertThat(second).isNotEqualTo(first).startsWith(first + "/reads-");
    assertThat(RefreshId.parse(second).sourceSnapshotId()).isEqualTo(snapshot);
    assertThat(floe.target("ohlcv_1m").properties())
        .containsEntry(FloeProperties.REFRESH_ID, second);
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);
  }

  @Test
  void shouldReportASchemaOnlyFullRefreshOnceWhenItIsReplayedAfterACrash() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    String first = refreshAfterNotice(TRADES).get(0).getRefreshId();

    // When quantity is dropped and added again, and the refresh that follows stops right after its
    // target commit, before it is reported, then runs again
    trades().updateSchema().deleteColumn("quantity").commit();
    trades().updateSchema().addColumn("quantity", Types.LongType.get()).commit();
    AtomicInteger crashes = new AtomicInteger();
    crash =
        new RefreshHooks() {
          @Override
          public void committed(String view, ChunkId chunk) {
            if (crashes.getAndIncrement() == 0) {
              throw new IllegalStateException("crash after the target commit");
            }
          }
        };
    floe.commits.pipeInput(TRADES, watcherNotice(TRADES, trades()));
    floe.idle(Duration.ofSeconds(5));

    // Then the full refresh is reported once, under its own id, and applied to the target once
    List<RefreshEvent> reported =
        floe.events().stream().filter(e -> e.getMode() != RefreshMode.FAILED).toList();
    assertThat(crashes).hasValue(1);
    assertThat(reported).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    String second = reported.get(0).getRefreshId();
    assertThat(second).isNotEqualTo(first);
    assertThat(commitsOf(floe.target("ohlcv_1m"), second)).isEqualTo(1);
    assertThat(commitsOf(floe.target("ohlcv_1m"), first)).isEqualTo(1);
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);

    // And nothing more is reported when the table is announced again
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.events()).isEmpty();
  }

  @Test
  void shouldRefreshFullyOnACommitNoticeWhenTheNameMappingChangedWithoutASnapshot() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    String first = refreshAfterNotice(TRADES).get(0).getRefreshId();

    // When the table is given a name mapping, which creates no snapshot, and a notice names its
    // new metadata file
    trades()
        .updateProperties()
        .set(
            TableProperties.DEFAULT_NAME_MAPPING,
            NameMappingParser.toJson(MappingUtil.create(trades().schema())))
        .commit();
    floe.commits.pipeInput(TRADES, watcherNotice(TRADES, trades()));
    floe.idle(Duration.ofSeconds(1));

    // Then the view was refreshed whole at the same snapshot, under an id of its own, saying why
    List<RefreshEvent> events = floe.events();
    assertThat(events).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FULL);
    assertThat(events.get(0).getReason()).contains("name mapping");
    assertThat(events.get(0).getRefreshId()).startsWith(first + "/reads-");
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);

    // And a second notice of the same change refreshes nothing again
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));
    assertThat(floe.events()).isEmpty();
  }

  @Test
  void shouldNotRefreshOnACommitNoticeWhenTheSchemaChangedOnlyInWhatTheViewDoesNotRead() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    refreshAfterNotice(TRADES);
    String targetSnapshot = "" + floe.target("ohlcv_1m").currentSnapshot().snapshotId();

    // When a column the view does not read is added, with no snapshot, and the table announced
    trades().updateSchema().addColumn("venue", Types.StringType.get()).commit();
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));

    // Then the target is left as it was
    assertThat(floe.events()).isEmpty();
    assertThat("" + floe.target("ohlcv_1m").currentSnapshot().snapshotId())
        .isEqualTo(targetSnapshot);
    assertCurrent(TRADES, "ohlcv_1m", OHLCV);
  }

  @Test
  void shouldPutTheViewInErrorWhenAColumnItNamesIsRenamedAway() {
    // Given a view over trades, refreshed
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);
    refreshAfterNotice(TRADES);

    // When the quantity the query names is renamed, with no snapshot, and the table announced
    trades().updateSchema().renameColumn("quantity", "qty").commit();
    floe.announce(TRADES);
    floe.idle(Duration.ofSeconds(1));

    // Then the view is in error, saying which column the source no longer has
    ViewState state = floe.state("ohlcv_1m");
    assertThat(state.status()).isEqualTo(ViewState.Status.ERROR);
    assertThat(state.lastError())
        .contains("the query no longer fits source lake.market.trades")
        .contains("unknown column: quantity");
    assertThat(floe.events()).extracting(RefreshEvent::getMode).containsExactly(RefreshMode.FAILED);
  }

  @Test
  void shouldRecordTheIdentityOfWhatTheViewReadsWithTheBookmark() {
    // Given a view over trades
    Table trades = floe.lake.createTrades("market", "trades");
    floe.lake.append(
        trades, List.of(floe.lake.trade("AAPL", "2026-04-08T10:00:01Z", 10.0, 3L, "B")));
    floe.define("ohlcv_1m", OHLCV);

    // When it is refreshed
    refreshAfterNotice(TRADES);

    // Then the target records the field ids and types that price, quantity, symbol and ts name
    assertThat(floe.target("ohlcv_1m").properties())
        .containsEntry(
            FloeProperties.SOURCE_COLUMNS,
            "price=4:double quantity=5:long symbol=2:string ts=3:timestamptz");
  }

  /** How many of the target's snapshots a refresh committed. */
  private static long commitsOf(Table target, String refreshId) {
    return StreamSupport.stream(target.snapshots().spliterator(), false)
        .filter(s -> refreshId.equals(s.summary().get(FloeProperties.REFRESH_ID)))
        .count();
  }

  private List<RefreshEvent> refreshAfterNotice(String table) {
    floe.announce(table);
    floe.idle(Duration.ofSeconds(1));
    return floe.events();
  }

  private void assertCurrent(String source, String view, String query) {
    Table table = load(source);
    OracleAssertions.assertMatches(
        floe.target(view), table, table.currentSnapshot().snapshotId(), query);
  }

  private Table load(String name) {
    TableName table = TableName.parse(name);
    return floe.lake.load(table.namespace().get(0), table.table());
  }

  private Table trades() {
    return load(TRADES);
  }

  private Table fills() {
    return load(FILLS);
  }

  private Table createFills() {
    return floe.lake.createTable(
        "market", "fills", FILLS_SCHEMA, PartitionSpec.builderFor(FILLS_SCHEMA).day("ts").build());
  }

  private void appendFills(
      Table fills, String ts1, float price1, int quantity1, String ts2, float price2, int q2) {
    List<Record> rows = new ArrayList<>();
    rows.add(
        row(
            fills,
            Map.of("symbol", "AAPL", "ts", ts(ts1), "price", price1, "quantity", quantity1)));
    rows.add(row(fills, Map.of("symbol", "AAPL", "ts", ts(ts2), "price", price2, "quantity", q2)));
    floe.lake.append(fills, rows);
  }

  /** Appends one row written under the table's current schema. */
  private void append(Table table, Map<String, Object> values) {
    floe.lake.append(table, List.of(row(table, values)));
  }

  private Record row(Table table, Map<String, Object> values) {
    GenericRecord record = GenericRecord.create(table.schema());
    record.setField("id", nextId++);
    values.forEach(record::setField);
    return record;
  }

  private static OffsetDateTime ts(String instant) {
    return OffsetDateTime.ofInstant(Instant.parse(instant), ZoneOffset.UTC);
  }

  /** The notice the catalog watcher publishes: the current snapshot and metadata file. */
  private static TableCommitted watcherNotice(String name, Table table) {
    TableName parsed = TableName.parse(name);
    return TableCommitted.newBuilder()
        .setCatalog(parsed.catalog())
        .setNamespace(parsed.namespace())
        .setTable(parsed.table())
        .setSnapshotId(table.currentSnapshot().snapshotId())
        .setMetadataLocation(
            ((HasTableOperations) table).operations().current().metadataFileLocation())
        .setEventTime(Instant.EPOCH)
        .setProducer("floe-watch-catalog")
        .build();
  }
}
