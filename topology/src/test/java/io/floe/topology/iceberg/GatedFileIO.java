package io.floe.topology.iceberg;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Hadoop's FileIO whose streams wait, once {@link #hold()} is called, until {@link #release()}: a
 * request held in flight by a slow store, so that a test can ask for the same file meanwhile. A
 * catalog or {@link CountingFileIO} builds it by class name, so the gate is per JVM.
 */
public class GatedFileIO extends HadoopFileIO {

  private static final AtomicInteger OPENS = new AtomicInteger();
  private static volatile CountDownLatch opened = new CountDownLatch(0);
  private static volatile CountDownLatch gate = new CountDownLatch(0);

  /** From now on every stream opened waits for {@link #release()}; the opens count from 0. */
  static void hold() {
    OPENS.set(0);
    opened = new CountDownLatch(1);
    gate = new CountDownLatch(1);
  }

  /** Lets the held streams and every later one through. */
  static void release() {
    gate.countDown();
  }

  /** Waits until a stream was opened since {@link #hold()}. */
  static boolean awaitOpened() throws InterruptedException {
    return opened.await(30, TimeUnit.SECONDS);
  }

  /** Streams opened since {@link #hold()}. */
  static int opens() {
    return OPENS.get();
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
      OPENS.incrementAndGet();
      opened.countDown();
      try {
        if (!gate.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the gate was not released");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
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
