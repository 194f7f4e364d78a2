// JSON functions: get_json_object(json, '$.a.b[0]') with Spark's path syntax
// (simdjson's DOM parser, one per thread and reused, so a record costs no
// parser allocation), to_json(struct or array), from_json(json, schema) to a
// struct or array, json_array_length, json_object_keys and schema_of_json.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/functions/internal.h"
#include "common/functions/map_funcs.h"
#include "common/functions/schema_string.h"
#include "common/json.h"
#include "common/schema.h"
#include "common/year_month_interval.h"

namespace rtsql::expr_internal {

namespace {

struct PathStep {
  std::string key;  // object member, when index == -1
  int64_t index = -1;  // kWildcard for [*]
};
constexpr int64_t kWildcard = -2;
using Path = std::vector<PathStep>;

// Parses "$", ".name", "['name']", "[0]", "[*]"; false on anything else
// (Spark then gives NULL).
bool parsePath(std::string_view p, Path* out) {
  out->clear();
  if (p.empty() || p[0] != '$') return false;
  size_t i = 1;
  while (i < p.size()) {
    if (p[i] == '.') {
      size_t j = ++i;
      while (j < p.size() && p[j] != '.' && p[j] != '[') ++j;
      if (j == i) return false;
      out->push_back({std::string(p.substr(i, j - i)), -1});
      i = j;
    } else if (p[i] == '[') {
      ++i;
      if (p.substr(i, 2) == "*]") {
        out->push_back({{}, kWildcard});
        i += 2;
      } else if (i < p.size() && p[i] == '\'') {
        size_t j = p.find('\'', i + 1);
        if (j == std::string_view::npos || j + 1 >= p.size() || p[j + 1] != ']') return false;
        out->push_back({std::string(p.substr(i + 1, j - i - 1)), -1});
        i = j + 2;
      } else {
        size_t j = i;
        int64_t n = 0;
        while (j < p.size() && p[j] >= '0' && p[j] <= '9') n = n * 10 + (p[j++] - '0');
        if (j == i || j >= p.size() || p[j] != ']') return false;
        out->push_back({{}, n});
        i = j + 1;
      }
    } else {
      return false;
    }
  }
  return true;
}

// Every element `path` reaches from `el` from step `at` on, [*] taking each
// item of an array; JSON nulls are no match, as in Spark.
void collectMatches(simdjson::dom::element el, const Path& path, size_t at,
                    std::vector<simdjson::dom::element>* out) {
  for (; at < path.size(); ++at) {
    const PathStep& step = path[at];
    if (step.index == kWildcard) {
      simdjson::dom::array arr;
      if (el.get_array().get(arr) != simdjson::SUCCESS) return;
      for (simdjson::dom::element item : arr) collectMatches(item, path, at + 1, out);
      return;
    }
    if (step.index >= 0) {
      simdjson::dom::array arr;
      if (el.get_array().get(arr) != simdjson::SUCCESS) return;
      if (arr.at(static_cast<size_t>(step.index)).get(el) != simdjson::SUCCESS) return;
    } else {
      simdjson::dom::object obj;
      if (el.get_object().get(obj) != simdjson::SUCCESS) return;
      if (obj.at_key(step.key).get(el) != simdjson::SUCCESS) return;
    }
  }
  if (!el.is_null()) out->push_back(el);
}

Value extract(const std::string& json, const Path& path) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element el;
  if (parser.parse(json).get(el) != simdjson::SUCCESS) return {};
  bool wildcard = false;
  for (const auto& step : path) wildcard = wildcard || step.index == kWildcard;
  if (wildcard) {
    // Spark's [*]: no match is NULL, one match its JSON text (a string keeps
    // its quotes), several a JSON array of them, nested [*] flattened.
    std::vector<simdjson::dom::element> matches;
    collectMatches(el, path, 0, &matches);
    if (matches.empty()) return {};
    if (matches.size() == 1) return Value::string(simdjson::to_string(matches[0]));
    std::string out = "[";
    for (size_t i = 0; i < matches.size(); ++i) {
      if (i) out += ',';
      out += simdjson::to_string(matches[i]);
      checkValueSize("get_json_object", out.size());
    }
    out += ']';
    return Value::string(std::move(out));
  }
  for (const auto& step : path) {
    if (step.index >= 0) {
      simdjson::dom::array arr;
      if (el.get_array().get(arr) != simdjson::SUCCESS) return {};
      if (arr.at(static_cast<size_t>(step.index)).get(el) != simdjson::SUCCESS) return {};
    } else {
      simdjson::dom::object obj;
      if (el.get_object().get(obj) != simdjson::SUCCESS) return {};
      if (obj.at_key(step.key).get(el) != simdjson::SUCCESS) return {};
    }
  }
  if (el.is_null()) return {};
  if (el.is_string()) {
    std::string_view sv;
    if (el.get_string().get(sv) != simdjson::SUCCESS) return {};
    return Value::string(std::string(sv));
  }
  return Value::string(simdjson::to_string(el));
}

ExprPtr buildGetJsonObject(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (auto c = constantValue(args[1]); c && !c->isNull()) {
    // A path that does not parse matches nothing: NULL for every document,
    // as Spark gives.
    auto path = std::make_shared<Path>();
    if (!parsePath(c->asString(), path.get()))
      return fn2(name, DataType::of(TypeId::String), args, [](const Value&, const Value&) { return Value(); });
    return fn2(name, DataType::of(TypeId::String), args,
               [path](const Value& j, const Value&) { return extract(j.asString(), *path); });
  }
  return fn2(name, DataType::of(TypeId::String), args, [](const Value& j, const Value& p) {
    Path path;
    if (!parsePath(p.asString(), &path)) return Value();
    return extract(j.asString(), path);
  });
}

// to_json writes structs as Spark does by default (ignoreNullFields): a NULL
// field is left out of its object; NULL array elements stay as null.
// Timestamps are written in Spark's default timestampFormat for JSON,
// yyyy-MM-dd'T'HH:mm:ss.SSSXXX: milliseconds, always three digits.
void appendJsonSkippingNullFields(std::string& out, const Value& v, const DataType& t) {
  if (!v.isNull() && (t.id == TypeId::Timestamp || t.id == TypeId::TimestampNtz)) {
    // A TIMESTAMP_NTZ without the offset, as Spark writes it.
    std::string text = formatSparkTimestamp(v.asInt());
    if (t.id == TypeId::TimestampNtz) text.pop_back();
    out += '"';
    out += text;
    out += '"';
    return;
  }
  if (v.isNull() || (t.id != TypeId::Struct && t.id != TypeId::Array && t.id != TypeId::Map)) {
    appendJsonValue(out, v, t);
    return;
  }
  const ValueList& items = v.asList();
  if (t.id == TypeId::Map) {
    // A map keeps its NULL values (null), as Spark writes them.
    out += '{';
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (i) out += ',';
      appendJsonString(out, items[i].toString());
      out += ':';
      appendJsonSkippingNullFields(out, items[i + 1], *t.value);
    }
    out += '}';
    return;
  }
  if (t.id == TypeId::Array) {
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      appendJsonSkippingNullFields(out, items[i], *t.element);
    }
    out += ']';
    return;
  }
  out += '{';
  bool first = true;
  for (size_t i = 0; i < items.size() && i < t.fields.size(); ++i) {
    if (items[i].isNull()) continue;
    if (!first) out += ',';
    first = false;
    appendJsonString(out, t.fields[i].name);
    out += ':';
    appendJsonSkippingNullFields(out, items[i], *t.fields[i].type);
  }
  out += '}';
}

