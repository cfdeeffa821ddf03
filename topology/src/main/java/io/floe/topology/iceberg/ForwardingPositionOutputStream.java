package io.floe.topology.iceberg;

import java.io.IOException;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * A stream that hands every call to the store's stream it wraps; a FileIO wrapper's stream
 * overrides what it does besides. (Not an Iceberg {@code DelegatingOutputStream}: Parquet's writer
 * would unwrap one and write past the wrapper.)
 */
abstract class ForwardingPositionOutputStream extends PositionOutputStream {
  protected final PositionOutputStream delegate;

  ForwardingPositionOutputStream(PositionOutputStream delegate) {
    this.delegate = delegate;
  }

  @Override
  public long getPos() throws IOException {
    return delegate.getPos();
  }

  @Override
  public long storedLength() throws IOException {
    return delegate.storedLength();
  }

  @Override
  public void write(int b) throws IOException {
    delegate.write(b);
  }

  @Override
  public void write(byte[] bytes, int off, int len) throws IOException {
    delegate.write(bytes, off, len);
  }

  @Override
  public void flush() throws IOException {
    delegate.flush();
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
