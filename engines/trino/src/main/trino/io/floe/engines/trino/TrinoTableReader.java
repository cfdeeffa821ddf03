package io.floe.engines.trino;

import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.testing.TestingSession.testSessionBuilder;

import io.trino.Session;
import io.trino.plugin.iceberg.IcebergPlugin;
import io.trino.testing.MaterializedRow;
import io.trino.testing.StandaloneQueryRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * Reads every row of Iceberg tables of a JDBC catalog through a real Trino (a standalone query
 * runner: a coordinator that is its own worker, with the Iceberg connector over the same catalog
 * and Trino's local file system) and writes them, one line per row, tab-separated, in the
 * normalized form the Floe tests compare: integers as plain decimals, doubles as Java prints them,
 * timestamps as {@code ts:<epoch micros>}, dates as {@code date:<epoch day>}, nulls as {@code
 * null}.
 *
 * <p>Trino needs Java 25 and the build runs on Java 17, so nothing compiles this file ahead of
 * time: the test runs it with a Java 25 launcher ({@code java -cp <Trino's classpath>
 * TrinoTableReader.java ...}).
 *
 * <p>Arguments: the catalog's JDBC URI, its warehouse, an output directory, then the tables ({@code
 * namespace.table}); each table's rows go to {@code <output directory>/<namespace.table>.tsv}.
 */
public final class TrinoTableReader {

  private TrinoTableReader() {}

  public static void main(String[] args) throws IOException {
    String uri = args[0];
    String warehouse = args[1];
    Path out = Path.of(args[2]);
    Session session = testSessionBuilder().setCatalog("lake").setTimeZoneKey(UTC_KEY).build();
    try (StandaloneQueryRunner trino = new StandaloneQueryRunner(session)) {
      trino.installPlugin(new IcebergPlugin());
      trino.createCatalog(
          "lake",
          "iceberg",
          Map.of(
              "iceberg.catalog.type", "jdbc",
              "iceberg.jdbc-catalog.driver-class", "org.sqlite.JDBC",
              "iceberg.jdbc-catalog.connection-url", uri,
              "iceberg.jdbc-catalog.catalog-name", "lake",
              "iceberg.jdbc-catalog.default-warehouse-dir", warehouse,
              "iceberg.jdbc-catalog.schema-version", "V1",
              "fs.local.enabled", "true",
              "local.location", "/"));
      for (int t = 3; t < args.length; t++) {
        write(trino, session, args[t], out.resolve(args[t] + ".tsv"));
        writeFreshness(trino, session, args[t], out.resolve(args[t] + ".freshness"));
      }
    }
  }

  private static void write(StandaloneQueryRunner trino, Session session, String table, Path file)
      throws IOException {
    try (PrintWriter writer =
        new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
      for (MaterializedRow row :
          trino.execute(session, "SELECT * FROM " + table).toTestTypes().getMaterializedRows()) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < row.getFieldCount(); i++) {
          if (i > 0) {
            line.append('\t');
          }
          line.append(normalize(row.getField(i)));
        }
        writer.println(line);
      }
    }
  }

  /**
   * What Trino's Iceberg connector reads to judge the freshness of a materialized view's storage
   * table, through Trino's own metadata tables: the {@code dependsOnTables} and {@code
   * trino-query-start-time} entries of the summary of the table's current snapshot, and, for each
   * {@code schema.table=<snapshot id>} dependency, whether the table Trino finds under that name is
   * still at that snapshot ({@code current} or {@code changed}), as the connector checks it.
   * Written as lines of a key and its value, tab-separated.
   */
  private static void writeFreshness(
      StandaloneQueryRunner trino, Session session, String table, Path file) throws IOException {
    String[] name = table.split("\\.", 2);
    String metadata = "\"" + name[0] + "\".\"" + name[1] + "$%s\"";
    MaterializedRow summary =
        trino
            .execute(
                session,
                "SELECT element_at(s.summary, 'dependsOnTables'),"
                    + " element_at(s.summary, 'trino-query-start-time')"
                    + " FROM "
                    + metadata.formatted("snapshots")
                    + " s JOIN "
                    + metadata.formatted("refs")
                    + " r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'")
            .getMaterializedRows()
            .getFirst();
    try (PrintWriter writer =
        new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
      String dependsOnTables = (String) summary.getField(0);
      writer.println("dependsOnTables\t" + dependsOnTables);
      writer.println("trino-query-start-time\t" + summary.getField(1));
      if (dependsOnTables == null) {
        return;
      }
      for (String dependency : dependsOnTables.split(",")) {
        int at = dependency.lastIndexOf('=');
        if (at < 0) {
          writer.println(dependency + "\tunknown");
          continue;
        }
        String[] source = dependency.substring(0, at).split("\\.", 2);
        Object current =
            trino
                .execute(
                    session,
                    "SELECT snapshot_id FROM \""
                        + source[0]
                        + "\".\""
                        + source[1]
                        + "$refs\" WHERE name = 'main'")
                .getOnlyValue();
        boolean same = String.valueOf(current).equals(dependency.substring(at + 1));
        writer.println(dependency + "\t" + (same ? "current" : "changed"));
      }
    }
  }

  private static String normalize(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof ZonedDateTime t) {
      return "ts:" + ChronoUnit.MICROS.between(Instant.EPOCH, t.toInstant());
    }
    if (value instanceof LocalDateTime t) {
      return "ts:" + ChronoUnit.MICROS.between(Instant.EPOCH, t.toInstant(ZoneOffset.UTC));
    }
    if (value instanceof LocalDate d) {
      return "date:" + d.toEpochDay();
    }
    if (value instanceof Float f) {
      return Double.toString(f.doubleValue());
    }
    if (value instanceof Double d) {
      return Double.toString(d);
    }
    if (value instanceof BigDecimal d) {
      return d.stripTrailingZeros().toPlainString();
    }
    if (value instanceof Number n) {
      return Long.toString(n.longValue());
    }
    return value.toString();
  }
}
