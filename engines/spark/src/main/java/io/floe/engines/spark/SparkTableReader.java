package io.floe.engines.spark;

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
import java.time.temporal.ChronoUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Reads every row of one Iceberg table of a JDBC catalog through Spark SQL and writes them, one
 * line per row, tab-separated, in the normalized form the Floe tests compare: integers as plain
 * decimals, doubles as Java prints them, timestamps as {@code ts:<epoch micros>}, dates as {@code
 * date:<epoch day>}, nulls as {@code null}.
 *
 * <p>Arguments: the catalog's JDBC URI, its warehouse, an output directory, then the tables ({@code
 * namespace.table}); each table's rows go to {@code <output directory>/<namespace.table>.tsv}.
 */
public final class SparkTableReader {

  private SparkTableReader() {}

  public static void main(String[] args) throws IOException {
    String uri = args[0];
    String warehouse = args[1];
    Path out = Path.of(args[2]);
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("floe-engine-check")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.datetime.java8API.enabled", "true")
            .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.lake.type", "jdbc")
            .config("spark.sql.catalog.lake.uri", uri)
            .config("spark.sql.catalog.lake.warehouse", warehouse)
            .config("spark.sql.catalog.lake.jdbc.schema-version", "V1")
            .getOrCreate();
    try {
      for (int t = 3; t < args.length; t++) {
        write(spark, args[t], out.resolve(args[t] + ".tsv"));
      }
    } finally {
      spark.stop();
    }
  }

  private static void write(SparkSession spark, String table, Path file) throws IOException {
    try (PrintWriter writer =
        new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
      for (Row row : spark.sql("SELECT * FROM lake." + table).collectAsList()) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < row.size(); i++) {
          if (i > 0) {
            line.append('\t');
          }
          line.append(normalize(row.get(i)));
        }
        writer.println(line);
      }
    }
  }

  private static String normalize(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof Instant t) {
      return "ts:" + ChronoUnit.MICROS.between(Instant.EPOCH, t);
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
