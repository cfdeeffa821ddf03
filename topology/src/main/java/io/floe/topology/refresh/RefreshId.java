package io.floe.topology.refresh;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The deterministic id of a refresh (DESIGN §3.6): a view version bringing its target to one source
 * snapshot, for a user's forced full refresh which request it answers (a later request of the same
 * snapshot is another refresh), and, when it reads again a snapshot the target already reflects as
 * read otherwise, which source columns it reads: a schema change or a name mapping creates no
 * snapshot, and the full refresh it causes at the same snapshot is another refresh. Recorded as
 * {@code floe.refresh-id} in every target commit; one formatter ({@link #toString}) and one parser
 * ({@link #parse}). The stores hold it in the same form, as a JSON string, so a store written when
 * the id was kept as a plain string reads back unchanged.
 *
 * <p>Form: {@code <view>@<version>:<source snapshot>}, followed by {@code /full-<n>} for the n-th
 * forced full refresh of the view, or by {@code /range-<n>} for the n-th refresh of a time range a
 * user asked for, then by {@code /reads-<digest>} ({@link
 * io.floe.topology.view.SourceColumns#digest}) for such a second reading of a snapshot. View names
 * never contain {@code @ : / #}.
 *
 * @param view the view name
 * @param version the view version
 * @param sourceSnapshotId the source snapshot the refresh brings the target to
 * @param forcedRequest which forced full refresh of the view this is, counting from 1; 0 for none
 * @param rangeRequest which requested refresh of a time range this is, counting from 1; 0 for none
 * @param reads the digest of the source columns the refresh reads when it reads a snapshot the
 *     target reflects as read otherwise; null for every other refresh
 */
public record RefreshId(
    String view,
    String version,
    long sourceSnapshotId,
    long forcedRequest,
    long rangeRequest,
    String reads) {

  private static final Pattern FORM =
      Pattern.compile(
          "([^@:/#]+)@([^@:/#]+):(-?\\d+)(?:/full[-@](\\d+))?(?:/range-(\\d+))?(?:/reads-([0-9a-f]+))?");

  public RefreshId {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(version, "version");
    if (forcedRequest < 0 || rangeRequest < 0) {
      throw new IllegalArgumentException("forcedRequest and rangeRequest must not be negative");
    }
    if (reads != null && !reads.matches("[0-9a-f]+")) {
      throw new IllegalArgumentException("reads must be a lower-case hex digest: '" + reads + "'");
    }
  }

  /** A refresh that is not a second reading of its snapshot. */
  public RefreshId(String view, String version, long sourceSnapshotId, long forcedRequest) {
    this(view, version, sourceSnapshotId, forcedRequest, 0, null);
  }

  /** The refresh of a view version to a source snapshot. */
  public static RefreshId of(String view, String version, long sourceSnapshotId) {
    return new RefreshId(view, version, sourceSnapshotId, 0);
  }

  /** The n-th forced full refresh of a view version to a source snapshot. */
  public static RefreshId forced(String view, String version, long sourceSnapshotId, long n) {
    if (n < 1) {
      throw new IllegalArgumentException("forced full refreshes count from 1");
    }
    return new RefreshId(view, version, sourceSnapshotId, n);
  }

  /**
   * Parses {@link #toString}'s form. The {@code /full@<n>} suffix of earlier releases reads as a
   * forced refresh too.
   *
   * @throws IllegalArgumentException when {@code text} is not a refresh id
   */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static RefreshId parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text);
    if (!m.matches()) {
      throw new IllegalArgumentException("Not a refresh id: '" + text + "'");
    }
    return new RefreshId(
        m.group(1),
        m.group(2),
        Long.parseLong(m.group(3)),
        m.group(4) == null ? 0 : Long.parseLong(m.group(4)),
        m.group(5) == null ? 0 : Long.parseLong(m.group(5)),
        m.group(6));
  }

  /**
   * This refresh reading its snapshot again, after the target reflected it as read otherwise, to
   * the source columns of digest {@code reads}.
   */
  public RefreshId readingOtherColumns(String reads) {
    return new RefreshId(
        view,
        version,
        sourceSnapshotId,
        forcedRequest,
        rangeRequest,
        Objects.requireNonNull(reads, "reads"));
  }

  /**
   * The n-th refresh of a time range a user asked for, of a view version to a source snapshot: a
   * range may be asked for again at a snapshot the target already reflects (a repair), and each
   * request is a refresh of its own.
   */
  public static RefreshId ranged(String view, String version, long sourceSnapshotId, long n) {
    if (n < 1) {
      throw new IllegalArgumentException("range refreshes count from 1");
    }
    return new RefreshId(view, version, sourceSnapshotId, 0, n, null);
  }

  /** True for a user's forced full refresh. */
  public boolean isForced() {
    return forcedRequest > 0;
  }

  @JsonValue
  @Override
  public String toString() {
    String id = view + "@" + version + ":" + sourceSnapshotId;
    id = isForced() ? id + "/full-" + forcedRequest : id;
    id = rangeRequest > 0 ? id + "/range-" + rangeRequest : id;
    return reads == null ? id : id + "/reads-" + reads;
  }
}
