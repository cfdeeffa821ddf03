package io.floe.topology.iceberg;

import java.util.concurrent.atomic.LongAdder;

/**
 * Object-store requests and bytes counted as they happen, by kind and stage: those of the whole
 * process ({@link #process()}, behind the {@code floe.object.store.*} metrics), and those of one
 * unit of work such as a refresh, which opens its own tally for the threads working on it ({@link
 * #open()}). Thread-safe.
 */
public final class RequestTally {

  private static final int KINDS = RequestKind.values().length;
  private static final int STAGES = RequestStage.values().length;

  private static final RequestTally PROCESS = new RequestTally();

  private final LongAdder[] requests = adders(KINDS * STAGES);
  private final LongAdder[] bytesRead = adders(STAGES);
  private final LongAdder[] bytesWritten = adders(STAGES);

  /** The requests of every {@link CountingFileIO} of this process since it started. */
  public static RequestTally process() {
    return PROCESS;
  }

  /**
   * Adds the current thread's requests, and those of the tasks it hands to propagating executors
   * ({@link RequestStage#propagating}), to this tally too until the scope closes.
   */
  public RequestStage.Scope open() {
    return RequestStage.counting(this);
  }

  /** What this tally has counted so far. */
  public RequestCounts counts() {
    long[] kindsByStage = new long[KINDS * STAGES];
    long[] read = new long[STAGES];
    long[] written = new long[STAGES];
    for (int i = 0; i < kindsByStage.length; i++) {
      kindsByStage[i] = requests[i].sum();
    }
    for (int i = 0; i < STAGES; i++) {
      read[i] = bytesRead[i].sum();
      written[i] = bytesWritten[i].sum();
    }
    return new RequestCounts(kindsByStage, read, written);
  }

  /** Requests of {@code kind} in {@code stage}. */
  public long requests(RequestKind kind, RequestStage stage) {
    return requests[RequestCounts.index(kind, stage)].sum();
  }

  /** Bytes read in {@code stage}. */
  public long bytesRead(RequestStage stage) {
    return bytesRead[stage.ordinal()].sum();
  }

  /** Bytes written in {@code stage}. */
  public long bytesWritten(RequestStage stage) {
    return bytesWritten[stage.ordinal()].sum();
  }

  /** Counts a request of the current thread. */
  static void request(RequestKind kind) {
    int index = RequestCounts.index(kind, RequestStage.current());
    PROCESS.requests[index].increment();
    RequestTally tally = RequestStage.currentTally();
    if (tally != null) {
      tally.requests[index].increment();
    }
  }

  /** Counts bytes the current thread read. */
  static void read(long bytes) {
    RequestTally tally = RequestStage.currentTally();
    add(bytes, PROCESS.bytesRead, tally == null ? null : tally.bytesRead);
  }

  /** Counts bytes the current thread wrote. */
  static void written(long bytes) {
    RequestTally tally = RequestStage.currentTally();
    add(bytes, PROCESS.bytesWritten, tally == null ? null : tally.bytesWritten);
  }

  private static void add(long bytes, LongAdder[] process, LongAdder[] tally) {
    if (bytes <= 0) {
      return;
    }
    int stage = RequestStage.current().ordinal();
    process[stage].add(bytes);
    if (tally != null) {
      tally[stage].add(bytes);
    }
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] adders = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      adders[i] = new LongAdder();
    }
    return adders;
  }
}
