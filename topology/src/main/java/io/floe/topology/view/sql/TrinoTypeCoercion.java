package io.floe.topology.view.sql;

import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.sql.type.SqlTypeFamily;
import org.apache.calcite.sql.type.SqlTypeUtil;
import org.apache.calcite.sql.validate.SqlValidator;
import org.apache.calcite.sql.validate.implicit.TypeCoercionImpl;

/**
 * Calcite's implicit coercions without the ones Trino does not make: a string never turns into a
 * number, date or boolean implicitly ({@code sum(varchar)} is an error, as in Trino), while numeric
 * widening and {@code date} to {@code timestamp} comparisons still work.
 */
final class TrinoTypeCoercion extends TypeCoercionImpl {

  TrinoTypeCoercion(RelDataTypeFactory typeFactory, SqlValidator validator) {
    super(typeFactory, validator);
  }

  @Override
  public RelDataType implicitCast(RelDataType in, SqlTypeFamily expected) {
    if (SqlTypeUtil.isCharacter(in)
        && expected != SqlTypeFamily.CHARACTER
        && expected != SqlTypeFamily.STRING
        && expected != SqlTypeFamily.ANY) {
      return null;
    }
    return super.implicitCast(in, expected);
  }

  @Override
  public RelDataType commonTypeForBinaryComparison(RelDataType type1, RelDataType type2) {
    if (type1 != null
        && type2 != null
        && SqlTypeUtil.isCharacter(type1) != SqlTypeUtil.isCharacter(type2)) {
      return null;
    }
    return super.commonTypeForBinaryComparison(type1, type2);
  }
}
