// Binding of DDL: type names to DataTypes, a source's or table's column list
// to a Schema (with the Kafka metadata columns the connector fills), and a
// source's WATERMARK clause to a WatermarkDef. Which schema a source gets is
// its connector's choice (connectors/connector.h): these are the shapes it
// chooses from.
#include <fmt/format.h>

#include "common/year_month_interval.h"
#include "planner/binder.h"
#include "planner/planner.h"

namespace rtsql {

using sqlstate::kDuplicateColumn;

DataTypePtr bindType(const ast::TypeName& type) {
  std::string name = toUpper(type.name);
  if (name == "ARRAY") {
    if (type.params.size() != 1) {
      throw SqlError(sqlstate::kSyntaxError, "ARRAY needs one element type: ARRAY<STRING>",
                     type.pos);
    }
    return DataType::arrayOf(bindType(type.params[0]));
  }
  if (name == "STRUCT") {
    std::vector<StructField> fields;
    for (const auto& [fieldName, fieldType] : type.fields) {
      for (const auto& f : fields) {
        if (iequals(f.name, fieldName)) {
          throw SqlError(sqlstate::kDuplicateColumn,
                         fmt::format("field \"{}\" appears twice in STRUCT", fieldName),
                         fieldType.pos);
        }
      }
      fields.push_back(StructField{fieldName, bindType(fieldType)});
    }
    return DataType::structOf(std::move(fields));
  }
  if (name == "MAP") {
    if (type.params.size() != 2) {
      throw SqlError(sqlstate::kSyntaxError, "MAP needs a key and a value type: MAP<STRING, BIGINT>",
                     type.pos);
    }
    return DataType::mapOf(bindType(type.params[0]), bindType(type.params[1]));
  }
  if (name == "DECIMAL" || name == "NUMERIC" || name == "DEC") {
    // DECIMAL is DECIMAL(10, 0) and DECIMAL(p) DECIMAL(p, 0), as in Spark.
    if (type.modifiers.size() > 2) {
      throw SqlError(sqlstate::kSyntaxError, "DECIMAL takes a precision and a scale: DECIMAL(10, 2)",
                     type.pos);
    }
    int64_t precision = type.modifiers.empty() ? 10 : type.modifiers[0];
    int64_t scale = type.modifiers.size() < 2 ? 0 : type.modifiers[1];
    if (precision < 1 || precision > decimal::kMaxPrecision || scale < 0 || scale > precision) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("DECIMAL({}, {}) is out of range", precision, scale), type.pos,
                     "the precision is 1 to 38 and the scale 0 to the precision");
    }
    return DataType::decimal(static_cast<int>(precision), static_cast<int>(scale));
  }
  if (name.starts_with("INTERVAL ")) {
    // INTERVAL YEAR TO MONTH, INTERVAL MONTH (YEAR-MONTH), INTERVAL DAY TO
    // SECOND (day-time): the words after INTERVAL, as the parser wrote them.
    std::string_view units = std::string_view(name).substr(9);
    const size_t to = units.find(" TO ");
    DataTypePtr t = to == std::string_view::npos
                        ? ym::intervalType(units, "")
                        : ym::intervalType(units.substr(0, to), units.substr(to + 4));
    if (t) return t;
    throw SqlError(sqlstate::kSyntaxError, fmt::format("{} is not an interval type", type.name),
                   type.pos)
        .withHint("write INTERVAL YEAR, INTERVAL MONTH, INTERVAL YEAR TO MONTH or INTERVAL DAY TO SECOND");
  }
  if (auto id = scalarTypeFromName(name)) return DataType::of(*id);
  throw SqlError(sqlstate::kUndefinedObject,
                 fmt::format("type \"{}\" does not exist", toLower(type.name)), type.pos)
      .withHint("types: STRING, INT, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, BINARY, ARRAY<T>, "
                "STRUCT<name T, ...>");
}

namespace {

const ast::Option* findOption(const std::vector<ast::Option>& options, std::string_view key) {
  for (const auto& o : options) {
    if (iequals(o.key, key)) return &o;
  }
  return nullptr;
}

size_t valuePosOf(const std::vector<ast::Option>& options, std::string_view key, size_t def) {
  const ast::Option* o = findOption(options, key);
  return o ? o->valuePos : def;
}

void addDeclared(Schema& schema, const std::vector<ast::ColumnDef>& columns) {
  for (const auto& col : columns) {
    if (schema.find(col.name) >= 0) {
      SqlError err(sqlstate::kDuplicateColumn,
                   fmt::format("column \"{}\" specified more than once", col.name), col.pos);
      if (!col.name.empty() && col.name[0] == '_') {
        err.withHint("names starting with _ may be hidden Kafka metadata columns");
      }
      throw err;
    }
    schema.columns.push_back(Column{col.name, bindType(col.type), false});
  }
}

DataTypePtr headersType() {
  return DataType::arrayOf(DataType::structOf({{"key", DataType::of(TypeId::String)},
                                               {"value", DataType::of(TypeId::Binary)}}));
}

}  // namespace

Schema bindColumns(const std::vector<ast::ColumnDef>& columns) {
  Schema schema;
  addDeclared(schema, columns);
  return schema;
}

