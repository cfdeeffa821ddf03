package io.floe.topology.refresh;

import java.util.Objects;

/**
 * How far a chunked refresh has come: the table property {@code floe.progress} of a target while a
 * refresh cut into chunks is half applied (DESIGN §3.6). It names the last committed chunk and the
 * fingerprint of the chunk plan, so that a refresh resumed after a crash continues only the plan it
 * started, and starts again from chunk 0 when the plan changed (other settings, a rollback, an
 * expired bookmark).
 *
 * <p>Form: {@code <chunk id>;plan=<fingerprint>}.
 *
 * @param lastCommitted the last chunk committed
 * @param planFingerprint the fingerprint of the plan the chunks belong to
 */
public record RefreshProgress(ChunkId lastCommitted, String planFingerprint) {

  private static final String PLAN = ";plan=";

  public RefreshProgress {
    Objects.requireNonNull(lastCommitted, "lastCommitted");
    Objects.requireNonNull(planFingerprint, "planFingerprint");
    if (planFingerprint.contains(";")) {
      throw new IllegalArgumentException("A plan fingerprint has no ';': " + planFingerprint);
    }
  }

  /**
   * Parses {@link #toString}'s form. Progress recorded by earlier releases, without a plan, reads
   * with an empty fingerprint, which matches no plan.
   *
   * @throws IllegalArgumentException when {@code text} is not a progress record
   */
  public static RefreshProgress parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("Not a refresh progress: null");
    }
    int cut = text.lastIndexOf(PLAN);
    return cut < 0
        ? new RefreshProgress(ChunkId.parse(text), "")
        : new RefreshProgress(
            ChunkId.parse(text.substring(0, cut)), text.substring(cut + PLAN.length()));
  }

  /** True when this is the progress of {@code refresh} following the plan {@code fingerprint}. */
  public boolean continues(RefreshId refresh, String fingerprint) {
    return lastCommitted.refresh().equals(refresh) && planFingerprint.equals(fingerprint);
  }

  @Override
  public String toString() {
    return lastCommitted + PLAN + planFingerprint;
  }
}
