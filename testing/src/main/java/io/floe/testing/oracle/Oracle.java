package io.floe.testing.oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.DeleteFilter;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.ByteBuffers;
import org.apache.iceberg.util.PartitionUtil;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The oracle of DESIGN §3.8: a view evaluated from scratch on every row of a source snapshot, by a
 * deliberately separate code path. Rows come from Iceberg's own generic reader (deletes applied)
 * and the query runs in DuckDB, an engine that shares nothing with Floe's evaluator. The tests
 * check every view against it, and {@code floe demo --verify} checks the demo's views.
 *
 * <p>Only UTC views are supported, and functions whose Floe result is a documented deterministic
 * choice are mapped to DuckDB's exact equivalents ({@code arbitrary} to {@code min}, {@code
 * approx_distinct} to {@code count(DISTINCT ...)}, {@code approx_percentile(x, p)} to the
 * nearest-rank {@code quantile_disc}); the weighted {@code approx_percentile} has no equivalent.
 * Where DuckDB's spelling of the same SQL means something else, the query says Trino's meaning in
 * DuckDB's words: {@code count_if} as {@code count(*) FILTER (WHERE ...)}, {@code min_by} and
 * {@code max_by} as {@code arg_min_null} and {@code arg_max_null} (which keep a null value), a
 * timestamp literal of nanoseconds as {@code TIMESTAMP_NS}, {@code date_trunc} of a date cast back
 * to a date, {@code date_bin} as {@code time_bucket} from the Unix epoch (or the query's origin),
 * and {@code minute(ts) / N} of Trino's n-minute idiom as the integer division {@code //}. DuckDB's
 * {@code greatest} and {@code least} skip nulls (Trino's are null), and it rounds a {@code
 * TIMESTAMP_NS} to microseconds before adding an interval: views the oracle checks avoid both.
 * Callers keep {@code min_by}/{@code max_by} keys unique, where DuckDB's tie-breaking is arbitrary.
 *
 * <p>The oracle shares no code with Floe, its SQL front end included: callers say under which name
 * the view query reads its source ({@code sourceName}, as the query spells it), and the query runs
 * in DuckDB over that table's rows in its place.
 */
public final class Oracle {

  private Oracle() {}

  /**
   * The rows the view must hold for source snapshot {@code snapshotId}, normalized.
   *
   * @param source the table the view reads
   * @param sourceName the name under which {@code viewQuery} reads it ({@code lake.market.trades})
   */
  public static List<List<Object>> expected(
      Table source, String sourceName, long snapshotId, String viewQuery) {
    return expected(new Source(source, sourceName, snapshotId), List.of(), viewQuery);
  }

  /**
   * A table a view query reads, at one snapshot.
   *
   * @param name the name under which the query reads it ({@code lake.ref.symbols})
   */
  public record Source(Table table, String name, long snapshotId) {}

  /**
   * The rows a view that joins its source (the fact table) to dimension tables must hold for the
   * given snapshots of each, normalized: every table's live rows are loaded into DuckDB, which
   * evaluates the query's joins as SQL defines them (a null key matches nothing, a LEFT join's
   * unmatched row gets nulls, a key held by several dimension rows joins each of them).
   *
   * @param fact the table whose column the view buckets
   * @param dimensions the tables the query joins to it
   */
  public static List<List<Object>> expected(
      Source fact, List<Source> dimensions, String viewQuery) {
    Schema schema = schemaOf(fact.table(), fact.snapshotId());
    String query = viewQuery;
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
      try (Statement s = duck.createStatement()) {
        s.execute("SET TimeZone = 'UTC'");
      }
      load(duck, "src", fact.table(), fact.snapshotId());
      for (int d = 0; d < dimensions.size(); d++) {
        Source dimension = dimensions.get(d);
        load(duck, "dim" + d, dimension.table(), dimension.snapshotId());
        query = query.replaceAll("(?i)" + Pattern.quote(dimension.name()) + "\\b", "dim" + d);
      }
      List<List<Object>> result = new ArrayList<>();
      try (Statement s = duck.createStatement();
          ResultSet rs = s.executeQuery(forDuckDb(query, fact.name(), schema))) {
        int width = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          List<Object> row = new ArrayList<>(width);
          for (int i = 1; i <= width; i++) {
            row.add(normalize(rs.getObject(i)));
          }
          result.add(row);
        }
      }
      return sorted(result);
    } catch (SQLException e) {
      throw new IllegalStateException("Oracle failed for " + viewQuery + ": " + e.getMessage(), e);
    }
  }

  /** Creates DuckDB table {@code name} holding every live row of a snapshot of {@code table}. */
  private static void load(Connection duck, String name, Table table, long snapshotId)
      throws SQLException {
    Schema schema = schemaOf(table, snapshotId);
    try (Statement s = duck.createStatement()) {
      s.execute("CREATE TABLE " + name + " (" + columns(schema) + ")");
    }
    try (DuckDBAppender appender =
        duck.unwrap(DuckDBConnection.class).createAppender(DuckDBConnection.DEFAULT_SCHEMA, name)) {
      for (Record row : rows(table, snapshotId)) {
        appender.beginRow();
        for (Types.NestedField column : schema.columns()) {
          append(appender, toDuck(row.getField(column.name())));
        }
        appender.endRow();
      }
    }
  }

  /** The rows a view's target holds at its current snapshot, normalized. */
  public static List<List<Object>> actual(Table target) {
    target.refresh();
    if (target.currentSnapshot() == null) {
      return List.of();
    }
    List<List<Object>> result = new ArrayList<>();
    for (Record record : rows(target, target.currentSnapshot().snapshotId())) {
      List<Object> row = new ArrayList<>();
      for (int i = 0; i < record.size(); i++) {
        row.add(normalize(record.get(i)));
      }
      result.add(row);
    }
    return sorted(result);
  }

  /**
   * How the target differs from the view evaluated from scratch on the source snapshot, or empty
   * when it holds exactly the expected rows.
   *
   * @param sourceName the name under which {@code viewQuery} reads {@code source}
   */
  public static Optional<String> difference(
      Table target, Table source, String sourceName, long snapshotId, String viewQuery) {
    return difference(
        "view " + target.name(),
        snapshotId,
        expected(source, sourceName, snapshotId, viewQuery),
        actual(target));
  }

  /**
   * How {@code actual} differs from {@code expected}, both normalized and sorted ({@link
   * #normalized}), or empty when they hold the same rows; {@code what} names the rows in the
   * message.
   */
  public static Optional<String> difference(
      String what, long snapshotId, List<List<Object>> expected, List<List<Object>> actual) {
    if (equal(expected, actual)) {
      return Optional.empty();
    }
    List<List<Object>> missing = new ArrayList<>();
    for (List<Object> row : expected) {
      if (actual.stream().noneMatch(a -> sameRow(row, a))) {
        missing.add(row);
      }
    }
    List<List<Object>> unexpected = new ArrayList<>();
    for (List<Object> row : actual) {
      if (expected.stream().noneMatch(e -> sameRow(e, row))) {
        unexpected.add(row);
      }
    }
    return Optional.of(
        String.format(
            "%s differs from the oracle at source snapshot %d: expected %d rows, found %d;"
                + " missing %s; unexpected %s",
            what,
            snapshotId,
            expected.size(),
            actual.size(),
            abbreviate(missing),
            abbreviate(unexpected)));
  }

  /**
   * Rows of generic record values (what Iceberg's generic reader gives for a view's output schema),
   * normalized and sorted as {@link #expected} returns its rows.
   */
  public static List<List<Object>> normalized(List<List<Object>> rows) {
    List<List<Object>> result = new ArrayList<>(rows.size());
    for (List<Object> row : rows) {
      List<Object> normalized = new ArrayList<>(row.size());
      row.forEach(value -> normalized.add(normalize(value)));
      result.add(normalized);
    }
    return sorted(result);
  }

  private static String abbreviate(List<List<Object>> rows) {
    return rows.size() <= 10
        ? rows.toString()
        : rows.subList(0, 10) + " and " + (rows.size() - 10) + " more";
  }

  /**
   * The schema a snapshot is read with, as an engine reads the table: the current snapshot under
   * the table's current schema (a schema change creates no snapshot: a column dropped and added
   * again reads null at once), an older one under its own.
   */
  private static Schema schemaOf(Table table, long snapshotId) {
    Snapshot current = table.currentSnapshot();
    if (current != null && current.snapshotId() == snapshotId) {
      return table.schema();
    }
    Integer id = table.snapshot(snapshotId).schemaId();
    Schema schema = id == null ? null : table.schemas().get(id);
    return schema == null ? table.schema() : schema;
  }

  /**
   * Every live row of a snapshot, deletes applied, by Iceberg's generic reader, under the schema
   * the snapshot is read with ({@link #schemaOf}); files without field ids are read through the
   * table's name mapping when it has one, as Trino and Spark read them.
   */
  public static List<Record> rows(Table table, long snapshotId) {
    String mapping = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    if (mapping != null) {
      return mappedRows(table, snapshotId, NameMappingParser.fromJson(mapping));
    }
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table)
            .useSnapshot(snapshotId)
            .project(schemaOf(table, snapshotId))
            .build()) {
      records.forEach(r -> rows.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  /**
   * {@link #rows} through a name mapping: {@code IcebergGenerics} applies none, so each planned
   * file is read with Iceberg's generic Parquet (or Avro, ORC) reader given the mapping.
   */
  private static List<Record> mappedRows(Table table, long snapshotId, NameMapping mapping) {
    Schema schema = schemaOf(table, snapshotId);
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask task : tasks) {
        DeleteFilter<Record> deletes = new GenericDeleteFilter(table.io(), task, schema, schema);
        try (CloseableIterable<Record> records =
            deletes.filter(
                FormatModelRegistry.<Record, Object>readBuilder(
                        task.file().format(), Record.class, table.io().newInputFile(task.file()))
                    .project(deletes.requiredSchema())
                    .idToConstant(
                        PartitionUtil.constantsMap(
                            task, IdentityPartitionConverters::convertConstant))
                    .withNameMapping(mapping)
                    .build())) {
          for (Record record : records) {
            Record row = GenericRecord.create(schema);
            for (Types.NestedField column : schema.columns()) {
              row.setField(column.name(), record.getField(column.name()));
            }
            rows.add(row);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  private static boolean equal(List<List<Object>> expected, List<List<Object>> actual) {
    if (expected.size() != actual.size()) {
      return false;
    }
    for (int r = 0; r < expected.size(); r++) {
      if (!sameRow(expected.get(r), actual.get(r))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameRow(List<Object> e, List<Object> a) {
    if (e.size() != a.size()) {
      return false;
    }
    for (int c = 0; c < e.size(); c++) {
      if (!same(e.get(c), a.get(c))) {
        return false;
      }
    }
    return true;
  }

  private static boolean same(Object e, Object a) {
    if (e == null || a == null) {
      return e == a;
    }
    if (e instanceof Double x && a instanceof Double y) {
      if (Double.isNaN(x) || Double.isInfinite(x) || Double.isNaN(y) || Double.isInfinite(y)) {
        // Trino's IEEE results (DESIGN §3.9): an infinity or NaN is only ever equal to itself.
        return x.equals(y);
      }
      return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.max(Math.abs(x), Math.abs(y)));
    }
    if (e instanceof BigDecimal x && a instanceof BigDecimal y) {
      return x.compareTo(y) == 0;
    }
    return e.equals(a);
  }

  private static List<List<Object>> sorted(List<List<Object>> rows) {
    // Each row's key once, not once per comparison: views of a hundred thousand rows sort in
    // well under a second.
    List<Map.Entry<String, List<Object>>> keyed = new ArrayList<>(rows.size());
    for (List<Object> row : rows) {
      keyed.add(Map.entry(sortKey(row), row));
    }
    keyed.sort(Map.Entry.comparingByKey());
    rows.clear();
    keyed.forEach(entry -> rows.add(entry.getValue()));
    return rows;
  }

  private static String sortKey(List<Object> row) {
    StringBuilder key = new StringBuilder();
    for (Object value : row) {
      // Doubles are rounded so that last-bit differences do not change the order.
      Object v = value instanceof Double d ? String.format("%.6e", d) : value;
      key.append(v).append('\u0001');
    }
    return key.toString();
  }

  /**
   * Numbers as BigDecimal (integers) or Double, timestamps as epoch micros (with any nanoseconds
   * below them), dates as epoch days, times as {@code LocalTime}, binary values in hex.
   */
  public static Object normalize(Object value) {
    if (value == null) {
      return null;
    }
    if (value instanceof Float f) {
      return f.doubleValue();
    }
    if (value instanceof Double) {
      return value;
    }
    if (value instanceof BigDecimal d) {
      return d.stripTrailingZeros();
    }
    if (value instanceof BigInteger i) {
      return new BigDecimal(i);
    }
    if (value instanceof Long
        || value instanceof Integer
        || value instanceof Short
        || value instanceof Byte) {
      return BigDecimal.valueOf(((Number) value).longValue());
    }
    if (value instanceof OffsetDateTime t) {
      return timestamp(t.toInstant());
    }
    if (value instanceof LocalDateTime t) {
      return timestamp(t.toInstant(ZoneOffset.UTC));
    }
    if (value instanceof java.sql.Timestamp t) {
      return timestamp(t.toLocalDateTime().toInstant(ZoneOffset.UTC));
    }
    if (value instanceof LocalDate d) {
      return "date:" + d.toEpochDay();
    }
    if (value instanceof java.sql.Date d) {
      return "date:" + d.toLocalDate().toEpochDay();
    }
    if (value instanceof CharSequence s) {
      return s.toString();
    }
    if (value instanceof ByteBuffer b) {
      return "bytes:" + HexFormat.of().formatHex(ByteBuffers.toByteArray(b));
    }
    if (value instanceof byte[] b) {
      return "bytes:" + HexFormat.of().formatHex(b);
    }
    if (value instanceof java.sql.Blob b) {
      try {
        return "bytes:" + HexFormat.of().formatHex(b.getBytes(1, (int) b.length()));
      } catch (SQLException e) {
        throw new IllegalStateException("Cannot read a blob of the oracle's result", e);
      }
    }
    return value;
  }

  /**
   * Epoch microseconds, and the nanoseconds below them when there are any ({@code timestamp_ns}),
   * so that values a nanosecond apart differ and microsecond values read as before.
   */
  private static String timestamp(Instant instant) {
    long micros =
        Math.addExact(
            Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
    int belowMicros = instant.getNano() % 1000;
    return belowMicros == 0
        ? "ts:" + micros
        : "ts:" + micros + "." + String.format("%03d", belowMicros);
  }

  private static void append(DuckDBAppender appender, Object value) throws SQLException {
    if (value == null) {
      appender.appendNull();
    } else if (value instanceof Boolean v) {
      appender.append(v.booleanValue());
    } else if (value instanceof Integer v) {
      appender.append(v.intValue());
    } else if (value instanceof Long v) {
      appender.append(v.longValue());
    } else if (value instanceof Float v) {
      appender.append(v.floatValue());
    } else if (value instanceof Double v) {
      appender.append(v.doubleValue());
    } else if (value instanceof BigDecimal v) {
      appender.append(v);
    } else if (value instanceof CharSequence v) {
      appender.append(v.toString());
    } else if (value instanceof LocalDate v) {
      appender.append(v);
    } else if (value instanceof LocalDateTime v) {
      appender.append(v);
    } else if (value instanceof LocalTime v) {
      appender.append(v);
    } else if (value instanceof byte[] v) {
      appender.append(v);
    } else {
      throw new IllegalArgumentException("oracle cannot hold " + value.getClass());
    }
  }

  private static Object toDuck(Object value) {
    if (value instanceof OffsetDateTime t) {
      return t.withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime();
    }
    if (value instanceof ByteBuffer b) {
      return ByteBuffers.toByteArray(b);
    }
    return value;
  }

  private static String columns(Schema schema) {
    List<String> columns = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      String type =
          switch (field.type().typeId()) {
            case BOOLEAN -> "BOOLEAN";
            case INTEGER -> "INTEGER";
            case LONG -> "BIGINT";
            case FLOAT -> "REAL";
            case DOUBLE -> "DOUBLE";
            case DATE -> "DATE";
            case TIME -> "TIME";
            case BINARY, FIXED -> "BLOB";
            // Timestamps with time zone are appended as UTC wall-clock time (the session is UTC).
            case TIMESTAMP -> "TIMESTAMP";
            case TIMESTAMP_NANO -> "TIMESTAMP_NS";
            case STRING -> "VARCHAR";
            case DECIMAL -> {
              Types.DecimalType d = (Types.DecimalType) field.type();
              yield "DECIMAL(" + d.precision() + ", " + d.scale() + ")";
            }
            default -> throw new IllegalArgumentException("oracle cannot hold " + field.type());
          };
      columns.add("\"" + field.name() + "\" " + type);
    }
    return String.join(", ", columns);
  }

  /**
   * The view query in DuckDB's dialect, reading the table {@code src} where it read {@code
   * sourceName}, with the columns of {@code schema}. DuckDB's {@code date_trunc} of a date is a
   * timestamp, Trino's a date: it is cast back. DuckDB rounds a {@code TIMESTAMP_NS} to
   * microseconds when {@code date_trunc} casts it (10:00:59.999999999 lands in minute 10:01), where
   * Trino truncates: the buckets of nanosecond columns are cut from the value floored to
   * microseconds, which is exact for minute and longer buckets.
   */
  public static String forDuckDb(String viewQuery, String sourceName, Schema schema) {
    String sql = forDuckDb(viewQuery, sourceName);
    for (Types.NestedField field : schema.columns()) {
      if (field.type().typeId() == Type.TypeID.DATE) {
        // DuckDB's date_trunc of a date is a timestamp, Trino's a date.
        String column = "\"?" + Pattern.quote(field.name()) + "\"?";
        sql =
            sql.replaceAll(
                "(?i)\\b(date_trunc\\s*\\(\\s*'[^']*'\\s*,\\s*" + column + "\\s*\\))",
                "CAST($1 AS DATE)");
      }
      if (field.type().typeId() == Type.TypeID.TIMESTAMP) {
        // The column as written, qualified by its table's alias in a join (t.ts) or not.
        String column = "(?:[A-Za-z_][A-Za-z0-9_]*\\.)?\"?" + Pattern.quote(field.name()) + "\"?";
        sql =
            dateBinAsTimeBucket(
                sql,
                column,
                null,
                ((Types.TimestampType) field.type()).shouldAdjustToUTC()
                    ? "TIMESTAMPTZ"
                    : "TIMESTAMP");
      }
      if (field.type().typeId() == Type.TypeID.TIMESTAMP_NANO) {
        String column = "\"?" + Pattern.quote(field.name()) + "\"?";
        String nanos = "epoch_ns(\"" + field.name() + "\")";
        String flooredMicros =
            "make_timestamp((" + nanos + " - (" + nanos + " % 1000 + 1000) % 1000) // 1000)";
        sql = dateBinAsTimeBucket(sql, column, flooredMicros, "TIMESTAMP");
        sql =
            sql.replaceAll(
                "(?i)\\bdate_trunc\\s*\\(\\s*('[^']*')\\s*,\\s*" + column + "\\s*\\)",
                "date_trunc($1, " + Matcher.quoteReplacement(flooredMicros) + ")");
        sql =
            sql.replaceAll(
                "(?i)\\b(minute|hour)\\s*\\(\\s*" + column + "\\s*\\)",
                "$1(" + Matcher.quoteReplacement(flooredMicros) + ")");
      }
    }
    return sql;
  }

  /**
   * {@code date_bin(stride, column[, origin])} as DuckDB's {@code time_bucket(stride, value,
   * origin)}, with the Unix epoch for a missing origin (DuckDB's own default origin is 2000-01-03).
   * Timestamps are UTC wall-clock values in the oracle's table (and its session's time zone is UTC
   * for a {@code timestamptz}), so the origin is one too.
   *
   * @param value what is bucketed; null for the column as the query writes it
   * @param originType the type the origin is cast to, the value's: {@code TIMESTAMP} or {@code
   *     TIMESTAMPTZ}
   */
  private static String dateBinAsTimeBucket(
      String sql, String column, String value, String originType) {
    Matcher m =
        Pattern.compile(
                "(?i)\\bdate_bin\\s*\\(\\s*(INTERVAL\\s*'[^']*'\\s*[A-Za-z]+(?:\\s+TO\\s+[A-Za-z]+)?)"
                    + "\\s*,\\s*("
                    + column
                    + ")\\s*(?:,\\s*(TIMESTAMP\\s*'[^']*')\\s*)?\\)")
            .matcher(sql);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String origin = m.group(3) == null ? "TIMESTAMP '1970-01-01 00:00:00'" : m.group(3);
      String bucketed = value == null ? m.group(2) : value;
      m.appendReplacement(
          out,
          Matcher.quoteReplacement(
              "time_bucket("
                  + m.group(1)
                  + ", "
                  + bucketed
                  + ", CAST("
                  + origin
                  + " AS "
                  + originType
                  + "))"));
    }
    m.appendTail(out);
    return out.toString();
  }

  /**
   * The view query in DuckDB's dialect, reading the table {@code src} where it read {@code
   * sourceName}.
   */
  public static String forDuckDb(String viewQuery, String sourceName) {
    String sql = viewQuery.replaceAll("(?i)" + Pattern.quote(sourceName) + "\\b", "src");
    // A Trino timestamp literal has the precision of its digits; DuckDB's TIMESTAMP literal stops
    // at microseconds (it drops the nanoseconds of '10:00:00.000000500'), TIMESTAMP_NS does not.
    sql =
        sql.replaceAll(
            "(?i)\\bTIMESTAMP\\s*'(\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}\\.\\d{7,9})'",
            "TIMESTAMP_NS '$1'");
    // DuckDB's count_if is NULL over rows whose condition is never non-null, Trino's is 0: the
    // count of rows where the condition is true, which FILTER says in both.
    // Trino's minute(ts) / 15 divides integers (Trino's n-minute idiom); DuckDB's / is a division
    // of doubles, its // one of integers.
    sql =
        sql.replaceAll(
            "(?i)\\b(minute|hour)\\s*\\(\\s*(\"?[A-Za-z_][A-Za-z0-9_]*\"?)\\s*\\)\\s*/\\s*(\\d+)",
            "$1($2) // $3");
    sql = sql.replaceAll("(?i)\\bcount_if\\s*\\(", "count(*) FILTER (WHERE ");
    // DuckDB's min_by and max_by skip rows whose value is null, Trino's return it when its key is
    // the smallest (largest): the _null variants do.
    sql = sql.replaceAll("(?i)\\bmin_by\\s*\\(", "arg_min_null(");
    sql = sql.replaceAll("(?i)\\bmax_by\\s*\\(", "arg_max_null(");
    sql = sql.replaceAll("(?i)\\barbitrary\\s*\\(", "min(");
    sql = sql.replaceAll("(?i)\\bapprox_distinct\\s*\\(", "count(DISTINCT ");
    sql = sql.replaceAll("(?i)\\bapprox_percentile\\s*\\(", "quantile_disc(");
    return sql;
  }
}