Schema bindKafkaRecordSchema(const ast::CreateSource& stmt, const std::string& formatIn,
                             bool includeHeaders, const Schema* payload) {
  std::string format = toLower(formatIn);
  size_t formatPos = valuePosOf(stmt.options, "format", stmt.namePos);
  Schema schema;

  if (format == "raw") {
    if (!stmt.columns.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue, "format 'raw' has a fixed schema",
                     stmt.columns[0].pos,
                     "drop the column list: the columns are key, value, topic, partition, "
                     "offset, timestamp, timestampType");
    }
    auto add = [&](const char* name, TypeId id) {
      schema.columns.push_back(Column{name, DataType::of(id), false});
    };
    add("key", TypeId::Binary);
    add("value", TypeId::Binary);
    add("topic", TypeId::String);
    add("partition", TypeId::Int);
    add("offset", TypeId::BigInt);
    add("timestamp", TypeId::Timestamp);
    add("timestampType", TypeId::Int);
    if (includeHeaders) schema.columns.push_back(Column{"headers", headersType(), false});
    return schema;
  }
  if (format != "json" && format != "csv" && format != "debezium-json" &&
      !((format == "avro" || format == "protobuf") && payload)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   format.empty() ? std::string("a kafka source needs option 'format'")
                                  : fmt::format("unknown format '{}'", formatIn),
                   formatPos,
                   "use format 'json', 'csv', 'avro', 'protobuf', 'raw' or 'debezium-json'");
  }
  if (format == "debezium-json" && stmt.watermark) {
    // Event-time operators (windows, interval joins, dedup within the
    // watermark) take append streams only.
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "a debezium-json source reads a changelog, which has no watermark",
                   stmt.watermark->pos,
                   "drop the WATERMARK clause: aggregations, joins and top-N over the source "
                   "take its updates and deletes");
  }
  if (stmt.columns.empty() && !payload) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("format '{}' needs a column list", format), stmt.namePos,
                   fmt::format("declare the columns: CREATE SOURCE {} (id BIGINT, ...), or use "
                               "format 'raw' for the bytes",
                               stmt.name));
  }
  if (payload) {
    schema = *payload;
  } else {
    addDeclared(schema, stmt.columns);
  }
  std::pair<const char*, DataTypePtr> meta[] = {
      {kMetaKey, DataType::of(TypeId::Binary)},
      {kMetaTimestamp, DataType::of(TypeId::Timestamp)},
      {kMetaPartition, DataType::of(TypeId::Int)},
      {kMetaOffset, DataType::of(TypeId::BigInt)},
      {kMetaHeaders, headersType()},
  };
  for (auto& [name, type] : meta) {
    int clash = schema.find(name);
    if (clash >= 0) {
      throw SqlError(
          sqlstate::kDuplicateColumn,
          fmt::format("column \"{}\" clashes with the hidden Kafka metadata column", name),
          static_cast<size_t>(clash) < stmt.columns.size()
              ? stmt.columns[static_cast<size_t>(clash)].pos
              : valuePosOf(stmt.options, format == "protobuf" ? "protobuf.message" : "avro.schema",
                           stmt.namePos),
          "rename the column: _key, _timestamp, _partition, _offset and _headers are "
          "reserved");
    }
    schema.columns.push_back(Column{name, std::move(type), true});
  }
  return schema;
}

Schema bindTableSchema(const ast::CreateTable& stmt) {
  if (stmt.columns.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a table needs a column list", stmt.namePos);
  }
  return bindColumns(stmt.columns);
}

std::optional<WatermarkDef> bindWatermark(const ast::CreateSource& stmt, const Schema& schema) {
  if (!stmt.watermark) return std::nullopt;
  const ast::Watermark& wm = *stmt.watermark;
  int index = schema.find(wm.column);
  if (index < 0) {
    throw SqlError(sqlstate::kUndefinedColumn,
                   fmt::format("watermark column \"{}\" does not exist", wm.column), wm.pos);
  }
  const Column& col = schema.columns[static_cast<size_t>(index)];
  if (col.type->id != TypeId::Timestamp && col.type->id != TypeId::TimestampNtz) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("watermark column \"{}\" must be TIMESTAMP or TIMESTAMP_NTZ, not {}",
                               col.name,
                               col.type->toString()),
                   wm.pos);
  }
  WatermarkDef def{index, 0};
  if (!wm.expr) return def;
  const ast::Expr& e = *wm.expr;
  auto isTheColumn = [&](const ast::Expr& x) {
    return x.kind == ast::ExprKind::Column && x.parts.size() == 1 && iequals(x.parts[0], col.name);
  };
  auto shapeError = [&](size_t pos) {
    return SqlError(sqlstate::kFeatureNotSupported,
                    "a watermark must be the column minus an interval", pos)
        .withHint(fmt::format("WATERMARK FOR {0} AS {0} - INTERVAL '10' SECOND", col.name));
  };
  if (isTheColumn(e)) return def;
  if (e.kind != ast::ExprKind::Binary || e.op != "-" || e.args.size() != 2 ||
      !isTheColumn(*e.args[0])) {
    throw shapeError(e.pos);
  }
  // The delay may be any constant interval expression (INTERVAL '1' MINUTE * 2).
  ExprPtr delay = bindExpression(*e.args[1], Schema{});
  if (delay->type()->id != TypeId::Interval || !delay->isConstant()) throw shapeError(e.args[1]->pos);
  Value v = delay->eval(Row{});
  if (v.isNull() || v.asInt() < 0) {
    throw SqlError(sqlstate::kInvalidParameterValue, "the watermark delay must not be negative",
                   e.args[1]->pos);
  }
  def.delayMicros = v.asInt();
  return def;
}

bool isAvroName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace rtsql
