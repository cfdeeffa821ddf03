package io.floe.topology.iceberg;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLConnection;
import java.net.URLStreamHandler;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * A class loader that answers Hadoop's requests for its configuration resources ({@code
 * core-default.xml}, {@code core-site.xml}, any {@code *.xml}) from memory: each is looked up on
 * the parent's class path and read once per process, its {@code <description>} elements (which
 * Hadoop's parser skips, and which make up two thirds of {@code core-default.xml}) left out.
 * Everything else, classes included, is the parent's.
 *
 * <p>A {@code new Configuration()} takes its class loader from the thread's context class loader
 * and, at its first use, searches the class path for each default resource, opens the jar that
 * holds it again (Hadoop turns the jar cache off) and parses it. Iceberg's Parquet writer makes one
 * for every file it writes to a FileIO other than Hadoop's: 1.5 ms of CPU a file, a fifth of a
 * small refresh. Under this loader it is a parse of a third of the bytes, and nothing else.
 */
final class HadoopDefaultResources extends ClassLoader {

  private static final Pattern DESCRIPTION = Pattern.compile("(?s)<description>.*?</description>");

  private final Map<String, Optional<URL>> resources = new ConcurrentHashMap<>();

  HadoopDefaultResources(ClassLoader parent) {
    super(parent);
  }

  @Override
  public URL getResource(String name) {
    if (!name.endsWith(".xml")) {
      return super.getResource(name);
    }
    return resources.computeIfAbsent(name, this::inMemory).orElse(null);
  }

  private Optional<URL> inMemory(String name) {
    URL found = getParent().getResource(name);
    if (found == null) {
      return Optional.empty();
    }
    byte[] bytes;
    try (InputStream in = found.openStream()) {
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Hadoop resource " + found, e);
    }
    byte[] kept =
        DESCRIPTION
            .matcher(new String(bytes, StandardCharsets.UTF_8))
            .replaceAll("")
            .getBytes(StandardCharsets.UTF_8);
    try {
      return Optional.of(new URL("floe-memory", null, -1, "/" + name, new Bytes(kept)));
    } catch (MalformedURLException e) {
      throw new IllegalStateException("Cannot name resource " + name, e);
    }
  }

  /** Serves one resource's bytes. */
  private static final class Bytes extends URLStreamHandler {
    private final byte[] bytes;

    Bytes(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    protected URLConnection openConnection(URL url) {
      return new URLConnection(url) {
        @Override
        public void connect() {}

        @Override
        public InputStream getInputStream() {
          return new ByteArrayInputStream(bytes);
        }
      };
    }
  }
}
