package io.floe.testing.workload;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;

/**
 * A market's trades: the source table of the tests, {@code floe demo} and {@code floe bench}, and a
 * seeded generator of plausible rows (a random walk per symbol). Timestamps the generator makes are
 * unique, so that {@code min_by}/{@code max_by} over them have one answer.
 */
public final class Trades {

  public static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.required(2, "symbol", Types.StringType.get()),
          Types.NestedField.optional(3, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(4, "price", Types.DoubleType.get()),
          Types.NestedField.optional(5, "quantity", Types.LongType.get()),
          Types.NestedField.optional(6, "side", Types.StringType.get()));

  /** Partitioned by the day of {@code ts}, as trade tables usually are. */
  public static final PartitionSpec BY_DAY = PartitionSpec.builderFor(SCHEMA).day("ts").build();

  private static final String[] SYMBOLS = {"AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"};

  private final Random random;
  private final double[] prices = {190.0, 410.0, 120.0, 180.0, 170.0, 250.0};
  private long nextId;
  private long sequence;

  public Trades(long seed) {
    this.random = new Random(seed);
    this.nextId = 1;
  }

  /** A trades row. */
  public static Record of(long id, String symbol, Instant ts, double price, long qty, String side) {
    GenericRecord record = GenericRecord.create(SCHEMA);
    record.setField("id", id);
    record.setField("symbol", symbol);
    record.setField("ts", ts == null ? null : OffsetDateTime.ofInstant(ts, ZoneOffset.UTC));
    record.setField("price", price);
    record.setField("quantity", qty);
    record.setField("side", side);
    return record;
  }

  /** One trade at about {@code at}: a random symbol, its next price, a random size and side. */
  public Record next(Instant at) {
    int s = random.nextInt(SYMBOLS.length);
    prices[s] = Math.max(1.0, prices[s] * (1 + random.nextGaussian() * 0.001));
    double price = Math.round(prices[s] * 100) / 100.0;
    // Unique timestamps: the millisecond of `at`, plus a per-generator sequence in microseconds.
    Instant ts = at.truncatedTo(ChronoUnit.MILLIS).plus(sequence++ % 1000, ChronoUnit.MICROS);
    return of(
        nextId++, SYMBOLS[s], ts, price, 1 + random.nextInt(500), random.nextBoolean() ? "B" : "S");
  }

  /** {@code count} trades spread evenly over {@code [from, to)}, in time order. */
  public List<Record> between(Instant from, Instant to, int count) {
    List<Record> records = new ArrayList<>(count);
    long span = Math.max(1, ChronoUnit.MICROS.between(from, to));
    for (int i = 0; i < count; i++) {
      records.add(next(from.plus(span * i / count, ChronoUnit.MICROS)));
    }
    return records;
  }

  /** A random choice among {@code values}, from this generator's seed. */
  public <T> T pick(List<T> values) {
    return values.get(random.nextInt(values.size()));
  }

  public Random random() {
    return random;
  }
}
