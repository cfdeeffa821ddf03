package io.floe.topology.refresh.eval;

import io.floe.topology.iceberg.StorageKind;

/**
 * Every oracle check of {@link ViewScanTest} with the files taken to be on a remote store, where
 * the column reader reads a small file whole once and serves its footer and column chunks from
 * memory ({@code ParquetBatches#SMALL_FILE_BYTES}): the same rows as on local files.
 */
class ViewScanOnARemoteStoreTest extends ViewScanTest {

  @Override
  StorageKind storage() {
    return StorageKind.REMOTE;
  }
}
