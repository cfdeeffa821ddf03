package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.inmemory.InMemoryFileIO;
import org.apache.iceberg.io.ResolvingFileIO;
import org.junit.jupiter.api.Test;

class StorageKindTest {

  @Test
  void shouldTreatFilesOnTheLocalFileSystemAsLocal() {
    HadoopFileIO io = new HadoopFileIO(new Configuration());

    assertThat(StorageKind.of(io, "file:/data/warehouse/market/trades"))
        .isEqualTo(StorageKind.LOCAL);
    assertThat(StorageKind.of(io, "/data/warehouse/market/trades")).isEqualTo(StorageKind.LOCAL);
    assertThat(StorageKind.of(new InMemoryFileIO(), "s3://bucket/t")).isEqualTo(StorageKind.LOCAL);
  }

  @Test
  void shouldTreatObjectStoresAndHdfsAsRemoteWhateverTheFileIoResolvesThemWith() {
    ResolvingFileIO resolving = new ResolvingFileIO();
    resolving.initialize(Map.of());

    assertThat(StorageKind.of(resolving, "s3://bucket/warehouse/t")).isEqualTo(StorageKind.REMOTE);
    assertThat(StorageKind.of(resolving, "gs://bucket/t")).isEqualTo(StorageKind.REMOTE);
    assertThat(StorageKind.of(resolving, "abfss://c@account.dfs.core.windows.net/t"))
        .isEqualTo(StorageKind.REMOTE);
    assertThat(StorageKind.of(new HadoopFileIO(new Configuration()), "hdfs://nn:8020/t"))
        .isEqualTo(StorageKind.REMOTE);
    assertThat(StorageKind.of(resolving, "file:/tmp/t")).isEqualTo(StorageKind.LOCAL);
  }

  @Test
  void shouldReadRemoteFilesWithMoreWorkersThanCores() {
    int cores = Runtime.getRuntime().availableProcessors();

    assertThat(StorageKind.LOCAL.scanParallelism()).isEqualTo(cores);
    assertThat(StorageKind.REMOTE.scanParallelism())
        .isEqualTo(Math.max(cores, StorageKind.REMOTE_READS));
  }
}
