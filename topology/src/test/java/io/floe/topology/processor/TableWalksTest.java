package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.testing.IcebergFixture;
import io.floe.topology.store.TableCursor;
import io.floe.topology.view.TableName;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a walk treats a failing catalog: three tries, a missing table at once. */
class TableWalksTest {

  private static final TableName TRADES = TableName.parse("lake.market.trades");

  @TempDir Path dir;
  private IcebergFixture lake;
  private Table trades;
  private final AtomicInteger loads = new AtomicInteger();

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
  void shouldWalkATableWhoseCatalogFailsTwiceThenAnswers() {
    // Given
    long snapshot =
        lake.append(trades, List.of(lake.trade("A", "2024-01-01T00:00:00Z", 1.0, 1L, "b")));
    Catalog catalog = failingLoads(2, () -> new ServiceUnavailableException("catalog unreachable"));

    // When
    TableWalks.Resolved resolved = TableWalks.walk(name -> catalog, TRADES, TableCursor.unwalked());

    // Then
    assertThat(resolved).isInstanceOf(TableWalks.Resolved.Walked.class);
    assertThat(((TableWalks.Resolved.Walked) resolved).walk().currentSnapshotId())
        .isEqualTo(snapshot);
    assertThat(loads).hasValue(3);
  }

  @Test
  void shouldThrowTheLastFailureAfterThreeFailedLoads() {
    // Given
    AtomicInteger failures = new AtomicInteger();
    Catalog catalog =
        failingLoads(
            Integer.MAX_VALUE,
            () ->
                new ServiceUnavailableException(
                    "catalog unreachable %d", failures.incrementAndGet()));

    // When / Then
    assertThatThrownBy(() -> TableWalks.walk(name -> catalog, TRADES, TableCursor.unwalked()))
        .isInstanceOf(ServiceUnavailableException.class)
        .hasMessage("catalog unreachable 3");
    assertThat(loads).hasValue(3);
  }

  @Test
  void shouldReportAMissingTableWithoutTryingAgain() {
    // Given
    Catalog catalog =
        failingLoads(Integer.MAX_VALUE, () -> new NoSuchTableException("no table market.trades"));

    // When
    TableWalks.Resolved resolved = TableWalks.walk(name -> catalog, TRADES, TableCursor.unwalked());

    // Then
    assertThat(resolved).isInstanceOf(TableWalks.Resolved.Missing.class);
    assertThat(loads).hasValue(1);
  }

  /** The real catalog, whose first {@code failures} table loads throw. */
  private Catalog failingLoads(
      int failures, java.util.function.Supplier<RuntimeException> failure) {
    Catalog real = lake.catalog();
    return (Catalog)
        Proxy.newProxyInstance(
            Catalog.class.getClassLoader(),
            new Class<?>[] {Catalog.class},
            (proxy, method, args) -> {
              if (method.getName().equals("loadTable") && loads.incrementAndGet() <= failures) {
                throw failure.get();
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
