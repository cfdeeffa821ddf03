package io.floe.topology.view;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.Schema;
import org.apache.iceberg.mapping.MappedField;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The identity of the source columns a view reads (DESIGN §3.4): for each column the query names,
 * the field id and type it resolves to. Iceberg reads data files by field id, so a column dropped
 * and added again under its old name is another column (a new id; every row written before reads
 * null), a promoted type computes other values, and two columns that swapped names swapped their
 * values; a rename the query still resolves (the view's names are case-insensitive) that keeps id
 * and type changes no value. Two schemas give a view the same rows when they give it the same
 * identity.
 *
 * <p>Files written without field ids (Iceberg's {@code migrate}, {@code add_files}) are read through
 * the table's name mapping ({@code schema.name-mapping.default}), which creates no snapshot when it
 * is set or changed: the part of it that maps the columns read is part of the identity too.
 *
 * <p>Recorded with the bookmark as {@code <name>=<id>:<type>} entries ordered by name and separated
 * by spaces, names lower-cased (characters other than letters, digits and {@code _$.-}
 * percent-encoded), types without spaces and nested ones with the ids of their fields, then, when
 * the table has a name mapping, {@code @name-mapping=<digest>} (no encoded name starts with
 * {@code @}): {@code price=4:decimal(9,2) tags=7:list<8:string> ts=3:timestamptz
 * @name-mapping=1a2b3c4d}.
 *
 * @param columns the columns, ordered by name
 * @param nameMapping a digest of how the table's name mapping maps these columns, or null when the
 *     table has none
 */
public record SourceColumns(List<Column> columns, String nameMapping) {

  private static final String NAME_MAPPING = "@name-mapping=";

  /**
   * One column a view reads.
   *
   * @param name its name, lower-cased as the view's case-insensitive query resolves it
   * @param fieldId its field id
   * @param type its type, as {@link #format} writes it
   */
  public record Column(String name, int fieldId, String type) {}

  public SourceColumns {
    columns = columns.stream().sorted(Comparator.comparing(Column::name)).toList();
  }

  /** Columns of a table without a name mapping. */
  public SourceColumns(List<Column> columns) {
    this(columns, null);
  }

  /**
   * These columns read through {@code mapping}, the table's name mapping (null for none): what a
   * file without field ids gives each of them.
   */
  public SourceColumns withNameMapping(NameMapping mapping) {
    if (mapping == null) {
      return new SourceColumns(columns, null);
    }
    StringBuilder mapped = new StringBuilder();
    for (Column column : columns) {
      mapped.append(column.fieldId()).append('=');
      append(mapped, mapping.find(column.fieldId()));
      mapped.append(' ');
    }
    return new SourceColumns(columns, Digests.sha256Prefix(mapped.toString(), 4));
  }

  /**
   * The identity of {@code names} (top-level columns, as the schema spells them) in {@code schema}.
   */
  public static SourceColumns of(Schema schema, List<String> names) {
    List<Column> columns = new ArrayList<>();
    for (String name : names) {
      Types.NestedField field = schema.findField(name);
      if (field == null) {
        throw new IllegalArgumentException("No column " + name + " in " + schema);
      }
      columns.add(
          new Column(field.name().toLowerCase(Locale.ROOT), field.fieldId(), typeOf(field.type())));
    }
    return new SourceColumns(columns);
  }

  /**
   * The identity these columns, by name, have in {@code schema} (another schema of their table), or
   * null when it lacks one of them.
   */
  public SourceColumns resolvedIn(Schema schema) {
    List<Column> resolved = new ArrayList<>();
    for (Column column : columns) {
      Types.NestedField field = schema.caseInsensitiveFindField(column.name());
      if (field == null) {
        return null;
      }
      resolved.add(new Column(column.name(), field.fieldId(), typeOf(field.type())));
    }
    return new SourceColumns(resolved, nameMapping);
  }

  /**
   * A short digest of the recorded form: names the identity in a refresh id ({@code
   * /reads-<digest>}), the same in every JVM and release.
   */
  public String digest() {
    return Digests.sha256Prefix(format(), 4);
  }

  /**
   * Parses {@link #format}'s form.
   *
   * @throws IllegalArgumentException when {@code text} is not of that form
   */
  public static SourceColumns parse(String text) {
    List<Column> columns = new ArrayList<>();
    String mapping = null;
    for (String pair : text.trim().split(" +")) {
      if (pair.isEmpty()) {
        continue;
      }
      if (pair.startsWith(NAME_MAPPING)) {
        mapping = pair.substring(NAME_MAPPING.length());
        continue;
      }
      int equals = pair.indexOf('=');
      int colon = pair.indexOf(':', equals);
      try {
        columns.add(
            new Column(
                URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8),
                Integer.parseInt(pair.substring(equals + 1, colon)),
                pair.substring(colon + 1)));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("Not a source column identity: '" + text + "'", e);
      }
    }
    return new SourceColumns(columns, mapping);
  }

  /**
   * The recorded form: {@code <name>=<id>:<type>} entries ordered by name, then the name mapping's
   * entry if any.
   */
  public String format() {
    String formatted =
        columns.stream()
            .map(c -> encode(c.name()) + "=" + c.fieldId() + ":" + c.type())
            .collect(Collectors.joining(" "));
    return nameMapping == null ? formatted : formatted + " " + NAME_MAPPING + nameMapping;
  }

  /** True when each name resolves to the same field id with the same type in both. */
  public boolean isSameAs(SourceColumns other) {
    return format().equals(other.format());
  }

  /**
   * Whether both name the same columns, whatever their ids and types: what one query reads, in two
   * schemas of its source.
   */
  public boolean namesTheSameColumnsAs(SourceColumns other) {
    return columns.stream()
        .map(Column::name)
        .collect(Collectors.toSet())
        .equals(other.columns.stream().map(Column::name).collect(Collectors.toSet()));
  }

  /**
   * How these columns differ from {@code recorded}, the identity the target was computed from, as a
   * reason for a full refresh: which columns are new (dropped and added again) and which changed
   * type; null when they are the same.
   */
  public String changesSince(SourceColumns recorded) {
    if (isSameAs(recorded)) {
      return null;
    }
    Map<String, Column> before =
        recorded.columns.stream().collect(Collectors.toMap(Column::name, Function.identity()));
    List<String> changes = new ArrayList<>();
    for (Column column : columns) {
      Column was = before.get(column.name());
      if (was != null && was.fieldId() != column.fieldId()) {
        changes.add(
            "column "
                + column.name()
                + " is field "
                + column.fieldId()
                + ", not field "
                + was.fieldId()
                + " the target was computed from (dropped and added again, or renamed)");
      } else if (was != null && !was.type().equals(column.type())) {
        changes.add(
            "column "
                + column.name()
                + " changed type from "
                + was.type()
                + " to "
                + column.type());
      }
    }
    boolean schemaChanged = !changes.isEmpty();
    if (!Objects.equals(nameMapping, recorded.nameMapping)) {
      changes.add(
          "the name mapping (schema.name-mapping.default) through which files without field ids"
              + " are read "
              + (recorded.nameMapping == null
                  ? "was set"
                  : nameMapping == null ? "was removed" : "changed for the columns it reads"));
    }
    if (changes.isEmpty()) {
      changes.add("its columns were " + recorded.format() + ", now " + format());
    }
    return (schemaChanged || Objects.equals(nameMapping, recorded.nameMapping)
            ? "the source schema changed what the view reads: "
            : "the source table changed what the view reads: ")
        + String.join("; ", changes);
  }

  /** A field's mapping, its names sorted: the same whatever order a writer listed them in. */
  private static void append(StringBuilder out, MappedField field) {
    if (field == null) {
      out.append('-');
      return;
    }
    out.append(field.names().stream().sorted().map(SourceColumns::encode).toList());
    if (field.nestedMapping() != null) {
      out.append('{');
      for (MappedField nested : field.nestedMapping().fields()) {
        out.append(nested.id()).append('=');
        append(out, nested);
        out.append(' ');
      }
      out.append('}');
    }
  }

  private static String encode(String name) {
    StringBuilder encoded = new StringBuilder();
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if (c < 0x80 && (Character.isLetterOrDigit(c) || "_$.-".indexOf(c) >= 0)) {
        encoded.append(c);
      } else {
        encoded.append('%').append(String.format("%02X", b & 0xff));
      }
    }
    return encoded.toString();
  }

  /** A type without names or spaces: nested fields by id, so that renaming one changes nothing. */
  private static String typeOf(Type type) {
    if (type.isPrimitiveType()) {
      return type.toString().replace(" ", "");
    }
    if (type.isListType()) {
      Types.ListType list = type.asListType();
      return "list<" + list.elementId() + ":" + typeOf(list.elementType()) + ">";
    }
    if (type.isMapType()) {
      Types.MapType map = type.asMapType();
      return "map<"
          + map.keyId()
          + ":"
          + typeOf(map.keyType())
          + ","
          + map.valueId()
          + ":"
          + typeOf(map.valueType())
          + ">";
    }
    return type.asStructType().fields().stream()
        .map(f -> f.fieldId() + ":" + typeOf(f.type()))
        .collect(Collectors.joining(",", "struct<", ">"));
  }
}
