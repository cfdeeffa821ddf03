package io.floe.topology.iceberg;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's file system for {@code file:} paths, as Iceberg's {@code HadoopFileIO} uses it for
 * tables on local disk, without the two costs of Hadoop's default: without Hadoop's native library
 * (which no Maven artifact carries) every file created forks a {@code chmod} process, and the
 * checksumming wrapper writes a {@code .crc} file beside each one. Permissions are set through
 * java.nio instead; Parquet and Avro files carry their own checksums.
 *
 * <p>Profiled: a refresh a second per view of many views forked about 150 {@code chmod} processes a
 * second, more than the refreshes' own work.
 */
public final class LocalFileSystem extends RawLocalFileSystem {

  @Override
  public void setPermission(Path path, FsPermission permission) throws IOException {
    java.nio.file.Path file = pathToFile(path).toPath();
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(permission.toString()));
    } catch (UnsupportedOperationException e) {
      // A file system without POSIX permissions: nothing to set.
    }
  }
}
