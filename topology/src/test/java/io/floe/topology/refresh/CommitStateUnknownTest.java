package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergFixture;
import io.floe.testing.oracle.OracleAssertions;
import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target commit whose state is unknown (the catalog's answer was lost) is looked for in the table
 * before anything else (DESIGN §3.6), whether it carries a refresh's rows or a compaction's
 * rewrite: one that landed is reported as done, one that did not is made again.
 */
class CommitStateUnknownTest {

  private static final ViewDefinition MINUTE =
      ViewDefinition.of(
          "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m"));

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final Random random = new Random(11);
  private Long watermark;

  @BeforeEach
  void setUp() {
    lake = IcebergFixture.create(dir);
    trades = lake.createTrades("market", "trades");
  }

  @AfterEach
  void tearDown() throws Exception {
    lake.close();
  }

  @Test
  void shouldReportACompactionThatLandedWhenItsCommitStateWasUnknown() {
    // Given a target that compacts at its next refresh, through a catalog that loses the answer
    // to the compaction's commit after it applied
    prepareCompaction();
    LosingCatalog catalog = new LosingCatalog(lake.catalog(), isCompaction(), true);

    // When the view refreshes
    RefreshOutcome outcome = refreshUntilLost(catalog);

    // Then the compaction that landed is reported by the refresh that ran it, and made once
    assertCompactedOnce(catalog, outcome, "the compaction that landed");
  }

  @Test
  void shouldCommitACompactionAgainWhenItsCommitStateWasUnknownAndItDidNotLand() {
    // Given a target that compacts at its next refresh, through a catalog that fails the
    // compaction's commit without applying it and without saying so
    prepareCompaction();
    LosingCatalog catalog = new LosingCatalog(lake.catalog(), isCompaction(), false);

    // When the view refreshes
    RefreshOutcome outcome = refreshUntilLost(catalog);

    // Then the refresh that ran it makes the compaction again, and it lands once
    assertCompactedOnce(catalog, outcome, "the compaction made again");
  }

  @Test
  void shouldReportARefreshThatLandedWhenItsCommitStateWasUnknown() {
    // Given a view refreshed once, through a catalog that loses the answer to its next data
    // commit after it applied
    lake.append(trades, lake.randomTrades(random, 50, "2026-04-06", 8, 9));
    refresh(new ViewRefresher(name -> lake.catalog()));
    long before = target().currentSnapshot().snapshotId();
    lake.append(trades, lake.randomTrades(random, 5, "2026-04-06", 9, 10));
    LosingCatalog catalog =
        new LosingCatalog(
            lake.catalog(),
            metadata -> metadata.currentSnapshot().summary().containsKey(FloeProperties.REFRESH_ID),
            true);

    // When the view refreshes
    RefreshOutcome outcome = refresh(new ViewRefresher(name -> catalog.catalog()));

    // Then the commit that landed is reported, and made once
    assertThat(catalog.lost.get()).isEqualTo(1);
    assertThat(outcome.status()).isEqualTo(RefreshOutcome.Status.COMMITTED);
    assertThat(target().snapshot(outcome.target().snapshotId()).parentId()).isEqualTo(before);
    OracleAssertions.assertMatches(
        target(), trades, trades.currentSnapshot().snapshotId(), TradeViews.OHLCV_1M);
  }

  /**
   * The catalog lost one answer, the refresh reports the compaction, which is the target's current
   * snapshot and the only one since the refresh, and the view is exact.
   */
  private void assertCompactedOnce(LosingCatalog catalog, RefreshOutcome outcome, String what) {
    assertThat(catalog.lost.get()).isEqualTo(1);
    assertThat(outcome.compaction()).as(what).isNotNull();
    Snapshot current = target().currentSnapshot();
    assertThat(current.operation()).isEqualTo(DataOperations.REPLACE);
    assertThat(outcome.compaction().targetSnapshotId()).isEqualTo(current.snapshotId());
    assertThat(target().snapshot(current.parentId()).operation())
        .isNotEqualTo(DataOperations.REPLACE);
    OracleAssertions.assertMatches(
        target(), trades, trades.currentSnapshot().snapshotId(), TradeViews.OHLCV_1M);
  }

  /** A refreshed target whose small files the next refresh's compaction merges. */
  private void prepareCompaction() {
    lake.append(trades, lake.randomTrades(random, 50, "2026-04-06", 8, 9));
    refresh(new ViewRefresher(name -> lake.catalog()));
    target().updateProperties().set(TargetCompaction.MIN_INPUT_FILES, "2").commit();
  }

  /** Refreshes the view through the catalog until a compaction's commit was lost. */
  private RefreshOutcome refreshUntilLost(LosingCatalog catalog) {
    ViewRefresher refresher = new ViewRefresher(name -> catalog.catalog());
    RefreshOutcome outcome = null;
    for (int i = 0; i < 4 && catalog.lost.get() == 0; i++) {
      lake.append(trades, lake.randomTrades(random, 5, "2026-04-06", 10 + i, 11 + i));
      outcome = refresh(refresher);
    }
    return outcome;
  }

  private RefreshOutcome refresh(ViewRefresher refresher) {
    long current = trades.currentSnapshot().snapshotId();
    DirtyBuckets dirty = ViewRefresherTest.detected(trades, watermark, current, MINUTE);
    RefreshOutcome outcome =
        refresher.refresh(
            ViewRefresherTest.request(MINUTE, current, watermark, dirty),
            ViewRefresher.ProgressListener.NONE);
    watermark = current;
    return outcome;
  }

  private Table target() {
    return lake.catalog().loadTable(MINUTE.target().identifier());
  }

  private static Predicate<TableMetadata> isCompaction() {
    return metadata ->
        metadata.currentSnapshot() != null
            && DataOperations.REPLACE.equals(metadata.currentSnapshot().operation());
  }

  /**
   * A real catalog whose tables lose the answer to the first commit that matches: after applying it
   * ({@code applies}) or without, the commit ends in {@link CommitStateUnknownException}, as a
   * catalog's connection reset after the request went out does.
   */
  private static final class LosingCatalog implements InvocationHandler {
    private final Catalog delegate;
    private final Predicate<TableMetadata> matches;
    private final boolean applies;
    private final AtomicInteger lost = new AtomicInteger();
    private final Catalog proxy;

    LosingCatalog(Catalog delegate, Predicate<TableMetadata> matches, boolean applies) {
      this.delegate = delegate;
      this.matches = matches;
      this.applies = applies;
      this.proxy =
          (Catalog)
              Proxy.newProxyInstance(
                  Catalog.class.getClassLoader(), new Class<?>[] {Catalog.class}, this);
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      Object result = call(delegate, method, args);
      if (method.getName().equals("loadTable") && result instanceof HasTableOperations table) {
        TableOperations ops = table.operations();
        TableOperations losing =
            (TableOperations)
                Proxy.newProxyInstance(
                    TableOperations.class.getClassLoader(),
                    new Class<?>[] {TableOperations.class},
                    (p, m, a) -> {
                      if (m.getName().equals("commit")
                          && matches.test((TableMetadata) a[1])
                          && lost.compareAndSet(0, 1)) {
                        if (applies) {
                          ops.commit((TableMetadata) a[0], (TableMetadata) a[1]);
                        }
                        throw new CommitStateUnknownException(
                            new IllegalStateException("connection reset"));
                      }
                      return call(ops, m, a);
                    });
        return new BaseTable(losing, ((Table) result).name());
      }
      return result;
    }

    private static Object call(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    Catalog catalog() {
      return proxy;
    }
  }
}