ExprPtr buildToJson(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (isNullType(args[0]->type())) return makeLiteral(Value(), DataType::of(TypeId::String));  // to_json(NULL)
  auto id = args[0]->type()->id;
  if (id != TypeId::Struct && id != TypeId::Array && id != TypeId::Map)
    throwArgError(name, args, pos, "the argument must be a STRUCT, an ARRAY or a MAP",
                  "build one with named_struct('a', x, ...) or struct(x, y)");
  DataTypePtr t = args[0]->type();
  return fn1(name, DataType::of(TypeId::String), args, [t](const Value& v) {
    std::string out;
    appendJsonSkippingNullFields(out, v, *t);
    // Escaping can multiply a string's size; nested calls would compound it.
    checkValueSize("to_json", out.size());
    return Value::string(std::move(out));
  });
}

// ---- from_json and friends ----------------------------------------------------

// A parsed JSON element converted to `type`; NULL where it does not fit.
Value fromJsonElement(simdjson::dom::element el, const DataType& type) {
  using simdjson::dom::element_type;
  element_type k = el.type();
  if (k == element_type::NULL_VALUE) return {};
  switch (type.id) {
    case TypeId::Boolean:
      return k == element_type::BOOL ? Value::boolean(el.get_bool().value_unsafe()) : Value();
    case TypeId::Int:
    case TypeId::BigInt: {
      int64_t v;
      if (k == element_type::INT64)
        v = el.get_int64().value_unsafe();
      else if (k == element_type::UINT64)
        return {};
      else
        return {};
      if (type.id == TypeId::Int) {
        if (v < INT32_MIN || v > INT32_MAX) return {};
        return Value::integer(static_cast<int32_t>(v));
      }
      return Value::bigint(v);
    }
    case TypeId::Double:
      if (k == element_type::DOUBLE || k == element_type::INT64 || k == element_type::UINT64)
        return Value::float64(el.get_double().value_unsafe());
      if (k == element_type::STRING) {
        std::string_view sv = el.get_string().value_unsafe();
        if (sv == "NaN") return Value::float64(std::nan(""));
        if (sv == "Infinity") return Value::float64(HUGE_VAL);
        if (sv == "-Infinity") return Value::float64(-HUGE_VAL);
      }
      return {};
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Float: {
      // Read as a BIGINT or a DOUBLE, then kept when it fits the type (NULL
      // otherwise, as for INT).
      Value wide = fromJsonElement(el, *DataType::of(type.id == TypeId::Float ? TypeId::Double : TypeId::BigInt));
      if (wide.isNull()) return wide;
      if (type.id == TypeId::Float) return Value::float32(static_cast<float>(wide.asDouble()));
      const bool tiny = type.id == TypeId::TinyInt;
      if (wide.asInt() < (tiny ? INT8_MIN : INT16_MIN) || wide.asInt() > (tiny ? INT8_MAX : INT16_MAX)) return {};
      return narrowIntegralWrapping(wide.asInt(), type.id);
    }
    case TypeId::String:
      // A non-string value becomes its JSON text, as in Spark.
      if (k == element_type::STRING)
        return Value::string(std::string(el.get_string().value_unsafe()));
      return Value::string(simdjson::to_string(el));
    case TypeId::Binary: {
      if (k != element_type::STRING) return {};
      std::string out;
      return fromBase64(el.get_string().value_unsafe(), &out) ? Value::binary(std::move(out))
                                                              : Value();
    }
    case TypeId::Timestamp: {
      if (k != element_type::STRING) return {};
      int64_t us;
      return parseTimestamp(el.get_string().value_unsafe(), &us) ? Value::timestamp(us) : Value();
    }
    case TypeId::TimestampNtz: {
      if (k != element_type::STRING) return {};
      int64_t us;
      return parseTimestamp(el.get_string().value_unsafe(), &us, false) ? Value::timestampNtz(us)
                                                                        : Value();
    }
    case TypeId::YearMonthInterval: {  // Spark's text, as to_json writes it
      if (k != element_type::STRING) return {};
      auto months = ym::parse(el.get_string().value_unsafe(), type.ymStart, type.ymEnd);
      return months ? Value::yearMonthInterval(*months) : Value();
    }
    case TypeId::Array: {
      if (k != element_type::ARRAY) return {};
      ValueList items;
      simdjson::dom::array arr = el.get_array().value_unsafe();
      for (simdjson::dom::element e : arr) items.push_back(fromJsonElement(e, *type.element));
      return Value::array(std::move(items));
    }
    case TypeId::Struct: {
      if (k != element_type::OBJECT) return {};
      ValueList fields(type.fields.size());
      simdjson::dom::object obj = el.get_object().value_unsafe();
      for (auto [key, value] : obj) {
        for (size_t i = 0; i < type.fields.size(); ++i)
          if (type.fields[i].name == key) {
            fields[i] = fromJsonElement(value, *type.fields[i].type);
            break;
          }
      }
      return Value::structure(std::move(fields));
    }
    case TypeId::Map: {
      // An object, its names read as the key type; a name that is no such
      // key leaves the whole map NULL.
      if (k != element_type::OBJECT || !type.key || !type.value) return {};
      ValueList items;
      simdjson::dom::object obj = el.get_object().value_unsafe();
      for (auto [key, value] : obj) {
        Value kv = castValue(Value::string(std::string(key)), *type.key);
        if (kv.isNull()) return {};
        items.push_back(std::move(kv));
        items.push_back(fromJsonElement(value, *type.value));
      }
      return makeMapValue(std::move(items), "from_json");
    }
    default:
      return {};
  }
}

