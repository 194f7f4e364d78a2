// AvroSchema (see avro_schema.h): the schema tree from the JSON text, the SQL
// columns it gives, and the schema of a sink's columns.
#include "connectors/format/avro_schema.h"

#include <avro.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "common/error.h"
#include "common/json.h"
#include "connectors/format/decode_util.h"
#include "connectors/format/float_widening.h"
#include "connectors/format/schema_text.h"
#include "planner/planner.h"

namespace rtsql::format {

namespace {

namespace dom = simdjson::dom;
using AvroKind = AvroNode::Kind;

[[noreturn]] void invalid(size_t pos, const std::string& why) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("'avro.schema' is not a valid Avro schema: {}", why), pos,
                 "give the writer's schema as JSON, e.g. {\"type\": \"record\", \"name\": "
                 "\"Click\", \"fields\": [{\"name\": \"id\", \"type\": \"long\"}]}");
}

// A type that takes no bytes at all in the binary encoding: an array of them
// would let a record claim billions of items for free.
// (A record reaching itself through records alone has no finite value: it
// counts as taking no bytes, and is refused with them.)
bool takesNoBytes(const AvroNode& n, int depth = 0) {
  if (depth > 64) return true;
  if (n.kind == AvroKind::Null || (n.kind == AvroKind::Fixed && n.size == 0)) return true;
  if (n.kind == AvroKind::Record) {
    for (const auto& [name, f] : n.fields)
      if (!takesNoBytes(*f, depth + 1)) return false;
    return true;
  }
  return false;
}

}  // namespace

// Reads the JSON schema into AvroNodes. Named types (record, enum, fixed) are
// registered under their full name and their short name, so that a later
// reference by either finds them.
class AvroSchemaParser {
 public:
  AvroSchemaParser(AvroSchema& out, size_t pos) : out_(out), pos_(pos) {}

  const AvroNode* parse(dom::element e, const std::string& ns, int depth) {
    if (depth > 64) invalid(pos_, "nested more than 64 levels");
    if (e.is_string()) return named(std::string(std::string_view(e.get_string().value())), ns);
    if (e.is_array()) {
      AvroNode* u = add(AvroKind::Union);
      dom::array branches = e.get_array().value();
      for (dom::element b : branches) u->branches.push_back(parse(b, ns, depth + 1));
      return u;
    }
    if (!e.is_object()) invalid(pos_, "a type is a name, an object or an array (a union)");
    dom::object o = e.get_object().value();
    std::string_view type;
    if (o["type"].get(type) != simdjson::SUCCESS) {
      dom::element inner;
      if (o["type"].get(inner) == simdjson::SUCCESS) return parse(inner, ns, depth + 1);
      invalid(pos_, "an object type needs \"type\"");
    }
    std::string logical;
    std::string_view lt;
    if (o["logicalType"].get(lt) == simdjson::SUCCESS) logical = std::string(lt);
    AvroNode* n = nullptr;
    if (type == "record" || type == "error" || type == "enum" || type == "fixed") {
      std::string_view name, space;
      if (o["name"].get(name) != simdjson::SUCCESS)
        invalid(pos_, fmt::format("a {} needs a name", type));
      std::string nsHere = ns;
      if (o["namespace"].get(space) == simdjson::SUCCESS) nsHere = std::string(space);
      std::string full(name);
      if (full.find('.') == std::string::npos && !nsHere.empty()) full = nsHere + "." + full;
      const std::string childNs =
          full.rfind('.') == std::string::npos ? "" : full.substr(0, full.rfind('.'));
      n = add(type == "enum" ? AvroKind::Enum : type == "fixed" ? AvroKind::Fixed : AvroKind::Record);
      n->name = full;
      n->logical = logical;
      // The Avro specification forbids defining a name twice; libavro's
      // reader leaks what it built when it meets one, so this reader, which
      // runs first, refuses it.
      if (byName_.count(full)) invalid(pos_, fmt::format("type \"{}\" is defined twice", full));
      // Registered before the fields: a record may refer to itself.
      byName_[full] = n;
      byName_.emplace(full.substr(full.rfind('.') == std::string::npos ? 0 : full.rfind('.') + 1),
                      n);
      if (n->kind == AvroKind::Record) {
        dom::array fields;
        if (o["fields"].get(fields) != simdjson::SUCCESS)
          invalid(pos_, "a record needs \"fields\"");
        for (dom::element f : fields) {
          std::string_view fname;
          dom::element ftype;
          if (f["name"].get(fname) != simdjson::SUCCESS ||
              f["type"].get(ftype) != simdjson::SUCCESS) {
            invalid(pos_, fmt::format("a field of record {} needs a name and a type", full));
          }
          n->fields.emplace_back(std::string(fname), parse(ftype, childNs, depth + 1));
        }
      } else if (n->kind == AvroKind::Fixed) {
        int64_t size = 0;
        if (o["size"].get(size) != simdjson::SUCCESS || size < 0) {
          invalid(pos_, "a fixed needs a \"size\"");
        }
        n->size = static_cast<size_t>(size);
      } else if (n->kind == AvroKind::Enum) {
        dom::array symbols;
        if (o["symbols"].get(symbols) != simdjson::SUCCESS)
          invalid(pos_, "an enum needs \"symbols\"");
        for (dom::element s : symbols) {
          std::string_view sym;
          if (s.get(sym) != simdjson::SUCCESS) invalid(pos_, "an enum's symbols are strings");
          n->symbols.emplace_back(sym);
        }
      }
      return n;
    }
    if (type == "array" || type == "map") {
      dom::element items;
      if (o[type == "array" ? "items" : "values"].get(items) != simdjson::SUCCESS) {
        invalid(pos_,
                fmt::format("an {} needs \"{}\"", type, type == "array" ? "items" : "values"));
      }
      n = add(type == "array" ? AvroKind::Array : AvroKind::Map);
      n->items = parse(items, ns, depth + 1);
      n->logical = logical;
      return n;
    }
    const AvroNode* prim = named(std::string(type), ns);
    if (logical.empty()) return prim;
    n = add(prim->kind);
    n->logical = logical;
    return n;
  }

