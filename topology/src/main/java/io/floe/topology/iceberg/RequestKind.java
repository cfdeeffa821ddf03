package io.floe.topology.iceberg;

/**
 * What an object-store request {@link CountingFileIO} counts fetched or did: the kinds issue 21
 * budgets. A read of a file is one request from each position a stream is read at, until it is
 * moved elsewhere (a GET of a range, as S3, GCS and ADLS serve them); looking up a file's length or
 * existence is one more (a HEAD) unless the caller knew the length.
 */
public enum RequestKind {
  /** A table metadata file ({@code *.metadata.json}, a Hadoop table's version hint). */
  TABLE_METADATA("table-metadata"),
  /** A snapshot's manifest list ({@code snap-*.avro}). */
  MANIFEST_LIST("manifest-list"),
  /** A manifest ({@code *.avro} under a table's metadata directory). */
  MANIFEST("manifest"),
  /**
   * The footer of a data or delete file: a read that reaches the footer's end, {@value #TAIL} bytes
   * before the file's.
   */
  DATA_FOOTER("data-footer"),
  /** Any other range of a data or delete file: column chunks, pages. */
  DATA_RANGE("data-range"),
  /** A file's length or existence looked up (a HEAD). */
  HEAD("head"),
  /** A file written (a PUT; a large one may be uploaded in parts). */
  PUT("put"),
  /** A file deleted. */
  DELETE("delete"),
  /** A read of any other file, such as statistics files. */
  OTHER("other");

  /** Bytes at the end of a Parquet file after its footer: the footer's length and magic. */
  static final int TAIL = 8;

  private final String label;

  RequestKind(String label) {
    this.label = label;
  }

  /** The name in metrics, logs and refresh events. */
  public String label() {
    return label;
  }

  /**
   * The kind of a read of {@code location} over {@code [position, end)}.
   *
   * @param length the file's length, or -1 when it is not known (then no read is a footer read)
   */
  static RequestKind ofRead(String location, long position, long end, long length) {
    String name = location.substring(location.lastIndexOf('/') + 1);
    if (name.endsWith(".metadata.json")
        || name.endsWith(".metadata.json.gz")
        || name.equals("version-hint.text")) {
      return TABLE_METADATA;
    }
    if (name.endsWith(".avro") && name.startsWith("snap-")) {
      return MANIFEST_LIST;
    }
    if (name.endsWith(".avro") && location.contains("/metadata/")) {
      return MANIFEST;
    }
    if (name.endsWith(".stats") || name.endsWith(".puffin")) {
      return OTHER;
    }
    return length >= 0 && end >= length - TAIL ? DATA_FOOTER : DATA_RANGE;
  }
}
