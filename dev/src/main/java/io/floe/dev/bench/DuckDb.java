package io.floe.dev.bench;

import io.floe.testing.oracle.Oracle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The bench's reference engine: DuckDB, in this process and on all its cores, computing views over
 * the Parquet files of one source snapshot and writing each result as Parquet, as a refresh writes
 * its target.
 */
final class DuckDb {

  private DuckDb() {}

  /** The local paths of the snapshot's live data files. */
  static List<String> liveFiles(Table source, long snapshot) {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks =
        source.newScan().useSnapshot(snapshot).planFiles()) {
      for (FileScanTask task : tasks) {
        files.add(Path.of(URI.create(task.file().location())).toString());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  /**
   * The view {@code src} over the Parquet files, which the queries of {@link Oracle#forDuckDb}
   * read.
   */
  static void createSource(Statement s, List<String> files) throws SQLException {
    String list = files.stream().map(f -> "'" + f + "'").collect(Collectors.joining(", "));
    // The list of live files comes from Iceberg (a glob would read removed files too); directory
    // names are not columns.
    s.execute(
        "CREATE VIEW src AS SELECT * FROM read_parquet([" + list + "], hive_partitioning = false)");
  }

  /**
   * Seconds DuckDB takes to compute every query over the snapshot's live data files and write each
   * result to {@code dir}, one after the other in one connection; opening the files is not timed.
   *
   * @param queries view queries reading {@code source} by its name
   */
  static double seconds(Table source, long snapshot, List<String> queries, Path dir)
      throws Exception {
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
        Statement s = duck.createStatement()) {
      s.execute("SET TimeZone = 'UTC'");
      createSource(s, liveFiles(source, snapshot));
      long start = System.nanoTime();
      for (int i = 0; i < queries.size(); i++) {
        s.execute(
            "COPY ("
                + Oracle.forDuckDb(queries.get(i), source.name())
                + ") TO '"
                + dir.resolve("duckdb-result-" + i + ".parquet")
                + "' (FORMAT parquet)");
      }
      return (System.nanoTime() - start) / 1e9;
    }
  }
}
