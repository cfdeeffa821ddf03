package io.floe.topology.iceberg;

import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * An output file of a FileIO wrapper: the store's file, whose streams it wraps ({@link #wrap}); a
 * wrapper overrides what it does besides.
 */
abstract class ForwardingOutputFile implements OutputFile {
  protected final OutputFile delegate;

  /** The name the file was asked for under (the store's location may be normalised). */
  protected final String path;

  ForwardingOutputFile(OutputFile delegate, String path) {
    this.delegate = delegate;
    this.path = path;
  }

  /** The stream the wrapper writes {@code stream}, one of the store's file, through. */
  abstract PositionOutputStream wrap(PositionOutputStream stream);

  @Override
  public PositionOutputStream create() {
    return wrap(delegate.create());
  }

  @Override
  public PositionOutputStream createOrOverwrite() {
    return wrap(delegate.createOrOverwrite());
  }

  @Override
  public String location() {
    return delegate.location();
  }
}