// from_json(json, schema): the schema is a literal, read once. Text that is not
// JSON gives a struct of NULLs for a struct schema (Spark's PERMISSIVE mode)
// and NULL for an array schema.
ExprPtr buildFromJson(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
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
  return fn2(name, t, args, [t](const Value& j, const Value&) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element el;
    if (parser.parse(j.asString()).get(el) != simdjson::SUCCESS) {
      if (t->id != TypeId::Struct) return Value();
      return Value::structure(ValueList(t->fields.size()));
    }
    Value v = fromJsonElement(el, *t);
    if (v.isNull() && t->id == TypeId::Struct) return Value::structure(ValueList(t->fields.size()));
    return v;
  });
}

// json_array_length(json): elements of the outer array; NULL if it is not one.
ExprPtr buildJsonArrayLength(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& j) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element el;
    if (parser.parse(j.asString()).get(el) != simdjson::SUCCESS) return Value();
    simdjson::dom::array arr;
    if (el.get_array().get(arr) != simdjson::SUCCESS) return Value();
    return Value::integer(static_cast<int32_t>(arr.size()));
  });
}

// json_object_keys(json): the outer object's keys; NULL if it is not one.
ExprPtr buildJsonObjectKeys(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::arrayOf(DataType::of(TypeId::String)), args, [](const Value& j) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element el;
    if (parser.parse(j.asString()).get(el) != simdjson::SUCCESS) return Value();
    simdjson::dom::object obj;
    if (el.get_object().get(obj) != simdjson::SUCCESS) return Value();
    ValueList keys;
    for (auto [key, value] : obj) keys.push_back(Value::string(std::string(key)));
    return Value::array(std::move(keys));
  });
}

