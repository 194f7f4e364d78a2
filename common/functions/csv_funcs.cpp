// CSV functions: from_csv(text, schema) to a struct, to_csv(struct) and
// schema_of_csv, with Spark's CSV defaults: ',' between fields, '"' quotes a
// field, '\' escapes a character inside quotes, and an empty field is NULL.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "common/functions/schema_string.h"
#include "common/json.h"
#include "common/year_month_interval.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

// The fields of one CSV line. A field that started quoted keeps what the
// quotes enclose, without them.
std::vector<std::optional<std::string>> splitCsv(std::string_view line) {
  std::vector<std::optional<std::string>> fields;
  std::string cur;
  bool quoted = false, inQuotes = false, any = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (inQuotes) {
      if (c == '\\' && i + 1 < line.size()) {
        cur += line[++i];
      } else if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          inQuotes = false;
        }
      } else {
        cur += c;
      }
      continue;
    }
    if (c == ',') {
      fields.push_back(cur.empty() && !quoted ? std::nullopt : std::optional<std::string>(cur));
      cur.clear();
      quoted = false;
      any = false;
      continue;
    }
    if (c == '"' && !any) {
      inQuotes = quoted = true;
      any = true;
      continue;
    }
    cur += c;
    any = true;
  }
  fields.push_back(cur.empty() && !quoted ? std::nullopt : std::optional<std::string>(cur));
  return fields;
}

// from_csv(text, schema): each field converted as CAST converts text to the
// field's type; a field that does not convert, or is missing, is NULL.
ExprPtr buildFromCsv(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  auto c = constantValue(args[1]);
  if (!c || c->type() != TypeId::String)
    throwArgError(name, args, pos, "the schema must be a string literal");
  DataTypePtr t;
  try {
    t = readSchemaString(c->asString(), name);
  } catch (SqlError& e) {
    throw SqlError(e.sqlstate(), e.message(), pos, e.hint());
  }
  if (t->id != TypeId::Struct)
    throwArgError(name, args, pos, "the schema must be a list of fields: 'a INT, b STRING'");
  auto casts = std::make_shared<std::vector<ExprPtr>>();
  // A field that does not parse is NULL in both modes (Spark's PERMISSIVE).
  AnsiModeScope legacy(false);
  for (size_t i = 0; i < t->fields.size(); ++i) {
    const auto& ft = t->fields[i].type;
    if (ft->id == TypeId::Array || ft->id == TypeId::Struct)
      throwArgError(name, args, pos,
                    fmt::format("field {} must have a scalar type", t->fields[i].name));
    casts->push_back(makeCast(makeColumnRef(0, DataType::of(TypeId::String), {}), ft, pos));
  }
  return fn2(name, t, args, [casts](const Value& text, const Value&) {
    auto fields = splitCsv(text.asString());
    ValueList out(casts->size());
    Row one(1);
    for (size_t i = 0; i < casts->size() && i < fields.size(); ++i) {
      if (!fields[i]) continue;
      one[0] = Value::string(std::move(*fields[i]));
      out[i] = (*casts)[i]->eval(one);
    }
    return Value::structure(std::move(out));
  });
}

void appendCsvField(std::string& out, const Value& v, const DataType& t) {
  if (v.isNull()) return;
  std::string text;
  switch (v.type()) {
    case TypeId::String:
    case TypeId::Binary:
      text = v.asString();
      break;
    case TypeId::Double:
      text = formatDouble(v.asDouble());
      break;
    case TypeId::Timestamp:
      text = formatSparkTimestamp(v.asInt());
      break;
    case TypeId::TimestampNtz:  // without the offset, as Spark writes it
      text = formatSparkTimestamp(v.asInt());
      text.pop_back();
      break;
    case TypeId::YearMonthInterval:  // INTERVAL '1-2' YEAR TO MONTH, as Spark writes it
      text = ym::sparkText(v.asInt(), t.id == TypeId::YearMonthInterval
                                          ? t
                                          : *DataType::of(TypeId::YearMonthInterval));
      break;
    default:
      text = v.toString();
      break;
  }
  bool quote = text.find_first_of(",\"\\\r\n") != std::string::npos ||
               (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// to_csv(struct): one CSV line of the struct's fields.
ExprPtr buildToCsv(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (isNullType(args[0]->type())) return makeLiteral(Value(), DataType::of(TypeId::String));  // to_csv(NULL)
  const auto& t = args[0]->type();
  if (t->id != TypeId::Struct) throwArgError(name, args, pos, "the argument must be a STRUCT");
  for (const auto& f : t->fields)
    if (f.type->id == TypeId::Array || f.type->id == TypeId::Struct)
      throwArgError(name, args, pos, fmt::format("field {} must have a scalar type", f.name));
  DataTypePtr st = t;
  return fn1(name, DataType::of(TypeId::String), args, [st](const Value& v) {
    std::string out;
    const ValueList& items = v.asList();
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      appendCsvField(out, items[i], *st->fields[i].type);
      checkValueSize("to_csv", out.size());
    }
    return Value::string(std::move(out));
  });
}

// The type Spark's CSV inference gives one field's text.
std::string inferCsvType(const std::string& f) {
  if (f.empty() || f.find_first_of(" \t") != std::string::npos) return "STRING";
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(f.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) return n >= INT32_MIN && n <= INT32_MAX ? "INT" : "BIGINT";
  std::strtod(f.c_str(), &end);
  if (*end == '\0') return "DOUBLE";
  if (iequals(f, "true") || iequals(f, "false")) return "BOOLEAN";
  int64_t us;
  if (f.size() > 10 && parseTimestamp(f, &us)) return "TIMESTAMP";
  return "STRING";
}

// schema_of_csv(text): the types Spark infers for each field (_c0, _c1...).
ExprPtr buildSchemaOfCsv(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::String), args, [](const Value& v) {
    // Empty text has no record to infer from: Spark raises for it.
    if (v.asString().empty())
      throw SqlError(sqlstate::kInvalidParameterValue, "schema_of_csv: the sample text is empty",
                     SqlError::npos, "pass a sample CSV record");
    auto fields = splitCsv(v.asString());
    std::string out = "STRUCT<";
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) out += ", ";
      std::string type = fields[i] ? inferCsvType(*fields[i]) : "STRING";
      out += fmt::format("_c{}: {}", i, type);
    }
    return Value::string(out + ">");
  });
}

}  // namespace

void registerCsvFunctions(FunctionTable& t) {
  t["from_csv"] = {2, 2, buildFromCsv};
  t["to_csv"] = {1, 1, buildToCsv};
  t["schema_of_csv"] = {1, 1, buildSchemaOfCsv};
}

}  // namespace rtsql::expr_internal
