package io.floe.topology.refresh;

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
 * @param expected properties the table must have; a null value means the property must be absent
 * @param view the view, for messages
 * @param revision the revision of the definition committing: a table recording a larger {@link
 *     FloeProperties#VIEW_REVISION} refuses the commit
 */
record CommitGuard(Map<String, String> expected, String view, long revision) {

  CommitGuard {
    Objects.requireNonNull(view, "view");
    expected = expected == null ? Map.of() : new java.util.HashMap<>(expected);
  }

  /** A guard that only refuses a commit of an older definition: for schema changes. */
  static CommitGuard definitionOnly(String view, long revision) {
    return new CommitGuard(Map.of(), view, revision);
  }

  /** Throws when {@code base} is not what the commit requires. */
  void check(TableMetadata base) {
    for (Map.Entry<String, String> property : expected.entrySet()) {
      String actual = base == null ? null : base.property(property.getKey(), null);
      if (!Objects.equals(actual, property.getValue())) {
        throw new BookmarkMovedException(property.getKey(), property.getValue(), actual);
      }
    }
    String recorded = base == null ? null : base.property(FloeProperties.VIEW_REVISION, null);
    if (recorded != null) {
      long newer;
      try {
        newer = Long.parseLong(recorded.trim());
      } catch (NumberFormatException e) {
        return;
      }
      if (newer > revision) {
        throw new SupersededException(view, newer, revision);
      }
    }
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
    SupersededException(String view, long recorded, long revision) {
      super(
          "Target of view %s holds revision %s of its definition, newer than revision %s of this"
              + " refresh",
          view, recorded, revision);
    }

    private SupersededException(String message) {
      super("%s", message);
    }

    /** The definition the refresh runs is no longer the one in force. */
    static SupersededException redefined(String view, long revision) {
      return new SupersededException(
          "View " + view + " was redefined after revision " + revision + " started this refresh");
    }
  }
}