// The type Spark infers for a JSON value: integers BIGINT, other numbers
// DOUBLE, objects STRUCT with fields sorted by name; types that disagree
// merge to DOUBLE (numbers) or STRING.
std::string inferJson(simdjson::dom::element el);
std::string mergeInferred(const std::string& a, const std::string& b) {
  if (a.empty() || a == b) return b;
  if (b.empty()) return a;
  if ((a == "BIGINT" || a == "DOUBLE") && (b == "BIGINT" || b == "DOUBLE")) return "DOUBLE";
  return "STRING";
}
std::string inferJson(simdjson::dom::element el) {
  using simdjson::dom::element_type;
  switch (el.type()) {
    case element_type::INT64:
    case element_type::UINT64:
      return "BIGINT";
    case element_type::DOUBLE:
      return "DOUBLE";
    case element_type::BOOL:
      return "BOOLEAN";
    case element_type::NULL_VALUE:
      return {};
    case element_type::STRING:
      return "STRING";
    case element_type::ARRAY: {
      std::string e;
      simdjson::dom::array arr = el.get_array().value_unsafe();
      for (simdjson::dom::element x : arr) e = mergeInferred(e, inferJson(x));
      return "ARRAY<" + (e.empty() ? std::string("STRING") : e) + ">";
    }
    case element_type::OBJECT: {
      std::vector<std::pair<std::string, std::string>> fs;
      simdjson::dom::object obj = el.get_object().value_unsafe();
      for (auto [key, value] : obj) {
        std::string t = inferJson(value);
        fs.emplace_back(std::string(key), t.empty() ? "STRING" : t);
      }
      std::stable_sort(fs.begin(), fs.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string s = "STRUCT<";
      for (size_t i = 0; i < fs.size(); ++i) {
        if (i) s += ", ";
        s += fs[i].first + ": " + fs[i].second;
      }
      return s + ">";
    }
  }
  return "STRING";
}

ExprPtr buildSchemaOfJson(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  // As Spark: the first JSON value of the text is read ('{"a":1} x' is a
  // STRUCT), blank text is a STRING, and text that does not start with a
  // JSON value is refused (Spark's parser raises for it).
  return fn1(name, DataType::of(TypeId::String), args, [](const Value& j) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element el;
    const std::string& text = j.asString();
    if (parser.parse(text).get(el) != simdjson::SUCCESS) {
      if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Value::string("STRING");
      simdjson::dom::document_stream docs;
      if (parser.parse_many(text).get(docs) == simdjson::SUCCESS) {
        auto it = docs.begin();
        if (it != docs.end() && (*it).get(el) == simdjson::SUCCESS) {
          std::string t = inferJson(el);
          return Value::string(t.empty() ? "STRING" : t);
        }
      }
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("schema_of_json: '{}' is not JSON", text.substr(0, 256)),
                     SqlError::npos, "pass a sample JSON value");
    }
    std::string t = inferJson(el);
    return Value::string(t.empty() ? "STRING" : t);
  });
}

}  // namespace

void registerJsonFunctions(FunctionTable& t) {
  t["get_json_object"] = {2, 2, buildGetJsonObject};
  t["json_extract"] = {2, 2, buildGetJsonObject};
  t["to_json"] = {1, 1, buildToJson};
  t["from_json"] = {2, 2, buildFromJson};
  t["json_array_length"] = {1, 1, buildJsonArrayLength};
  t["json_object_keys"] = {1, 1, buildJsonObjectKeys};
  t["schema_of_json"] = {1, 1, buildSchemaOfJson};
}

}  // namespace rtsql::expr_internal
