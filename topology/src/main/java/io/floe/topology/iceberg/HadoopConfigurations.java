package io.floe.topology.iceberg;

import org.apache.hadoop.conf.Configuration;

/** The Hadoop configuration Floe builds Iceberg catalogs with. */
public final class HadoopConfigurations {

  private HadoopConfigurations() {}

  /**
   * Hadoop's defaults, with {@code file:} paths served by {@link LocalFileSystem}. Object stores
   * (S3FileIO and others) do not use it.
   */
  public static Configuration forCatalogs() {
    Configuration configuration = new Configuration();
    configuration.set("fs.file.impl", LocalFileSystem.class.getName());
    configuration.setBoolean("fs.file.impl.disable.cache", false);
    return configuration;
  }
}
