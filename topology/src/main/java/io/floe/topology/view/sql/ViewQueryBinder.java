package io.floe.topology.view.sql;

import io.floe.topology.bucket.BucketColumnType;
import io.floe.topology.bucket.Bucketing;
import io.floe.topology.view.InvalidViewException;
import io.floe.topology.view.ParsedViewQuery;
import io.floe.topology.view.TableName;
import io.floe.topology.view.TrinoFunctions;
import io.floe.topology.view.ViewPlan;
import io.floe.topology.view.ViewRule;
import java.math.BigDecimal;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.calcite.config.CalciteConnectionConfigImpl;
import org.apache.calcite.config.CalciteConnectionProperty;
import org.apache.calcite.jdbc.CalciteSchema;
import org.apache.calcite.jdbc.JavaTypeFactoryImpl;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.hep.HepPlanner;
import org.apache.calcite.plan.hep.HepProgram;
import org.apache.calcite.prepare.CalciteCatalogReader;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.JoinInfo;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.runtime.CalciteContextException;
import org.apache.calcite.schema.impl.AbstractSchema;
import org.apache.calcite.schema.impl.AbstractTable;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlFunctionCategory;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNumericLiteral;
import org.apache.calcite.sql.SqlOperator;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.SqlSyntax;
import org.apache.calcite.sql.validate.SqlNameMatchers;
import org.apache.calcite.sql.validate.SqlValidator;
import org.apache.calcite.sql.validate.SqlValidatorUtil;
import org.apache.calcite.sql2rel.SqlToRelConverter;
import org.apache.calcite.sql2rel.StandardConvertletTable;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Checks a structurally valid view query against its source table's Iceberg schema with Calcite's
 * validator (unknown columns and functions, argument types, grouping), and derives the target
 * schema and the columns a refresh reads.
 */
public final class ViewQueryBinder {

  private static final Pattern UNKNOWN_COLUMN = Pattern.compile("Column '([^']+)' not found.*");
  private static final Pattern NO_MATCH =
      Pattern.compile("No match found for function signature ([^(]+)\\(.*");

  private ViewQueryBinder() {}

  /**
   * Binds {@code query} to the schema of its source table.
   *
   * @param zone the view's time zone for bucket boundaries
   * @throws InvalidViewException naming the rule the query breaks and where
   */
  public static ViewPlan bind(ParsedViewQuery query, Schema sourceSchema, ZoneId zone)
      throws InvalidViewException {
    return bind(query, sourceSchema, Map.of(), zone);
  }

  /**
   * Binds {@code query}, which may join dimension tables to its source (the fact table), to the
   * schemas of its tables.
   *
   * @param dimensionSchemas the schema of each dimension table the query joins
   * @param zone the view's time zone for bucket boundaries
   * @throws InvalidViewException naming the rule the query breaks and where
   */
  public static ViewPlan bind(
      ParsedViewQuery query,
      Schema sourceSchema,
      Map<TableName, Schema> dimensionSchemas,
      ZoneId zone)
      throws InvalidViewException {
    Map<TableName, Schema> tables = new LinkedHashMap<>();
    tables.put(query.source(), sourceSchema);
    for (ParsedViewQuery.JoinedTable dimension : query.dimensions()) {
      Schema schema = dimensionSchemas.get(dimension.table());
      if (schema == null) {
        throw new IllegalArgumentException("No schema given for dimension " + dimension.table());
      }
      tables.put(dimension.table(), schema);
    }
    Types.NestedField bucketField = sourceSchema.caseInsensitiveFindField(query.bucketColumn());
    if (bucketField == null) {
      rejectDimensionBucket(query, dimensionSchemas);
    }
    Bucketing bucketing = bucketing(query, bucketField, zone);
    SqlNode parsed = ViewQueryParser.parseQuery(query.sql());
    SqlSelect select = ViewQueryParser.outerSelect(parsed);
    ViewQueryParser.replaceBuckets(parsed);
    JavaTypeFactoryImpl types = new JavaTypeFactoryImpl(FloeTypeSystem.INSTANCE);
    CalciteCatalogReader catalog = catalog(tables, types);
    SqlValidator validator = validator(catalog, types);
    SqlNode validated = validate(validator, parsed);
    RelDataType outputRow = validator.getValidatedNodeType(validated);
    rejectNonDeterministic(validated);
    checkPercentages(validated);
    RelNode relation = FlatRelation.flatten(toRelation(validated, validator, catalog, types));
    if (FlatRelation.bucketReadsDimension(relation)) {
      rejectDimensionBucket(query, dimensionSchemas);
    }
    Set<String> bucketed = FlatRelation.bucketedSourceColumns(relation, sourceSchema);
    if (!bucketed.isEmpty() && !bucketed.contains(bucketField.name())) {
      // The parser traced the bucket by name; Calcite's plan is the authority on what it reads.
      throw new InvalidViewException(
          ViewRule.COMPUTED_BUCKET,
          query.bucketLine(),
          query.bucketColumnPosition(),
          "the bucket reads source column "
              + String.join(", ", bucketed)
              + ", not "
              + bucketField.name()
              + " as the names on the way to it say");
    }
    Schema outputSchema = outputSchema(query, select, outputRow, bucketing);
    return new ViewPlan(
        query,
        bucketField.name(),
        bucketing,
        sourceSchema,
        outputSchema,
        FlatRelation.sourceColumnsRead(relation, sourceSchema),
        relation,
        dimensions(query, relation, sourceSchema, tables));
  }

