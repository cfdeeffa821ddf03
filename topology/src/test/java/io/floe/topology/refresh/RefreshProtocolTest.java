package io.floe.topology.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.bucket.BucketRange;
import io.floe.topology.bucket.BucketRangeSet;
import io.floe.topology.bucket.DirtyBuckets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/** The typed records of the refresh protocol: each has one formatter and one parser. */
class RefreshProtocolTest {

  @Property
  void shouldReadBackEveryRefreshId(
      @ForAll("viewNames") String view,
      @ForAll @StringLength(min = 1, max = 16) @net.jqwik.api.constraints.AlphaChars String version,
      @ForAll long snapshot,
      @ForAll @LongRange(min = 0, max = 1_000_000) long forced) {
    RefreshId id = new RefreshId(view, version, snapshot, forced);

    assertThat(RefreshId.parse(id.toString())).isEqualTo(id);
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<String> viewNames() {
    return net.jqwik.api.Arbitraries.strings()
        .withChars("abcXYZ019_.-")
        .ofMinLength(1)
        .ofMaxLength(40);
  }

  @Property
  void shouldReadBackEveryChunkAndProgress(
      @ForAll @IntRange(min = 1, max = 5000) int count,
      @ForAll @IntRange(min = 0, max = 4999) int index,
      @ForAll @LongRange(min = 1, max = 99) long forced) {
    int chunk = index % count;
    RefreshId refresh = RefreshId.forced("ohlcv_1m", "0a1b2c3d4e5f6a7b", -42L, forced);
    ChunkId id = new ChunkId(refresh, chunk, count);
    RefreshProgress progress = new RefreshProgress(id, "9f8e7d6c5b4a3f2e");

    assertThat(ChunkId.parse(id.toString())).isEqualTo(id);
    assertThat(RefreshProgress.parse(progress.toString())).isEqualTo(progress);
    assertThat(progress.continues(refresh, "9f8e7d6c5b4a3f2e")).isTrue();
    assertThat(progress.continues(refresh, "another")).isFalse();
  }

  @Test
  void shouldFormatTheFormsRecordedInTargets() {
    RefreshId plain = RefreshId.of("ohlcv_1m", "abc", 42);
    RefreshId forced = RefreshId.forced("ohlcv_1m", "abc", 42, 3);

    assertThat(plain).hasToString("ohlcv_1m@abc:42");
    assertThat(forced).hasToString("ohlcv_1m@abc:42/full-3");
    assertThat(ChunkId.whole(forced)).hasToString("ohlcv_1m@abc:42/full-3");
    assertThat(new ChunkId(forced, 2, 5)).hasToString("ohlcv_1m@abc:42/full-3#2/5");
    assertThat(new RefreshProgress(new ChunkId(forced, 2, 5), "f00d"))
        .hasToString("ohlcv_1m@abc:42/full-3#2/5;plan=f00d");
  }

  @Test
  void shouldFormatAndReadBackTheIdOfARequestedRange() {
    RefreshId ranged = RefreshId.ranged("ohlcv_1m", "abc", 42, 2);

    assertThat(ranged).hasToString("ohlcv_1m@abc:42/range-2");
    assertThat(RefreshId.parse("ohlcv_1m@abc:42/range-2")).isEqualTo(ranged);
    assertThat(ranged.isForced()).isFalse();
    assertThat(ranged).isNotEqualTo(RefreshId.of("ohlcv_1m", "abc", 42));
    RefreshId reread = ranged.readingOtherColumns("beef");
    assertThat(RefreshId.parse(reread.toString())).isEqualTo(reread);
    assertThat(reread).hasToString("ohlcv_1m@abc:42/range-2/reads-beef");
  }

  @Test
  void shouldReadBackTheIdOfASnapshotReadUnderAnotherSchemaThanItsOwn() {
    RefreshId plain = RefreshId.of("ohlcv_1m", "abc", 42);
    RefreshId reread = plain.readingOtherColumns("1a2b3c4d");
    RefreshId forced = RefreshId.forced("ohlcv_1m", "abc", 42, 3).readingOtherColumns("1a2b3c4d");

    assertThat(reread).hasToString("ohlcv_1m@abc:42/reads-1a2b3c4d").isNotEqualTo(plain);
    assertThat(forced).hasToString("ohlcv_1m@abc:42/full-3/reads-1a2b3c4d");
    assertThat(RefreshId.parse(reread.toString())).isEqualTo(reread);
    assertThat(RefreshId.parse(forced.toString())).isEqualTo(forced);
    assertThat(ChunkId.parse(new ChunkId(reread, 1, 4).toString()))
        .isEqualTo(new ChunkId(reread, 1, 4));
    // The ids recorded before keep their form and meaning.
    assertThat(RefreshId.parse("ohlcv_1m@abc:42")).isEqualTo(plain);
    assertThat(RefreshId.parse("ohlcv_1m@abc:42").reads()).isNull();
  }

  @Test
  void shouldReadTheFormsOfEarlierReleases() {
    // A forced full refresh was named after its request time, and progress had no plan.
    RefreshProgress legacy = RefreshProgress.parse("ohlcv_1m@abc:42/full@1700000000000#1/4");

    assertThat(legacy.lastCommitted().refresh().isForced()).isTrue();
    assertThat(legacy.lastCommitted().index()).isEqualTo(1);
    assertThat(legacy.lastCommitted().count()).isEqualTo(4);
    assertThat(legacy.planFingerprint()).isEmpty();
  }

  @Test
  void shouldReadTheRefreshIdOfABookmarkInEveryFormItWasRecordedIn() {
    // The forms this release writes, and a forced refresh named after its request time
    assertThat(Bookmark.of(Map.of(FloeProperties.REFRESH_ID, "v@abc:42/range-2")).refreshId())
        .isEqualTo(RefreshId.ranged("v", "abc", 42, 2));
    assertThat(Bookmark.of(Map.of(FloeProperties.REFRESH_ID, "v@abc:42/full@1700000000000")))
        .extracting(Bookmark::refreshId)
        .isEqualTo(RefreshId.forced("v", "abc", 42, 1_700_000_000_000L));
    // Something else names no refresh, and the bookmark records none when written back
    Bookmark garbled = Bookmark.of(Map.of(FloeProperties.REFRESH_ID, "v:42"));
    assertThat(garbled.refreshId()).isNull();
    assertThat(garbled.properties()).containsEntry(FloeProperties.REFRESH_ID, null);
    assertThat(Bookmark.of(Map.of()).refreshId()).isNull();
  }

  @Test
  void shouldRejectWhatIsNotARefreshId() {
    assertThatThrownBy(() -> RefreshId.parse("ohlcv_1m:42"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Not a refresh id: 'ohlcv_1m:42'");
    assertThatThrownBy(() -> ChunkId.parse("v@x:1#3/2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Chunk 3 of 2 does not exist");
    assertThatThrownBy(() -> ChunkId.parse("v@x:1#a/2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Not a chunk id: 'v@x:1#a/2'");
  }

  @Property
  void shouldReadBackDirtyBuckets(
      @ForAll("ranges") List<long[]> bounds, @ForAll boolean nullBucket) {
    List<BucketRange> ranges = new ArrayList<>();
    bounds.forEach(
        b -> ranges.add(new BucketRange(Math.min(b[0], b[1]), Math.max(b[0], b[1]) + 1)));
    DirtyBuckets dirty = DirtyBuckets.of(BucketRangeSet.of(ranges), nullBucket);

    DirtyBuckets read = DirtyBuckets.parse(dirty.format(), null);

    if (dirty.ranges().ranges().size() <= 64) {
      assertThat(read).isEqualTo(dirty);
    } else {
      // Too many ranges are recorded as their envelope: a superset, never less.
      dirty.ranges().ranges().forEach(r -> assertThat(read.ranges().contains(r.start())).isTrue());
      assertThat(read.nullBucket()).isEqualTo(nullBucket);
    }
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<List<long[]>> ranges() {
    net.jqwik.api.Arbitrary<Long> value =
        net.jqwik.api.Arbitraries.longs().between(-1_000_000L, 1_000_000L);
    return net.jqwik.api.Combinators.combine(value, value)
        .as((a, b) -> new long[] {a, b})
        .list()
        .ofMaxSize(80);
  }

  @Test
  void shouldRecordEveryBucketAsAll() {
    assertThat(DirtyBuckets.all("x").format()).isEqualTo("all");
    assertThat(DirtyBuckets.parse("all", "reported after a restart"))
        .isEqualTo(DirtyBuckets.all("reported after a restart"));
    assertThat(DirtyBuckets.parse("", null)).isEqualTo(DirtyBuckets.none());
  }

  @Test
  void shouldReadTheBookmarkOfATargetAndWhatACommitExpects() {
    Map<String, String> properties = new HashMap<>();
    properties.put(FloeProperties.SOURCE_SNAPSHOT_ID, "42");
    properties.put(FloeProperties.VIEW_VERSION, "abc");
    properties.put(FloeProperties.VIEW_REVISION, "7");
    properties.put(FloeProperties.SOURCE_TABLE_UUID, "u-1");
    properties.put(FloeProperties.REFRESH_ID, "v@abc:42");
    properties.put(FloeProperties.PROGRESS, "v@abc:43#0/2;plan=ff");

    Bookmark bookmark = Bookmark.of(properties);

    assertThat(bookmark.sourceSnapshotId()).isEqualTo(42L);
    assertThat(bookmark.viewRevision()).isEqualTo(7L);
    assertThat(bookmark.parsedProgress().lastCommitted().refresh())
        .isEqualTo(RefreshId.of("v", "abc", 43));
    assertThat(bookmark.expected())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, "42")
        .containsEntry(FloeProperties.PROGRESS, "v@abc:43#0/2;plan=ff");
    assertThat(Bookmark.of(Map.of()).isEmpty()).isTrue();
    assertThat(Bookmark.of(Map.of()).expected())
        .containsEntry(FloeProperties.SOURCE_SNAPSHOT_ID, null)
        .containsEntry(FloeProperties.PROGRESS, null);
  }
}