 private:
  AvroNode* add(AvroKind k) {
    out_.nodes_.push_back(std::make_unique<AvroNode>());
    out_.nodes_.back()->kind = k;
    return out_.nodes_.back().get();
  }

  const AvroNode* named(const std::string& name, const std::string& ns) {
    static const std::pair<const char*, AvroKind> kPrimitives[] = {
        {"null", AvroKind::Null},   {"boolean", AvroKind::Boolean}, {"int", AvroKind::Int},
        {"long", AvroKind::Long},   {"float", AvroKind::Float},     {"double", AvroKind::Double},
        {"bytes", AvroKind::Bytes}, {"string", AvroKind::String}};
    for (const auto& [p, k] : kPrimitives) {
      if (name == p) return add(k);
    }
    if (!ns.empty()) {
      auto it = byName_.find(ns + "." + name);
      if (it != byName_.end()) return it->second;
    }
    auto it = byName_.find(name);
    if (it != byName_.end()) return it->second;
    invalid(pos_, fmt::format("unknown type \"{}\"", name));
  }

  AvroSchema& out_;
  size_t pos_;
  std::map<std::string, const AvroNode*> byName_;
};

namespace {

void* boundedAvroAllocation(void* /*userData*/, void* ptr, size_t /*oldSize*/, size_t newSize) {
  constexpr size_t kMostBytes = size_t{256} << 20;
  if (newSize == 0) {
    std::free(ptr);
    return nullptr;
  }
  if (newSize > kMostBytes) return nullptr;
  return std::realloc(ptr, newSize);
}

}  // namespace

void useBoundedAvroAllocator() {
  static std::once_flag once;
  std::call_once(once, [] { avro_set_allocator(boundedAvroAllocation, nullptr); });
}

std::shared_ptr<const AvroSchema> AvroSchema::parse(std::string_view json, size_t pos) {
  useBoundedAvroAllocator();
  // Bounded before libavro's JSON reader and its schema walk, which recurse
  // per level.
  if (std::string problem = schemaTextProblem(json, SchemaTextSyntax::Json); !problem.empty())
    invalid(pos, problem);
  auto schema = std::make_shared<AvroSchema>();
  schema->json_ = std::string(json);
  dom::parser parser;
  dom::element doc;
  if (parser.parse(schema->json_).get(doc) != simdjson::SUCCESS) invalid(pos, "not JSON");
  AvroSchemaParser p(*schema, pos);
  schema->root_ = p.parse(doc, "", 0);
  // libavro's own check next, on a text this reader took: the codecs parse
  // the same text with it, and its reader leaks on some texts it refuses.
  avro_schema_t checked = nullptr;
  avro_set_error("%s", "");
  if (avro_schema_from_json_length(json.data(), json.size(), &checked) != 0) {
    std::string why = avro_strerror();
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    invalid(pos, why.empty() ? "libavro cannot read it" : why);
  }
  avro_schema_decref(checked);
  for (const auto& n : schema->nodes_) {
    if (n->kind == AvroKind::Array && takesNoBytes(*n->items)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "an Avro array whose items take no bytes (null, or a record of nulls) is "
                     "not read",
                     pos, "give the array's items a type with a value");
    }
  }
  return schema;
}