  /** The bucket truncates a column of a dimension (or of no table): say which. */
  private static void rejectDimensionBucket(
      ParsedViewQuery query, Map<TableName, Schema> dimensionSchemas) throws InvalidViewException {
    for (ParsedViewQuery.JoinedTable dimension : query.dimensions()) {
      Types.NestedField field =
          dimensionSchemas.get(dimension.table()).caseInsensitiveFindField(query.bucketColumn());
      if (field != null) {
        throw new InvalidViewException(
            ViewRule.DIMENSION_JOIN,
            query.bucketLine(),
            query.bucketColumnPosition(),
            "the bucket must truncate a column of the fact table "
                + query.source()
                + ", whose file statistics find dirty buckets; "
                + field.name()
                + " is a column of dimension "
                + dimension.table());
      }
    }
  }

  /**
   * Each join of the plan checked and described: equalities only, each between a column of the fact
   * table and one of the dimension it adds.
   */
  private static List<ViewPlan.Dimension> dimensions(
      ParsedViewQuery query, RelNode relation, Schema sourceSchema, Map<TableName, Schema> tables)
      throws InvalidViewException {
    List<Join> joins = FlatRelation.joins(relation);
    List<ViewPlan.Dimension> dimensions = new ArrayList<>();
    int factWidth = sourceSchema.columns().size();
    for (int d = 0; d < joins.size(); d++) {
      Join join = joins.get(d);
      ParsedViewQuery.JoinedTable joined = query.dimensions().get(d);
      Schema schema = tables.get(joined.table());
      int offset = join.getLeft().getRowType().getFieldCount();
      if (!(join.getRight() instanceof TableScan)
          || !(join.getLeft() instanceof TableScan || join.getLeft() instanceof Join)) {
        // The converter computes a key that needs a cast below the join, as a projection.
        throw joinError(
            joined,
            "its keys must be equalities of a fact column and a dimension column of the same type,"
                + " compared as they are: "
                + join.getCondition()
                + " compares a computed or cast value");
      }
      JoinInfo info = join.analyzeCondition();
      if (!info.isEqui() || info.leftKeys.isEmpty()) {
        throw joinError(
            joined,
            "its condition must be equalities of a fact column and a dimension column of the same"
                + " type, found "
                + join.getCondition());
      }
      List<String> factKeys = new ArrayList<>();
      List<String> keys = new ArrayList<>();
      for (int k = 0; k < info.leftKeys.size(); k++) {
        int left = info.leftKeys.get(k);
        if (left >= factWidth) {
          // Dimension changes are bounded by the fact files' statistics on the join column.
          throw joinError(
              joined,
              "it is joined on a column of another dimension; join each dimension on columns of"
                  + " the fact table "
                  + query.source());
        }
        factKeys.add(sourceSchema.columns().get(left).name());
        keys.add(schema.columns().get(info.rightKeys.get(k)).name());
      }
      dimensions.add(
          new ViewPlan.Dimension(
              joined.table(),
              joined.kind(),
              schema,
              factKeys,
              keys,
              FlatRelation.dimensionColumnsRead(relation, offset, schema)));
    }
    return dimensions;
  }

  private static InvalidViewException joinError(ParsedViewQuery.JoinedTable joined, String detail) {
    return new InvalidViewException(
        ViewRule.DIMENSION_JOIN, joined.line(), joined.column(), joined.table() + ": " + detail);
  }

