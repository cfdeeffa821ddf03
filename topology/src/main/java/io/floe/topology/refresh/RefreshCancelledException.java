package io.floe.topology.refresh;

/** The refresh was cancelled before its next commit (its task closed); nothing more commits. */
public final class RefreshCancelledException extends RuntimeException {
  private final RefreshId refreshId;

  /** The refresh was cancelled before it started. */
  RefreshCancelledException(RefreshId refreshId) {
    super("Refresh " + refreshId + " was cancelled");
    this.refreshId = refreshId;
  }

  /** The refresh was cancelled before the commit of {@code chunk}. */
  RefreshCancelledException(ChunkId chunk) {
    super("Refresh " + chunk + " was cancelled");
    this.refreshId = chunk.refresh();
  }

  /** The refresh that was cancelled. */
  public RefreshId refreshId() {
    return refreshId;
  }
}
