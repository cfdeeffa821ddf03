package io.floe.topology.maintain;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.workload.TradeViews;
import io.floe.topology.bucket.DirtyBuckets;
import io.floe.topology.store.StoredView;
import io.floe.topology.view.CompiledView;
import io.floe.topology.view.TableName;
import io.floe.topology.view.ViewDefinition;
import org.junit.jupiter.api.Test;

/** The per-view state machine around the lookup of the source's current snapshot. */
class ViewStateTest {

  private static final long NOW = 1_000_000L;
  private static final String TRADES = "lake.market.trades";

  private static ViewState pinningNewView() throws Exception {
    ViewDefinition definition =
        ViewDefinition.of(
            "ohlcv_1m", TradeViews.OHLCV_1M, TableName.parse("lake.analytics.ohlcv_1m"));
    ViewState state = ViewState.created(StoredView.of(CompiledView.compile(definition, 1)), NOW);
    assertThat(state.needsPin()).isTrue();
    state.pinning();
    return state;
  }

  @Test
  void shouldDropWhatWasPendingWhenTheLookupFindsTheSourceEmpty() throws Exception {
    // Given
    ViewState state = pinningNewView();

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.hasPending()).isFalse();
    assertThat(state.status()).isEqualTo(ViewState.Status.IDLE);
    assertThat(state.dueAt()).isNull();
  }

  @Test
  void shouldRefreshFromTheSnapshotOfAChangeThatArrivedWhileTheLookupFoundTheSourceEmpty()
      throws Exception {
    // Given
    ViewState state = pinningNewView();
    ViewState.Pin first = new ViewState.Pin(42L, 1L, NOW, "uuid");
    state.addChange(TRADES, TRADES, DirtyBuckets.all("appended"), first, NOW + 10);

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.status()).isEqualTo(ViewState.Status.PENDING);
    assertThat(state.pendingPin()).isEqualTo(first);
    assertThat(state.isDue(NOW + 10)).isTrue();
  }

  @Test
  void shouldLookTheSourceUpAgainWhenARefreshWasRequestedWhileTheLookupFoundItEmpty()
      throws Exception {
    // Given
    ViewState state = pinningNewView();
    state.requestRefresh(true, NOW + 10);

    // When
    state.sourceEmpty();

    // Then
    assertThat(state.hasPending()).isTrue();
    assertThat(state.needsPin()).isTrue();
    assertThat(state.isDue(NOW + 10)).isTrue();
  }
}
