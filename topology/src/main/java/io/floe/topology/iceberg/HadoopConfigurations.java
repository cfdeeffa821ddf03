package io.floe.topology.iceberg;

import org.apache.hadoop.conf.Configuration;

/**
 * The Hadoop configuration Floe builds Iceberg catalogs with, and the configurations that Iceberg
 * builds of its own.
 */
public final class HadoopConfigurations {

  private static final ClassLoader DEFAULTS_IN_MEMORY =
      new HadoopDefaultResources(Configuration.class.getClassLoader());

  /** Builds something, failing with {@code E}. */
  @FunctionalInterface
  public interface Build<T, E extends Exception> {
    T build() throws E;
  }

  private HadoopConfigurations() {}

  /**
   * Runs {@code build}, whose every {@code new Configuration()} reads Hadoop's default resources
   * from memory ({@link HadoopDefaultResources}) instead of searching the class path for them and
   * parsing them whole: wrap Iceberg's Parquet writer builders in it, which make one for each file
   * they write to any FileIO but Hadoop's. The configurations hold the same properties either way.
   */
  public static <T, E extends Exception> T withDefaultsInMemory(Build<T, E> build) throws E {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(DEFAULTS_IN_MEMORY);
    try {
      return build.build();
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

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
