package io.floe.testing;

import io.floe.testing.oracle.Oracle;
import io.floe.testing.workload.TableWrites;
import io.floe.testing.workload.Trades;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;

/**
 * A real Iceberg catalog for tests: JDBC on a SQLite file with a local warehouse, plus the writes a
 * source table sees in production (appends, overwrites, position and equality deletes,
 * compactions), each its own snapshot.
 */
public final class IcebergFixture implements AutoCloseable {

  /** The trades table most tests use. */
  public static final Schema TRADES = Trades.SCHEMA;

  private final Catalog catalog;
  private final Map<String, String> properties;
  private long nextId = 1;

  private IcebergFixture(Catalog catalog, Map<String, String> properties) {
    this.catalog = catalog;
    this.properties = properties;
  }

  /** A catalog named {@code lake} built from Iceberg catalog properties (any type). */
  public static IcebergFixture create(Map<String, String> properties) {
    return new IcebergFixture(
        CatalogUtil.buildIcebergCatalog("lake", properties, new Configuration()),
        Map.copyOf(properties));
  }

  /** A fresh catalog named {@code lake} in {@code dir}. */
  public static IcebergFixture create(Path dir) {
    Map<String, String> properties = new HashMap<>();
    properties.put("type", "jdbc");
    properties.put("uri", "jdbc:sqlite:" + dir.resolve("catalog.db"));
    properties.put("warehouse", dir.resolve("warehouse").toUri().toString());
    properties.put("jdbc.schema-version", "V1");
    return new IcebergFixture(
        CatalogUtil.buildIcebergCatalog("lake", properties, new Configuration()), properties);
  }

  public Catalog catalog() {
    return catalog;
  }

  /** The Iceberg catalog properties, for configuring Floe against the same catalog. */
  public Map<String, String> catalogProperties() {
    return properties;
  }

  /** Creates {@code namespace.name} with the given schema and spec. */
  public Table createTable(String namespace, String name, Schema schema, PartitionSpec spec) {
    if (catalog instanceof SupportsNamespaces namespaces
        && !namespaces.namespaceExists(Namespace.of(namespace))) {
      namespaces.createNamespace(Namespace.of(namespace));
    }
    return catalog.createTable(
        TableIdentifier.of(namespace, name), schema, spec, Map.of("format-version", "2"));
  }

  /** Creates the trades table, partitioned by day of {@code ts}. */
  public Table createTrades(String namespace, String name) {
    return createTable(namespace, name, TRADES, PartitionSpec.builderFor(TRADES).day("ts").build());
  }

  public Table load(String namespace, String name) {
    return catalog.loadTable(TableIdentifier.of(namespace, name));
  }

  /** A trades row with a fresh id. */
  /**
   * {@code n} trades of AAPL, MSFT, IBM and ORCL at random times of {@code day} (an ISO date)
   * between {@code hourFrom} and {@code hourTo} (UTC), with random prices, quantities and sides;
   * the same {@code random} gives the same trades.
   */
  public List<Record> randomTrades(Random random, int n, String day, int hourFrom, int hourTo) {
    List<Record> rows = new ArrayList<>();
    String[] symbols = {"AAPL", "MSFT", "IBM", "ORCL"};
    for (int i = 0; i < n; i++) {
      int hour = hourFrom + random.nextInt(hourTo - hourFrom);
      String ts =
          String.format(
              "%sT%02d:%02d:%02d.%06dZ",
              day, hour, random.nextInt(60), random.nextInt(60), random.nextInt(1_000_000));
      rows.add(
          trade(
              symbols[random.nextInt(symbols.length)],
              ts,
              Math.round(random.nextDouble() * 20000) / 100.0,
              (long) random.nextInt(100),
              random.nextBoolean() ? "B" : "S"));
    }
    return rows;
  }

  public Record trade(String symbol, String ts, Double price, Long quantity, String side) {
    GenericRecord record = GenericRecord.create(TRADES);
    record.setField("id", nextId++);
    record.setField("symbol", symbol);
    record.setField(
        "ts", ts == null ? null : OffsetDateTime.ofInstant(Instant.parse(ts), ZoneOffset.UTC));
    record.setField("price", price);
    record.setField("quantity", quantity);
    record.setField("side", side);
    return record;
  }

  /** Appends the records as new data files (one per partition), one snapshot. */
  public long append(Table table, List<Record> records) {
    return TableWrites.append(table, records);
  }

  /** Appends each record as its own data file, one snapshot: many small files. */
  public long appendFilePerRow(Table table, List<Record> records) {
    return TableWrites.appendFilePerRow(table, records);
  }

  /** See {@link TableWrites#overwrite}. */
  public long overwrite(Table table, Predicate<Record> removed, List<Record> replacements) {
    return TableWrites.overwrite(table, removed, replacements);
  }

  /** See {@link TableWrites#deleteFiles}. */
  public long deleteFiles(Table table, Predicate<Record> allRowsMatch) {
    return TableWrites.deleteFiles(table, allRowsMatch);
  }

  /** See {@link TableWrites#deleteByPosition}. */
  public long deleteByPosition(Table table, Predicate<Record> removed) {
    return TableWrites.deleteByPosition(table, removed);
  }

  /** See {@link TableWrites#deleteByEquality}. */
  public long deleteByEquality(Table table, List<Long> ids) {
    return TableWrites.deleteByEquality(table, ids);
  }

  /** See {@link TableWrites#compact}. */
  public long compact(Table table) {
    return TableWrites.compact(table);
  }

  /** Every live row of a snapshot, deletes applied. */
  public static List<Record> readAll(Table table, long snapshotId) {
    return Oracle.rows(table, snapshotId);
  }

  /** Writes records into data files, one per partition. */
  public static List<DataFile> write(Table table, List<Record> records) {
    return TableWrites.write(table, records);
  }

  @Override
  public void close() throws Exception {
    if (catalog instanceof AutoCloseable closeable) {
      closeable.close();
    }
  }
}
