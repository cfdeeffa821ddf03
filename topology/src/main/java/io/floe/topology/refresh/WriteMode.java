package io.floe.topology.refresh;

import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;

/**
 * How a refresh removes the target rows it replaces, from the target's own Iceberg properties
 * (DESIGN §5). A refresh is a MERGE of the recomputed rows into the target: {@code
 * write.merge.mode} decides, then {@code write.update.mode}, then {@code write.delete.mode}, the
 * first one set; {@code merge-on-read} needs format version 2 or later.
 */
enum WriteMode {
  /** Files holding replaced rows are rewritten without them. */
  COPY_ON_WRITE,
  /** Replaced rows are removed by delete files; no data file is rewritten. */
  MERGE_ON_READ;

  static WriteMode of(Table target) {
    return of(target.properties(), TableUtil.formatVersion(target));
  }

  static WriteMode of(Map<String, String> properties, int formatVersion) {
    for (String key :
        new String[] {
          TableProperties.MERGE_MODE, TableProperties.UPDATE_MODE, TableProperties.DELETE_MODE
        }) {
      String value = properties.get(key);
      if (value != null) {
        boolean mergeOnRead = "merge-on-read".equals(value.trim().toLowerCase(Locale.ROOT));
        return mergeOnRead && formatVersion >= 2 ? MERGE_ON_READ : COPY_ON_WRITE;
      }
    }
    return COPY_ON_WRITE;
  }
}
