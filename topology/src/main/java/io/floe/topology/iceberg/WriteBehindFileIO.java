package io.floe.topology.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestListFile;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * The FileIO of one commit to a table on a remote store, through which the commit's manifests and
 * manifest list are uploaded while it goes on, and which the commit waits for ({@link
 * #awaitUploads}) before its new metadata file is written and swapped in.
 *
 * <p>Iceberg writes a commit's files one step after the other: the manifests rewritten without the
 * replaced files, the new files' manifest, the manifest list, then the metadata file, and each
 * upload (the request an object store's stream makes when it is closed) waits for the one before.
 * Nothing of a commit is visible before the catalog points at its metadata file, and each of these
 * files is complete, its length known, once its last byte is written: so here the closing of a
 * manifest's or manifest list's stream, which uploads it, runs on {@code uploads}, the commit's
 * next step starts at once, and the commit's requests before the metadata file overlap instead of
 * following one another. A read or delete of a file whose upload is still running waits for it; a
 * failed upload fails the commit before its swap, as a failed write did.
 */
public final class WriteBehindFileIO implements FileIO {

  private final FileIO delegate;
  private final Executor uploads;
  private final Map<String, CompletableFuture<Void>> pending = new ConcurrentHashMap<>();

  /**
   * @param delegate the table's FileIO, which makes each upload
   * @param uploads where the uploads run
   */
  WriteBehindFileIO(FileIO delegate, Executor uploads) {
    this.delegate = delegate;
    this.uploads = uploads;
  }

  /**
   * Waits until every upload started through this FileIO has finished.
   *
   * @throws UncheckedIOException when one failed
   */
  public void awaitUploads() {
    List<CompletableFuture<Void>> running = new ArrayList<>(pending.values());
    RuntimeException failure = null;
    for (CompletableFuture<Void> upload : running) {
      try {
        upload.join();
      } catch (CompletionException e) {
        RuntimeException cause = e.getCause() instanceof RuntimeException runtime ? runtime : e;
        if (failure == null) {
          failure = cause;
        } else {
          failure.addSuppressed(cause);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Uploads started through this FileIO, running or done. */
  int uploads() {
    return pending.size();
  }

  private void awaitUpload(String path) {
    CompletableFuture<Void> upload = pending.get(path);
    if (upload != null) {
      upload.join();
    }
  }

  /** Whether the file at {@code location} is a manifest or manifest list, written behind. */
  private static boolean isWrittenBehind(String location) {
    RequestKind kind = RequestKind.ofRead(location, 0, 0, -1);
    return kind == RequestKind.MANIFEST || kind == RequestKind.MANIFEST_LIST;
  }

  @Override
  public OutputFile newOutputFile(String path) {
    OutputFile file = delegate.newOutputFile(path);
    return isWrittenBehind(path) ? new BehindOutputFile(file, path) : file;
  }

  @Override
  public InputFile newInputFile(String path) {
    awaitUpload(path);
    return delegate.newInputFile(path);
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    awaitUpload(path);
    return delegate.newInputFile(path, length);
  }

  @Override
  public InputFile newInputFile(DataFile file) {
    return delegate.newInputFile(file);
  }

  @Override
  public InputFile newInputFile(DeleteFile file) {
    return delegate.newInputFile(file);
  }

  @Override
  public InputFile newInputFile(ManifestFile manifest) {
    awaitUpload(manifest.path());
    return delegate.newInputFile(manifest);
  }

  @Override
  public InputFile newInputFile(ManifestListFile manifestList) {
    awaitUpload(manifestList.location());
    return delegate.newInputFile(manifestList);
  }

  @Override
  public void deleteFile(String path) {
    try {
      awaitUpload(path);
    } catch (CompletionException e) {
      // Nothing was uploaded, or something partly: delete what may be there.
    }
    delegate.deleteFile(path);
  }

  @Override
  public Map<String, String> properties() {
    return delegate.properties();
  }

  @Override
  public void close() {
    // The table's FileIO is not this commit's to close.
  }

  /** An output file whose stream's closing, the upload, runs behind. */
  private final class BehindOutputFile extends ForwardingOutputFile {
    BehindOutputFile(OutputFile file, String path) {
      super(file, path);
    }

    @Override
    PositionOutputStream wrap(PositionOutputStream stream) {
      return new BehindStream(stream, path);
    }

    @Override
    public InputFile toInputFile() {
      awaitUpload(path);
      return delegate.toInputFile();
    }
  }

  /**
   * The stream of a file written behind: bytes go to the store's stream as written (an object
   * store's stream keeps them until it is closed); its closing runs on the uploads' executor.
   */
  private final class BehindStream extends ForwardingPositionOutputStream {
    private final String path;
    private boolean closed;

    BehindStream(PositionOutputStream stream, String path) {
      super(stream);
      this.path = path;
    }

    @Override
    public long storedLength() throws IOException {
      // The length of what was written: the upload, still running, stores all of it.
      return delegate.getPos();
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      pending.put(
          path,
          CompletableFuture.runAsync(
              () -> {
                try {
                  delegate.close();
                } catch (IOException e) {
                  throw new UncheckedIOException("Failed to upload " + path, e);
                }
              },
              uploads));
    }
  }
}
