package io.floe.dev.demo;

import io.floe.dev.EmbeddedStack;
import io.floe.testing.workload.TableWrites;
import io.floe.topology.view.TableName;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;

/**
 * The demo's dimension table, {@code lake.ref.symbols}: the sector of each symbol the market
 * trades. Now and then one symbol moves to another sector, a copy-on-write overwrite of its row, as
 * a reference-data correction does; the views that join the table follow it (DESIGN §3.10).
 */
final class Symbols {

  static final TableName NAME = TableName.parse("lake.ref.symbols");

  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.optional(1, "symbol", Types.StringType.get()),
          Types.NestedField.optional(2, "sector", Types.StringType.get()));

  // Every symbol the demo's trades carry (io.floe.testing.workload.Trades), so that the join drops
  // none of them.
  private static final Map<String, String> FIRST_SECTORS = new LinkedHashMap<>();

  static {
    FIRST_SECTORS.put("AAPL", "hardware");
    FIRST_SECTORS.put("MSFT", "software");
    FIRST_SECTORS.put("NVDA", "semiconductors");
    FIRST_SECTORS.put("AMZN", "retail");
    FIRST_SECTORS.put("GOOG", "advertising");
    FIRST_SECTORS.put("TSLA", "automotive");
  }

  private final Table table;
  private final Map<String, String> sectors = new LinkedHashMap<>(FIRST_SECTORS);
  private final Random random = new Random(7);

  private Symbols(Table table) {
    this.table = table;
  }

  /** Creates the table in {@code catalog}. */
  static Symbols create(Catalog catalog) {
    EmbeddedStack.createNamespaces(catalog, NAME.identifier().namespace());
    return new Symbols(
        catalog
            .buildTable(NAME.identifier(), SCHEMA)
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty("format-version", "2")
            .create());
  }

  Table table() {
    return table;
  }

  /** Loads the sector of every symbol, in one append. */
  Market.Commit seed() {
    List<Record> rows = new ArrayList<>();
    sectors.forEach((symbol, sector) -> rows.add(row(symbol, sector)));
    return new Market.Commit(
        "seed", rows.size() + " symbols with their sectors", TableWrites.append(table, rows));
  }

  /** Moves one symbol to another sector that some other symbol is in. */
  Market.Commit correct() {
    List<String> symbols = new ArrayList<>(sectors.keySet());
    String symbol = symbols.get(random.nextInt(symbols.size()));
    String was = sectors.get(symbol);
    List<String> others =
        FIRST_SECTORS.values().stream().filter(s -> !s.equals(was)).distinct().toList();
    String now = others.get(random.nextInt(others.size()));
    long snapshot =
        TableWrites.overwrite(
            table, r -> symbol.equals(r.getField("symbol")), List.of(row(symbol, now)));
    sectors.put(symbol, now);
    return new Market.Commit(
        "sector", symbol + " moved from " + was + " to " + now + " (copy-on-write)", snapshot);
  }

  private static Record row(String symbol, String sector) {
    GenericRecord record = GenericRecord.create(SCHEMA);
    record.setField("symbol", symbol);
    record.setField("sector", sector);
    return record;
  }
}
