package io.floe.topology.view.sql;

import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rel.type.RelDataTypeSystemImpl;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.sql.type.SqlTypeUtil;

/**
 * Calcite's type rules adjusted to Trino's where the output type of a view column depends on them:
 * {@code sum} of integers is {@code bigint}, {@code avg}, {@code stddev} and {@code variance} of
 * integers are {@code double}, decimals reach precision 38, and timestamps carry up to nanoseconds
 * (Iceberg's {@code timestamp_ns}), defaulting to microseconds.
 */
public final class FloeTypeSystem extends RelDataTypeSystemImpl {

  public static final FloeTypeSystem INSTANCE = new FloeTypeSystem();

  private static final int MAX_DECIMAL_PRECISION = 38;

  private FloeTypeSystem() {}

  @Override
  public int getMaxPrecision(SqlTypeName typeName) {
    return switch (typeName) {
      case DECIMAL -> MAX_DECIMAL_PRECISION;
      case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE, TIME -> 9;
      default -> super.getMaxPrecision(typeName);
    };
  }

  @Override
  public int getMaxScale(SqlTypeName typeName) {
    return typeName == SqlTypeName.DECIMAL ? MAX_DECIMAL_PRECISION : super.getMaxScale(typeName);
  }

  @Override
  public int getDefaultPrecision(SqlTypeName typeName) {
    return switch (typeName) {
      case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE, TIME -> 6;
      default -> super.getDefaultPrecision(typeName);
    };
  }

  /** CASE WHEN .. THEN 'buy' ELSE 'sell' END is varchar('buy'), not char(4) 'buy ', as in Trino. */
  @Override
  public boolean shouldConvertRaggedUnionTypesToVarying() {
    return true;
  }

  @Override
  public RelDataType deriveSumType(RelDataTypeFactory factory, RelDataType argumentType) {
    if (SqlTypeUtil.isExactNumeric(argumentType) && !SqlTypeUtil.isDecimal(argumentType)) {
      return factory.createTypeWithNullability(
          factory.createSqlType(SqlTypeName.BIGINT), argumentType.isNullable());
    }
    if (SqlTypeUtil.isDecimal(argumentType)) {
      return factory.createTypeWithNullability(
          factory.createSqlType(
              SqlTypeName.DECIMAL, MAX_DECIMAL_PRECISION, argumentType.getScale()),
          argumentType.isNullable());
    }
    return super.deriveSumType(factory, argumentType);
  }

  @Override
  public RelDataType deriveAvgAggType(RelDataTypeFactory factory, RelDataType argumentType) {
    if (SqlTypeUtil.isExactNumeric(argumentType) && !SqlTypeUtil.isDecimal(argumentType)) {
      return factory.createTypeWithNullability(
          factory.createSqlType(SqlTypeName.DOUBLE), argumentType.isNullable());
    }
    return super.deriveAvgAggType(factory, argumentType);
  }
}
