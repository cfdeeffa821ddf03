package io.floe.topology.view.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Conversions between Iceberg types and Calcite's SQL types: source schemas go to Calcite for
 * validation, and the validated output row comes back as the target table's schema.
 */
final class CalciteTypes {

  private CalciteTypes() {}

  /** The row type of an Iceberg schema; optional fields are nullable. */
  static RelDataType rowType(Schema schema, RelDataTypeFactory factory) {
    RelDataTypeFactory.Builder builder = factory.builder();
    for (Types.NestedField field : schema.columns()) {
      builder.add(field.name(), toCalcite(field.type(), field.isOptional(), factory));
    }
    return builder.build();
  }

  static RelDataType toCalcite(Type type, boolean nullable, RelDataTypeFactory factory) {
    RelDataType sql =
        switch (type.typeId()) {
          case BOOLEAN -> factory.createSqlType(SqlTypeName.BOOLEAN);
          case INTEGER -> factory.createSqlType(SqlTypeName.INTEGER);
          case LONG -> factory.createSqlType(SqlTypeName.BIGINT);
          case FLOAT -> factory.createSqlType(SqlTypeName.REAL);
          case DOUBLE -> factory.createSqlType(SqlTypeName.DOUBLE);
          case DECIMAL -> {
            Types.DecimalType decimal = (Types.DecimalType) type;
            yield factory.createSqlType(SqlTypeName.DECIMAL, decimal.precision(), decimal.scale());
          }
          case DATE -> factory.createSqlType(SqlTypeName.DATE);
          case TIME -> factory.createSqlType(SqlTypeName.TIME, 6);
          case TIMESTAMP ->
              factory.createSqlType(
                  ((Types.TimestampType) type).shouldAdjustToUTC()
                      ? SqlTypeName.TIMESTAMP_WITH_LOCAL_TIME_ZONE
                      : SqlTypeName.TIMESTAMP,
                  6);
          case TIMESTAMP_NANO ->
              factory.createSqlType(
                  ((Types.TimestampNanoType) type).shouldAdjustToUTC()
                      ? SqlTypeName.TIMESTAMP_WITH_LOCAL_TIME_ZONE
                      : SqlTypeName.TIMESTAMP,
                  9);
          case STRING -> factory.createSqlType(SqlTypeName.VARCHAR);
          case UUID -> factory.createSqlType(SqlTypeName.UUID);
          case FIXED ->
              factory.createSqlType(SqlTypeName.BINARY, ((Types.FixedType) type).length());
          case BINARY -> factory.createSqlType(SqlTypeName.VARBINARY);
          case LIST ->
              factory.createArrayType(
                  toCalcite(
                      type.asListType().elementType(),
                      type.asListType().isElementOptional(),
                      factory),
                  -1);
          case MAP ->
              factory.createMapType(
                  toCalcite(type.asMapType().keyType(), false, factory),
                  toCalcite(
                      type.asMapType().valueType(), type.asMapType().isValueOptional(), factory));
          case STRUCT -> {
            RelDataTypeFactory.Builder struct = factory.builder();
            for (Types.NestedField field : type.asStructType().fields()) {
              struct.add(field.name(), toCalcite(field.type(), field.isOptional(), factory));
            }
            yield struct.build();
          }
          default -> factory.createSqlType(SqlTypeName.ANY);
        };
    return factory.createTypeWithNullability(sql, nullable);
  }

  /**
   * The Iceberg type of an output column, or empty when Iceberg cannot store it (intervals, the
   * type of a bare NULL, anything untyped).
   */
  static Optional<Type> toIceberg(RelDataType type) {
    return toIceberg(type, new AtomicInteger(1_000));
  }

  private static Optional<Type> toIceberg(RelDataType type, AtomicInteger ids) {
    Type iceberg =
        switch (type.getSqlTypeName()) {
          case BOOLEAN -> Types.BooleanType.get();
          case TINYINT, SMALLINT, INTEGER -> Types.IntegerType.get();
          case BIGINT -> Types.LongType.get();
          case REAL, FLOAT -> Types.FloatType.get();
          case DOUBLE -> Types.DoubleType.get();
          case DECIMAL ->
              type.getPrecision() <= 38
                  ? Types.DecimalType.of(type.getPrecision(), Math.max(type.getScale(), 0))
                  : null;
          case CHAR, VARCHAR -> Types.StringType.get();
          case UUID -> Types.UUIDType.get();
          case DATE -> Types.DateType.get();
          case TIME -> Types.TimeType.get();
          case TIMESTAMP ->
              type.getPrecision() > 6
                  ? Types.TimestampNanoType.withoutZone()
                  : Types.TimestampType.withoutZone();
          case TIMESTAMP_WITH_LOCAL_TIME_ZONE ->
              type.getPrecision() > 6
                  ? Types.TimestampNanoType.withZone()
                  : Types.TimestampType.withZone();
          case BINARY, VARBINARY -> Types.BinaryType.get();
          case ARRAY -> {
            RelDataType element = type.getComponentType();
            yield toIceberg(element, ids)
                .map(
                    e ->
                        element.isNullable()
                            ? Types.ListType.ofOptional(ids.incrementAndGet(), e)
                            : Types.ListType.ofRequired(ids.incrementAndGet(), e))
                .orElse(null);
          }
          case MAP -> {
            Optional<Type> key = toIceberg(type.getKeyType(), ids);
            Optional<Type> value = toIceberg(type.getValueType(), ids);
            yield key.isPresent() && value.isPresent()
                ? Types.MapType.ofOptional(
                    ids.incrementAndGet(), ids.incrementAndGet(), key.get(), value.get())
                : null;
          }
          case ROW -> {
            List<Types.NestedField> fields = new ArrayList<>();
            for (RelDataTypeField field : type.getFieldList()) {
              Optional<Type> fieldType = toIceberg(field.getType(), ids);
              if (fieldType.isEmpty()) {
                yield null;
              }
              fields.add(
                  Types.NestedField.optional(
                      ids.incrementAndGet(), field.getName(), fieldType.get()));
            }
            yield Types.StructType.of(fields);
          }
          default -> null;
        };
    return Optional.ofNullable(iceberg);
  }
}
