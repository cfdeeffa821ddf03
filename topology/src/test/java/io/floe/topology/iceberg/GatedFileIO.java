package io.floe.topology.iceberg;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Hadoop's FileIO whose streams of chosen files wait, once {@link #hold} is called, until {@link
 * #release()}: requests held in flight by a slow store, so that a test can see which are in flight
 * at once, or ask for the same file meanwhile. A catalog or {@link CountingFileIO} builds it by
 * class name, so the gate is per JVM.
 */
public class GatedFileIO extends HadoopFileIO {

  private static final Map<String, AtomicInteger> OPENS = new ConcurrentHashMap<>();
  private static volatile Predicate<String> held = location -> false;
  private static volatile CountDownLatch opened = new CountDownLatch(0);
  private static volatile CountDownLatch gate = new CountDownLatch(0);

  /** From now on every stream opened on a file that passes {@code files} waits for release. */
  public static void hold(Predicate<String> files) {
    OPENS.clear();
    opened = new CountDownLatch(1);
    gate = new CountDownLatch(1);
    held = files;
  }

  /** Holds the streams of every file ({@link #hold(Predicate)}). */
  public static void hold() {
    hold(location -> true);
  }

  /** Lets the held streams and every later one through. */
  public static void release() {
    gate.countDown();
  }

  /** Waits until a held stream was opened since {@link #hold}. */
  public static boolean awaitOpened() throws InterruptedException {
    return opened.await(30, TimeUnit.SECONDS);
  }

  /** Streams opened on held files since {@link #hold}. */
  public static int opens() {
    return OPENS.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /** Streams opened on each held file since {@link #hold}. */
  public static Map<String, Integer> opensByFile() {
    Map<String, Integer> byFile = new TreeMap<>();
    OPENS.forEach((location, count) -> byFile.put(location, count.get()));
    return byFile;
  }

  @Override
  public InputFile newInputFile(String path) {
    return new Gated(super.newInputFile(path));
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    return new Gated(super.newInputFile(path, length));
  }

  private record Gated(InputFile delegate) implements InputFile {
    @Override
    public long getLength() {
      return delegate.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      if (held.test(location())) {
        OPENS.computeIfAbsent(location(), l -> new AtomicInteger()).incrementAndGet();
        opened.countDown();
        try {
          if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate was not released");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      return delegate.newStream();
    }

    @Override
    public String location() {
      return delegate.location();
    }

    @Override
    public boolean exists() {
      return delegate.exists();
    }
  }
}