const AvroNode& AvroSchema::nonNull(const AvroNode& node) {
  if (node.kind == AvroKind::Union && node.branches.size() == 2) {
    if (node.branches[0]->kind == AvroKind::Null) return *node.branches[1];
    if (node.branches[1]->kind == AvroKind::Null) return *node.branches[0];
  }
  return node;
}

DataTypePtr AvroSchema::sqlType(const AvroNode& node, size_t pos, const std::string& path,
                                int depth) {
  auto refuse = [&](const std::string& what, const char* hint) -> DataTypePtr {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("Avro field {}: {} has no SQL type in rtsql", path, what), pos,
                   hint);
  };
  // A schema's text nests at most 64 levels; deeper means a record reaches itself.
  if (depth > 64) {
    return refuse("a recursive record",
                  "rtsql's types are finite: no field may hold its own record");
  }
  const AvroNode& n = nonNull(node);
  const std::string& lt = n.logical;
  switch (n.kind) {
    case AvroKind::Null:
      return refuse("null", "a field of type null carries nothing to read");
    case AvroKind::Boolean:
      return DataType::of(TypeId::Boolean);
    case AvroKind::Int:
      return DataType::of(lt == "date" ? TypeId::Date : TypeId::Int);
    case AvroKind::Long:
      // timestamp-* is an instant (TIMESTAMP), local-timestamp-* a wall
      // clock (TIMESTAMP_NTZ), as Spark reads them.
      if (lt == "timestamp-millis" || lt == "timestamp-micros") return DataType::of(TypeId::Timestamp);
      if (lt == "local-timestamp-millis" || lt == "local-timestamp-micros")
        return DataType::of(TypeId::TimestampNtz);
      return DataType::of(TypeId::BigInt);
    case AvroKind::Float:
      return DataType::of(TypeId::Float);
    case AvroKind::Double:
      return DataType::of(TypeId::Double);
    case AvroKind::String:
    case AvroKind::Enum:
      return DataType::of(TypeId::String);
    case AvroKind::Bytes:
    case AvroKind::Fixed:
      if (lt == "decimal") return refuse("decimal", "rtsql has no DECIMAL type yet");
      return DataType::of(TypeId::Binary);
    case AvroKind::Array:
      return DataType::arrayOf(sqlType(*n.items, pos, path + "[]", depth + 1));
    case AvroKind::Record: {
      std::vector<StructField> fields;
      for (const auto& [name, f] : n.fields)
        fields.push_back({name, sqlType(*f, pos, path + "." + name, depth + 1)});
      return DataType::structOf(std::move(fields));
    }
    case AvroKind::Map:
      return refuse("map", "rtsql has no MAP type yet");
    case AvroKind::Union:
      return refuse("a union of other than null and one type",
                    "only [\"null\", T] unions are read, as a nullable T");
  }
  return refuse("this type", nullptr);
}

Schema avroSourceColumns(const AvroSchema& schema, const Schema& declared,
                         const std::vector<size_t>& declaredPos, size_t schemaPos) {
  const AvroNode& root = schema.root();
  if (root.kind != AvroKind::Record) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "a source's 'avro.schema' must be a record: each field is a column", schemaPos);
  }
  // Every field is read from each datum, declared or not: each must have a
  // SQL type, which also refuses a record that reaches itself.
  std::vector<DataTypePtr> fieldTypes;
  for (const auto& [name, f] : root.fields) {
    fieldTypes.push_back(AvroSchema::sqlType(*f, schemaPos, name));
  }
  Schema out;
  if (declared.columns.empty()) {
    for (size_t f = 0; f < root.fields.size(); ++f) {
      out.columns.push_back(Column{root.fields[f].first, fieldTypes[f], false});
    }
    return out;
  }
  for (size_t i = 0; i < declared.columns.size(); ++i) {
    const Column& c = declared.columns[i];
    const size_t pos = i < declaredPos.size() ? declaredPos[i] : schemaPos;
    const DataType* t = nullptr;
    for (size_t f = 0; f < root.fields.size(); ++f) {
      if (iequals(root.fields[f].first, c.name)) t = fieldTypes[f].get();
    }
    if (!t) {
      throw SqlError(
          sqlstate::kUndefinedColumn,
          fmt::format("column \"{}\" is not a field of Avro record {}", c.name, root.name), pos,
          "declare only fields of the record, or no columns to read them all");
    }
    // A DOUBLE over a float is how sources were declared before floats read
    // as FLOAT: such a column goes on reading the float as a DOUBLE.
    if (!t->equals(*c.type) && !floatsWidened(*t, *c.type)) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("column \"{}\" is declared {}, but its Avro field reads as {}",
                                 c.name, c.type->toString(), t->toString()),
                     pos, "declare the column with the field's type, then CAST it in the flow");
    }
    out.columns.push_back(c);
  }
  return out;
}

