package io.floe.topology.store;

/**
 * The state stores of the topology. Their names become changelog topic names, so they never change
 * once released.
 */
public final class StoreNames {

  /** Per watched table: the last snapshot published to floe.snapshots. */
  public static final String TABLE_CURSORS = "table-cursors";

  /** Per view: definition, dirty buckets, watermark, in-flight refresh and status. */
  public static final String VIEW_STATE = "view-state";

  /** Per table: the snapshots waiting for detection, which runs off the stream thread. */
  public static final String DETECT_QUEUE = "detect-queue";

  /** Global: every view definition, from floe.views. */
  public static final String VIEWS = "views";

  private StoreNames() {}
}
