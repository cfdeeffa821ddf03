package io.floe.topology.iceberg;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Object-store requests by kind and stage, and bytes read and written by stage, as a {@link
 * RequestTally} counted them up to a point: what a refresh cost (its log line and refresh event).
 */
public final class RequestCounts {

  /** Nothing counted. */
  public static final RequestCounts NONE = new RequestTally().counts();

  /** Requests of one kind in one stage. */
  public record Entry(RequestStage stage, RequestKind kind, long count) {}

  private final long[] requests;
  private final long[] bytesRead;
  private final long[] bytesWritten;

  RequestCounts(long[] requests, long[] bytesRead, long[] bytesWritten) {
    this.requests = requests;
    this.bytesRead = bytesRead;
    this.bytesWritten = bytesWritten;
  }

  static int index(RequestKind kind, RequestStage stage) {
    return stage.ordinal() * RequestKind.values().length + kind.ordinal();
  }

  /** Requests of {@code kind} in {@code stage}. */
  public long count(RequestKind kind, RequestStage stage) {
    return requests[index(kind, stage)];
  }

  /** Requests in {@code stage}, of every kind. */
  public long count(RequestStage stage) {
    return Arrays.stream(RequestKind.values()).mapToLong(kind -> count(kind, stage)).sum();
  }

  /** Requests of {@code kind}, in every stage. */
  public long count(RequestKind kind) {
    return Arrays.stream(RequestStage.values()).mapToLong(stage -> count(kind, stage)).sum();
  }

  /** Every request counted. */
  public long total() {
    return Arrays.stream(requests).sum();
  }

  /** Bytes read from the store in {@code stage}. */
  public long bytesRead(RequestStage stage) {
    return bytesRead[stage.ordinal()];
  }

  /** Bytes written to the store in {@code stage}. */
  public long bytesWritten(RequestStage stage) {
    return bytesWritten[stage.ordinal()];
  }

  /** What was counted since {@code earlier}, counts of the same tally. */
  public RequestCounts minus(RequestCounts earlier) {
    return new RequestCounts(
        difference(requests, earlier.requests),
        difference(bytesRead, earlier.bytesRead),
        difference(bytesWritten, earlier.bytesWritten));
  }

  private static long[] difference(long[] later, long[] earlier) {
    long[] out = new long[later.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = later[i] - earlier[i];
    }
    return out;
  }

  /** Bytes read from the store, in every stage. */
  public long bytesRead() {
    return Arrays.stream(bytesRead).sum();
  }

  /** Bytes written to the store, in every stage. */
  public long bytesWritten() {
    return Arrays.stream(bytesWritten).sum();
  }

  /** The non-zero counts, by stage and then kind in their declared orders. */
  public List<Entry> entries() {
    List<Entry> entries = new ArrayList<>();
    for (RequestStage stage : RequestStage.values()) {
      for (RequestKind kind : RequestKind.values()) {
        long count = count(kind, stage);
        if (count > 0) {
          entries.add(new Entry(stage, kind, count));
        }
      }
    }
    return entries;
  }

  /**
   * For logs: {@code 14 (plan 5: table-metadata 2, manifest-list 1, head 1, manifest 1; read 2:
   * data-footer 2; ...)}.
   */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder().append(total());
    String stageSeparator = " (";
    for (RequestStage stage : RequestStage.values()) {
      long inStage = count(stage);
      if (inStage == 0) {
        continue;
      }
      out.append(stageSeparator).append(stage.label()).append(' ').append(inStage).append(':');
      String kindSeparator = " ";
      for (RequestKind kind : RequestKind.values()) {
        long count = count(kind, stage);
        if (count > 0) {
          out.append(kindSeparator).append(kind.label()).append(' ').append(count);
          kindSeparator = ", ";
        }
      }
      stageSeparator = "; ";
    }
    return total() == 0 ? out.toString() : out.append(')').toString();
  }
}