namespace {

void appendRecord(std::string& out, const std::string& name,
                  const std::vector<std::pair<std::string_view, const DataType*>>& fields,
                  const std::string& path, int& records, bool nullFirst);

// `t` as an Avro type, every field, item and map value of it a union of null
// and its type: null first (with a default of null) as the sink writes them,
// or last as Spark's to_avro does (`nullFirst` false).
void appendAvroType(std::string& out, const DataType& t, const std::string& path, int& records,
                    bool nullFirst = true);

// `t` as a union of null and its type, in the order `nullFirst` says.
void appendNullable(std::string& out, const DataType& t, const std::string& path, int& records,
                    bool nullFirst) {
  out += nullFirst ? "[\"null\"," : "[";
  appendAvroType(out, t, path, records, nullFirst);
  out += nullFirst ? "]" : ",\"null\"]";
}

void appendAvroType(std::string& out, const DataType& t, const std::string& path, int& records,
                    bool nullFirst) {
  switch (t.id) {
    case TypeId::Boolean:
      out += "\"boolean\"";
      return;
    case TypeId::Int:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
      out += "\"int\"";
      return;
    case TypeId::YearMonthInterval:
      out += "\"int\"";  // its months, as Spark's to_avro writes a year-month interval
      return;
    case TypeId::Float:
      out += "\"float\"";
      return;
    case TypeId::BigInt:
    case TypeId::Interval:
      out += "\"long\"";
      return;
    case TypeId::Double:
      out += "\"double\"";
      return;
    case TypeId::String:
    case TypeId::Null:
      out += "\"string\"";
      return;
    case TypeId::Binary:
      out += "\"bytes\"";
      return;
    case TypeId::Timestamp:
      out += R"({"type":"long","logicalType":"timestamp-micros"})";
      return;
    case TypeId::TimestampNtz:
      out += R"({"type":"long","logicalType":"local-timestamp-micros"})";
      return;
    case TypeId::Decimal:
      out += fmt::format(R"({{"type":"bytes","logicalType":"decimal","precision":{},"scale":{}}})",
                         t.precision, t.scale);
      return;
    case TypeId::Date:
      out += R"({"type":"int","logicalType":"date"})";
      return;
    case TypeId::Array:
      out += R"({"type":"array","items":)";
      appendNullable(out, *t.element, path, records, nullFirst);
      out += "}";
      return;
    case TypeId::Struct: {
      std::vector<std::pair<std::string_view, const DataType*>> fields;
      for (const StructField& f : t.fields) fields.emplace_back(f.name, f.type.get());
      appendRecord(out, fmt::format("{}_{}", path, ++records), fields, path, records, nullFirst);
      return;
    }
    case TypeId::Map:
      // Avro's map has string keys: a key is written as its text.
      out += R"({"type":"map","values":)";
      appendNullable(out, t.value ? *t.value : *DataType::of(TypeId::String), path, records,
                     nullFirst);
      out += "}";
      return;
  }
}

// A record `name` with one nullable field (default null) per entry of
// `fields`. Every name must be an Avro name: CREATE FLOW checks a sink's
// columns and struct fields first (planner.cpp), so this refusal is the
// fallback of a caller that did not.
void appendRecord(std::string& out, const std::string& name,
                  const std::vector<std::pair<std::string_view, const DataType*>>& fields,
                  const std::string& path, int& records, bool nullFirst) {
  out += R"({"type":"record","name":)";
  appendJsonString(out, name);
  out += R"(,"fields":[)";
  bool first = true;
  for (const auto& [fieldName, type] : fields) {
    if (!isAvroName(fieldName)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("\"{}\" is not a valid Avro field name", fieldName),
                     SqlError::npos,
                     "Avro names are letters, digits and _ (not starting with a digit): give the "
                     "column an alias or the field another name");
    }
    if (!first) out += ',';
    first = false;
    out += R"({"name":)";
    appendJsonString(out, fieldName);
    out += R"(,"type":)";
    appendNullable(out, *type, path.empty() ? std::string(fieldName) : path, records, nullFirst);
    out += nullFirst ? R"(,"default":null})" : "}";
  }
  out += "]}";
}

}  // namespace

std::string avroSinkSchema(const Schema& columns, const std::string& name) {
  std::vector<std::pair<std::string_view, const DataType*>> fields;
  for (const Column& c : columns.columns) {
    if (!c.hidden) fields.emplace_back(c.name, c.type.get());
  }
  std::string out;
  int records = 0;
  // A top-level field's nested records are named after the field (path "").
  appendRecord(out, isAvroName(name) ? name : "row", fields, "", records, true);
  return out;
}

std::string avroValueSchema(const DataType& type) {
  std::string out;
  int records = 0;
  appendNullable(out, type, "topLevelRecord", records, false);
  return out;
}

}  // namespace rtsql::format