  private static CalciteCatalogReader catalog(
      Map<TableName, Schema> tables, RelDataTypeFactory types) {
    CalciteSchema root = CalciteSchema.createRootSchema(false, false);
    for (Map.Entry<TableName, Schema> table : tables.entrySet()) {
      TableName name = table.getKey();
      Schema schema = table.getValue();
      CalciteSchema level = root;
      List<String> path = new ArrayList<>();
      path.add(name.catalog());
      path.addAll(name.namespace());
      for (String part : path) {
        CalciteSchema below = level.getSubSchema(part, true);
        level = below != null ? below : level.add(part, new AbstractSchema());
      }
      level.add(
          name.table(),
          new AbstractTable() {
            @Override
            public RelDataType getRowType(RelDataTypeFactory factory) {
              return CalciteTypes.rowType(schema, factory);
            }
          });
    }
    Properties properties = new Properties();
    properties.setProperty(CalciteConnectionProperty.CASE_SENSITIVE.camelName(), "false");
    return new CalciteCatalogReader(
        root, List.of(), types, new CalciteConnectionConfigImpl(properties));
  }

  private static SqlValidator validator(CalciteCatalogReader catalog, RelDataTypeFactory types) {
    return SqlValidatorUtil.newValidator(
        TrinoOperatorTable.instance(),
        catalog,
        types,
        SqlValidator.Config.DEFAULT
            .withConformance(TrinoConformance.INSTANCE)
            .withTypeCoercionFactory(TrinoTypeCoercion::new)
            .withIdentifierExpansion(true));
  }

  private static SqlNode validate(SqlValidator validator, SqlNode query)
      throws InvalidViewException {
    try {
      return validator.validate(query);
    } catch (CalciteContextException e) {
      throw classify(e);
    } catch (RuntimeException e) {
      throw new InvalidViewException(ViewRule.INVALID_QUERY, 0, 0, e.getMessage());
    }
  }

  /**
   * The relational plan of the validated query (Project, Filter and Aggregate over the source
   * scan), which the engine ({@code refresh.eval}) evaluates.
   */
  private static RelNode toRelation(
      SqlNode validated,
      SqlValidator validator,
      CalciteCatalogReader catalog,
      JavaTypeFactoryImpl types) {
    RelOptCluster cluster =
        RelOptCluster.create(new HepPlanner(HepProgram.builder().build()), new RexBuilder(types));
    SqlToRelConverter converter =
        new SqlToRelConverter(
            null,
            validator,
            catalog,
            cluster,
            StandardConvertletTable.INSTANCE,
            SqlToRelConverter.config().withTrimUnusedFields(false).withExpand(false));
    return converter.convertQuery(validated, false, true).project();
  }

  private static InvalidViewException classify(CalciteContextException e) {
    String message = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
    int line = e.getPosLine();
    int column = e.getPosColumn();
    Matcher unknownColumn = UNKNOWN_COLUMN.matcher(message);
    if (unknownColumn.matches()) {
      return new InvalidViewException(
          ViewRule.UNKNOWN_COLUMN, line, column, unknownColumn.group(1));
    }
    Matcher noMatch = NO_MATCH.matcher(message);
    if (noMatch.matches()) {
      String name = noMatch.group(1).trim();
      ViewRule rule = isKnownFunction(name) ? ViewRule.INVALID_ARGUMENT : ViewRule.UNKNOWN_FUNCTION;
      String detail =
          rule == ViewRule.UNKNOWN_FUNCTION
              ? name.toLowerCase(Locale.ROOT)
              : message.substring("No match found for function signature ".length());
      return new InvalidViewException(rule, line, column, detail);
    }
    if (message.startsWith("Cannot apply")) {
      return new InvalidViewException(ViewRule.INVALID_ARGUMENT, line, column, message);
    }
    return new InvalidViewException(ViewRule.INVALID_QUERY, line, column, message);
  }

  private static boolean isKnownFunction(String name) {
    List<SqlOperator> found = new ArrayList<>();
    TrinoOperatorTable.instance()
        .lookupOperatorOverloads(
            new SqlIdentifier(name, org.apache.calcite.sql.parser.SqlParserPos.ZERO),
            (SqlFunctionCategory) null,
            SqlSyntax.FUNCTION,
            found,
            SqlNameMatchers.withCaseSensitive(false));
    return !found.isEmpty();
  }

