package io.floe.topology.refresh.eval.vector;

import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.iceberg.types.Type;

/**
 * Column vectors of one batch of rows, in Floe's native value representation (see {@link
 * io.floe.topology.refresh.eval.expr.CalciteValues}): integers, dates, times and timestamps in a
 * {@code long[]}, doubles in a {@code double[]}, strings as dictionary ids or values ({@link
 * DictionaryVector}), everything else as objects. Typed accessors read any vector; {@link
 * Vector#get} boxes.
 */
public final class Vectors {

  /** Rows per batch: small enough to stay in cache, large enough to amortise per-batch work. */
  public static final int BATCH = 4096;

  private Vectors() {}

  /** How the values of a long vector box: as {@code Integer} (int, date) or {@code Long}. */
  public enum LongKind {
    INT,
    LONG
  }

  /** One column of a batch. */
  public abstract static class Vector {
    public abstract boolean isNull(int row);

    /** The native value, boxed; null for SQL NULL. */
    public abstract Object get(int row);

    public long getLong(int row) {
      return ((Number) get(row)).longValue();
    }

    public double getDouble(int row) {
      return ((Number) get(row)).doubleValue();
    }

    public abstract void setNull(int row);

    /** Sets a native value (null for SQL NULL). */
    public abstract void set(int row, Object value);

    /** Copies row {@code from} to row {@code to}, to close the gaps of deleted rows. */
    public abstract void move(int from, int to);
  }

  /** A vector of primitive values, with a null flag per row beside them. */
  public abstract static class PrimitiveVector extends Vector {
    public final boolean[] nulls = new boolean[BATCH];

    @Override
    public boolean isNull(int row) {
      return nulls[row];
    }

    @Override
    public void setNull(int row) {
      nulls[row] = true;
    }

    @Override
    public void set(int row, Object value) {
      if (value == null) {
        nulls[row] = true;
      } else {
        setNumber(row, (Number) value);
      }
    }

    /** Sets a value that is not null. */
    abstract void setNumber(int row, Number value);
  }

  public static final class LongVector extends PrimitiveVector {
    public final long[] values = new long[BATCH];
    public final LongKind kind;

    public LongVector(LongKind kind) {
      this.kind = kind;
    }

    @Override
    public Object get(int row) {
      if (nulls[row]) {
        return null;
      }
      return kind == LongKind.INT ? (Object) (int) values[row] : (Object) values[row];
    }

    @Override
    public long getLong(int row) {
      return values[row];
    }

    @Override
    public double getDouble(int row) {
      return values[row];
    }

    public void set(int row, long value) {
      values[row] = value;
      nulls[row] = false;
    }

    @Override
    void setNumber(int row, Number value) {
      set(row, value.longValue());
    }

    @Override
    public void move(int from, int to) {
      values[to] = values[from];
      nulls[to] = nulls[from];
    }
  }

  public static final class DoubleVector extends PrimitiveVector {
    public final double[] values = new double[BATCH];

    @Override
    public Object get(int row) {
      return nulls[row] ? null : (Object) values[row];
    }

    @Override
    public long getLong(int row) {
      return (long) values[row];
    }

    @Override
    public double getDouble(int row) {
      return values[row];
    }

    public void set(int row, double value) {
      values[row] = value;
      nulls[row] = false;
    }

    @Override
    void setNumber(int row, Number value) {
      set(row, value.doubleValue());
    }

    @Override
    public void move(int from, int to) {
      values[to] = values[from];
      nulls[to] = nulls[from];
    }
  }

  public static final class ObjectVector extends Vector {
    public final Object[] values = new Object[BATCH];

    @Override
    public boolean isNull(int row) {
      return values[row] == null;
    }

    @Override
    public Object get(int row) {
      return values[row];
    }

    @Override
    public void setNull(int row) {
      values[row] = null;
    }

    @Override
    public void set(int row, Object value) {
      values[row] = value;
    }

    @Override
    public void move(int from, int to) {
      values[to] = values[from];
    }
  }

  /** A vector for values of an Iceberg column type. */
  public static Vector forIceberg(Type type) {
    return switch (type.typeId()) {
      case INTEGER, DATE -> new LongVector(LongKind.INT);
      case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO -> new LongVector(LongKind.LONG);
      case DOUBLE -> new DoubleVector();
      case STRING -> new DictionaryVector();
      default -> new ObjectVector();
    };
  }

  /** A new vector of the same kind as {@code vector}. */
  public static Vector like(Vector vector) {
    if (vector instanceof LongVector longs) {
      return new LongVector(longs.kind);
    }
    if (vector instanceof DictionaryVector) {
      return new DictionaryVector();
    }
    return vector instanceof DoubleVector ? new DoubleVector() : new ObjectVector();
  }

  /** How a SQL type of the aggregate's input boxes when held in a long vector, or null. */
  public static LongKind longKind(SqlTypeName type) {
    return switch (type) {
      case INTEGER, DATE -> LongKind.INT;
      case BIGINT, TIME, TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> LongKind.LONG;
      default -> null;
    };
  }
}
