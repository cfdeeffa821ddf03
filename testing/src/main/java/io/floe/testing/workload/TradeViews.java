package io.floe.testing.workload;

/** Views over the {@link Trades} table that the tests of every module share. */
public final class TradeViews {

  private TradeViews() {}

  /** The 1-minute OHLCV bars of {@code lake.market.trades}, with a trade count. */
  public static final String OHLCV_1M =
      """
      SELECT symbol, date_trunc('minute', ts) AS minute_ts,
             min_by(price, ts) AS open, max(price) AS high, min(price) AS low,
             max_by(price, ts) AS close, sum(quantity) AS volume, count(*) AS trade_count
      FROM lake.market.trades
      GROUP BY symbol, date_trunc('minute', ts)
      """;

  /**
   * The 1-minute bars with a distinct count, which no partial state folds: a change of a minute
   * recomputes it from the source, as every view with {@code min_by} or {@code max_by} did before
   * partial states (for tests of what a recompute reads and requests).
   */
  public static final String OHLCV_1M_RECOMPUTED =
      OHLCV_1M.replace(
          "count(*) AS trade_count", "count(*) AS trade_count, count(DISTINCT side) AS sides");
}