  private static void rejectNonDeterministic(SqlNode select) throws InvalidViewException {
    List<SqlCall> offenders =
        SqlCalls.find(
            select,
            call ->
                !call.getOperator().isDeterministic() || call.getOperator().isDynamicFunction());
    if (!offenders.isEmpty()) {
      SqlCall first = offenders.get(0);
      throw ViewQueryParser.invalid(
          ViewRule.NON_DETERMINISTIC,
          first,
          first.getOperator().getName().toLowerCase(Locale.ROOT));
    }
  }

  /** approx_percentile needs a constant percentage in [0, 1], as in Trino. */
  private static void checkPercentages(SqlNode select) throws InvalidViewException {
    for (SqlCall call :
        SqlCalls.find(select, call -> call.getOperator() == TrinoFunctions.APPROX_PERCENTILE)) {
      SqlNode percentage = call.operand(call.operandCount() - 1);
      BigDecimal value =
          percentage instanceof SqlNumericLiteral literal
              ? literal.getValueAs(BigDecimal.class)
              : null;
      if (value == null || value.signum() < 0 || value.compareTo(BigDecimal.ONE) > 0) {
        throw ViewQueryParser.invalid(
            ViewRule.INVALID_ARGUMENT,
            percentage,
            "approx_percentile needs a constant percentage between 0 and 1, got " + percentage);
      }
    }
  }

  private static Bucketing bucketing(
      ParsedViewQuery query, Types.NestedField bucketField, ZoneId zone)
      throws InvalidViewException {
    if (bucketField == null) {
      throw new InvalidViewException(
          ViewRule.UNKNOWN_COLUMN,
          query.bucketLine(),
          query.bucketColumnPosition(),
          query.bucketColumn());
    }
    BucketColumnType type =
        BucketColumnType.of(bucketField.type())
            .orElseThrow(
                () ->
                    new InvalidViewException(
                        ViewRule.BUCKET_COLUMN_TYPE,
                        query.bucketLine(),
                        query.bucketColumnPosition(),
                        bucketField.name() + " is " + bucketField.type()));
    if (type.isDate() && query.granularity().isTimeOfDay()) {
      throw new InvalidViewException(
          ViewRule.BUCKET_COLUMN_TYPE,
          query.bucketLine(),
          query.bucketColumnPosition(),
          (query.granularity().isStride()
                  ? query.granularity().expression(bucketField.name()) + " needs"
                  : query.granularity().unit() + " buckets need")
              + " a timestamp column; "
              + bucketField.name()
              + " is a date");
    }
    return Bucketing.of(query.granularity(), type, zone);
  }

  /** The Iceberg type of a value of {@code type} (see {@link ViewPlan#storedType}). */
  public static java.util.Optional<Type> storedType(RelDataType type) {
    return CalciteTypes.toIceberg(type);
  }

  private static Schema outputSchema(
      ParsedViewQuery query, SqlSelect select, RelDataType outputRow, Bucketing bucketing)
      throws InvalidViewException {
    List<Types.NestedField> columns = new ArrayList<>();
    List<RelDataTypeField> fields = outputRow.getFieldList();
    for (int i = 0; i < fields.size(); i++) {
      String name = query.outputColumns().get(i);
      RelDataType sqlType = fields.get(i).getType();
      SqlNode item = select.getSelectList().get(i);
      Type type =
          name.equals(query.bucketOutput())
              ? bucketOutputType(bucketing.columnType())
              : CalciteTypes.toIceberg(sqlType)
                  .orElseThrow(
                      () ->
                          ViewQueryParser.invalid(
                              ViewRule.UNSUPPORTED_TYPE,
                              item,
                              name + " has type " + sqlType.getFullTypeString()));
      // Every target column is optional: nulls in group keys and the null bucket are legal.
      columns.add(Types.NestedField.optional(i + 1, name, type));
    }
    return new Schema(columns);
  }

  /**
   * Buckets are whole minutes or longer, so a nanosecond source column needs no more than
   * microseconds in the target, which keeps target tables at format version 2.
   */
  private static Type bucketOutputType(BucketColumnType columnType) {
    return switch (columnType) {
      case DATE -> Types.DateType.get();
      case TIMESTAMP, TIMESTAMP_NS -> Types.TimestampType.withoutZone();
      case TIMESTAMPTZ, TIMESTAMPTZ_NS -> Types.TimestampType.withZone();
    };
  }
}
