package io.floe.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class AvroSerdeTest {

  private static final TableRef TRADES =
      TableRef.newBuilder()
          .setCatalog("lake")
          .setNamespace(List.of("market"))
          .setName("trades")
          .setUuid("5f4b2c59-0c3a-4a0e-9d55-6c1b3b0a7e11")
          .build();

  private static final TableRef OHLCV =
      TableRef.newBuilder()
          .setCatalog("lake")
          .setNamespace(List.of("analytics"))
          .setName("ohlcv_1m")
          .build();

  @Test
  void shouldRoundTripTableCommittedWithAndWithoutOptionalFields() {
    AvroSerde<TableCommitted> serde = AvroSerde.of(TableCommitted.class);
    TableCommitted full =
        TableCommitted.newBuilder()
            .setCatalog("lake")
            .setNamespace(List.of("market", "eu"))
            .setTable("trades")
            .setMetadataLocation("s3://lake/market/trades/metadata/00003-x.metadata.json")
            .setSnapshotId(42L)
            .setEventTime(Instant.ofEpochMilli(1_700_000_000_123L))
            .setProducer("floe-cli")
            .build();
    TableCommitted minimal =
        TableCommitted.newBuilder(full).setMetadataLocation(null).setSnapshotId(null).build();

    assertThat(serde.deserialize("floe.commits", serde.serialize("floe.commits", full)))
        .isEqualTo(full);
    assertThat(serde.deserialize("floe.commits", serde.serialize("floe.commits", minimal)))
        .isEqualTo(minimal);
  }

  @Test
  void shouldRoundTripSnapshotEvent() {
    AvroSerde<SnapshotEvent> serde = AvroSerde.of(SnapshotEvent.class);
    SnapshotEvent event =
        SnapshotEvent.newBuilder()
            .setTable(TRADES)
            .setSnapshotId(7L)
            .setParentId(6L)
            .setSequenceNumber(7L)
            .setTimestamp(Instant.ofEpochMilli(1_700_000_000_000L))
            .setOperation("overwrite")
            .setSummary(Map.of("added-records", "10", "deleted-records", "3"))
            .setManifestList("file:/w/trades/metadata/snap-7.avro")
            .setSchemaId(0)
            .setMetadataLocation("file:/w/trades/metadata/00007.metadata.json")
            .setHistoryBroken(true)
            .setHistoryBrokenReason("snapshot 5 is not an ancestor of 7")
            .build();

    assertThat(serde.deserialize("floe.snapshots", serde.serialize("floe.snapshots", event)))
        .isEqualTo(event);
  }

  @Test
  void shouldRoundTripRefreshEvent() {
    AvroSerde<RefreshEvent> serde = AvroSerde.of(RefreshEvent.class);
    RefreshEvent event =
        RefreshEvent.newBuilder()
            .setRefreshId("ohlcv_1m-3f2a-7")
            .setView("ohlcv_1m")
            .setViewVersion("3f2a")
            .setTarget(OHLCV)
            .setTargetSnapshotId(99L)
            .setSource(TRADES)
            .setSourceSnapshotId(7L)
            .setMode(RefreshMode.FULL)
            .setReason("first run")
            .setDirtyRanges(
                List.of(
                    BucketRange.newBuilder()
                        .setStart(Instant.parse("2026-04-08T10:00:00Z"))
                        .setEnd(Instant.parse("2026-04-08T11:00:00Z"))
                        .build()))
            .setNullBucket(true)
            .setRowsWritten(60)
            .setRowsRemoved(58)
            .setFilesAdded(1)
            .setFilesRemoved(1)
            .setRowsRead(12_000)
            .setBytesRead(1_048_576)
            .setStartTime(Instant.ofEpochMilli(1_700_000_001_000L))
            .setFinishTime(Instant.ofEpochMilli(1_700_000_001_500L))
            .setLagMs(1500L)
            .setError(null)
            .build();

    assertThat(serde.deserialize("floe.refreshes", serde.serialize("floe.refreshes", event)))
        .isEqualTo(event);
  }

  @Test
  void shouldPassNullThroughForTombstones() {
    AvroSerde<TableCommitted> serde = AvroSerde.of(TableCommitted.class);

    assertThat(serde.serialize("floe.commits", null)).isNull();
    assertThat(serde.deserialize("floe.commits", null)).isNull();
  }

  @Test
  void shouldRejectBytesThatAreNotAFloeRecordNamingTypeAndTopic() {
    AvroSerde<TableCommitted> serde = AvroSerde.of(TableCommitted.class);

    assertThatThrownBy(() -> serde.deserialize("floe.commits", "{\"table\":\"x\"}".getBytes()))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Cannot decode TableCommitted from topic floe.commits");
  }

  @Test
  void shouldRejectARecordOfAnotherType() {
    byte[] snapshotBytes =
        AvroSerde.of(SnapshotEvent.class)
            .serialize(
                "t",
                SnapshotEvent.newBuilder()
                    .setTable(TRADES)
                    .setSnapshotId(1L)
                    .setSequenceNumber(1L)
                    .setTimestamp(Instant.EPOCH)
                    .setSummary(Map.of())
                    .build());

    assertThatThrownBy(
            () -> AvroSerde.of(TableCommitted.class).deserialize("floe.commits", snapshotBytes))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("TableCommitted");
  }

  @Test
  void shouldRoundTripViewRecord() {
    AvroSerde<ViewRecord> serde = AvroSerde.of(ViewRecord.class);
    ViewRecord view =
        ViewRecord.newBuilder()
            .setName("ohlcv_1m")
            .setQuery("SELECT ...")
            .setTarget("lake.analytics.ohlcv_1m")
            .setTargetPartitioning(List.of("day(minute_ts)"))
            .setTimezone("Europe/Paris")
            .setDebounceMs(500)
            .setMaxDelayMs(10_000)
            .setChunkBuckets(60)
            .setOrigin("file")
            .setUpdatedAt(Instant.ofEpochMilli(1_700_000_000_000L))
            .setRevision(12L)
            .build();

    assertThat(serde.deserialize("floe.views", serde.serialize("floe.views", view)))
        .isEqualTo(view);
  }

  @Test
  void shouldReadAViewRecordWrittenByAnEarlierReleaseWithoutRevision() throws Exception {
    // Given the bytes of a definition as the previous release wrote it, with its own schema
    Schema previous;
    try (InputStream in = getClass().getResourceAsStream("/compat/v2/ViewRecord.avsc")) {
      previous = new Schema.Parser().parse(in);
    }
    GenericRecord old = new GenericData.Record(previous);
    old.put("name", "ohlcv_1m");
    old.put("query", "SELECT ...");
    old.put("target", "lake.analytics.ohlcv_1m");
    old.put("targetPartitioning", List.of());
    old.put("timezone", "UTC");
    old.put("debounceMs", 1000L);
    old.put("maxDelayMs", 30000L);
    old.put("chunkBuckets", null);
    old.put("chunkRows", null);
    old.put("lingerMs", 200L);
    old.put("minIntervalMs", 0L);
    old.put("origin", "file");
    old.put("updatedAt", 1_700_000_000_000L);
    ByteBuffer encoded =
        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), previous).encode(old);
    byte[] bytes = new byte[encoded.remaining()];
    encoded.get(bytes);

    // When today's serde reads them
    ViewRecord read = AvroSerde.of(ViewRecord.class).deserialize("floe.views", bytes);

    // Then the definition reads as it was written, without a revision of its own
    assertThat(read.getName()).isEqualTo("ohlcv_1m");
    assertThat(read.getOrigin()).isEqualTo("file");
    assertThat(read.getRevision()).isNull();
  }
}
