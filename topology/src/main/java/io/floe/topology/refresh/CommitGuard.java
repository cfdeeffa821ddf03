package io.floe.topology.refresh;

import io.floe.topology.view.CompiledView;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * What a target commit requires of the metadata it replaces (DESIGN §3.6), checked inside the
 * atomic swap by {@link GuardedTableOperations}: the bookmark properties it started from are
 * unchanged, and no newer definition of the view has committed. So a replayed refresh, a second
 * instance, or a refresh of an older definition still queued somewhere can never apply a change
 * twice, move a view backwards, or replace a newer definition's rows with an older one's.
 *
 * <p>A newer definition is one with a larger {@link FloeProperties#VIEW_REVISION} and another
 * version: a definition equal in content to the one that wrote the target (the same {@link
 * FloeProperties#VIEW_VERSION}) computes the same rows, so its smaller revision, as a views topic
 * recreated or mirrored with other offsets gives, refuses nothing ({@link #isSupersededBy}).
 *
 * @param expected properties the table must have; a null value means the property must be absent
 * @param view the view, for messages
 * @param revision the revision of the definition committing
 * @param version the version of the definition committing
 */
record CommitGuard(Map<String, String> expected, String view, long revision, String version) {

  CommitGuard {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(version, "version");
    expected = expected == null ? Map.of() : new java.util.HashMap<>(expected);
  }

  /** The guard of a commit of {@code definition} that started from {@code expected}. */
  static CommitGuard of(Map<String, String> expected, CompiledView definition) {
    return new CommitGuard(
        expected, definition.name(), definition.revision(), definition.version());
  }

  /** A guard that only refuses a commit of an older definition: for schema changes. */
  static CommitGuard definitionOnly(CompiledView definition) {
    return of(Map.of(), definition);
  }

  /** Throws when {@code base} is not what the commit requires. */
  void check(TableMetadata base) {
    for (Map.Entry<String, String> property : expected.entrySet()) {
      String actual = base == null ? null : base.property(property.getKey(), null);
      if (!Objects.equals(actual, property.getValue())) {
        throw new BookmarkMovedException(property.getKey(), property.getValue(), actual);
      }
    }
    Bookmark target = base == null ? Bookmark.of(Map.of()) : Bookmark.of(base.properties());
    if (isSupersededBy(target, revision, version)) {
      throw new SupersededException(supersededReason(view, target, revision, version));
    }
  }

  /**
   * Whether the definition at {@code revision} of {@code version} must not write a target with this
   * bookmark: a definition of another version, at a larger revision, wrote it last.
   */
  static boolean isSupersededBy(Bookmark target, long revision, String version) {
    return target.viewRevision() != null
        && target.viewRevision() > revision
        && !version.equals(writerVersion(target));
  }

  /**
   * The revision a commit of the definition at {@code revision} records: its own, or the target's
   * when that is larger (the same content committing, see {@link #isSupersededBy}), so that the
   * revision a target records never goes back and an older definition stays refused.
   */
  static long revisionToRecord(Bookmark target, long revision) {
    return target.viewRevision() == null ? revision : Math.max(revision, target.viewRevision());
  }

  /** Why the definition at {@code revision} of {@code version} may not write the target. */
  static String supersededReason(String view, Bookmark target, long revision, String version) {
    return "the target of view "
        + view
        + " holds revision "
        + target.viewRevision()
        + " of its definition (version "
        + writerVersion(target)
        + "), newer than revision "
        + revision
        + " (version "
        + version
        + ")";
  }

  /**
   * The version of the definition that recorded the target's revision: that of a chunked refresh
   * half applied (its chunks record their revision, and the bookmark's version only with the last
   * chunk), else the bookmark's.
   */
  private static String writerVersion(Bookmark target) {
    RefreshProgress progress = target.parsedProgress();
    return progress != null ? progress.lastCommitted().refresh().version() : target.viewVersion();
  }

  /**
   * The target's bookmark is not what the refresh started from: another instance or an earlier
   * attempt of this refresh has committed. Not retried by Iceberg; the refresh plans again.
   */
  static final class BookmarkMovedException extends ValidationException {
    BookmarkMovedException(String property, String expected, String actual) {
      super(
          "Target property %s is %s, expected %s: another commit moved the view",
          property, actual, expected);
    }
  }

  /**
   * A newer definition of the view has committed to the target, or is in force: this refresh must
   * not commit.
   */
  static final class SupersededException extends ValidationException {
    private final String reason;

    private SupersededException(String reason) {
      super("Refusing the commit: %s", reason);
      this.reason = reason;
    }

    /** Why, as a clause to follow "Cannot refresh view v: ". */
    String reason() {
      return reason;
    }

    /** The definition the refresh runs is no longer the one in force. */
    static SupersededException redefined(String view, long revision) {
      return new SupersededException(
          "view " + view + " was redefined after revision " + revision + " started this refresh");
    }
  }
}
