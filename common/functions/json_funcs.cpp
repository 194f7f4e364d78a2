// JSON functions: get_json_object(json, '$.a.b[0]') with Spark's path syntax
// (simdjson's DOM parser, one per thread and reused, so a record costs no
// parser allocation) and to_json(struct or array).
#include <simdjson.h>

#include <fmt/format.h>

#include "common/functions/internal.h"
#include "common/json.h"

namespace rtsql::expr_internal {

namespace {

struct PathStep {
  std::string key;  // object member, when index < 0
  int64_t index = -1;
};
using Path = std::vector<PathStep>;

// Parses "$", ".name", "['name']", "[0]"; false on anything else (Spark then
// gives NULL).
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
      if (i < p.size() && p[i] == '\'') {
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

Value extract(const std::string& json, const Path& path) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element el;
  if (parser.parse(json).get(el) != simdjson::SUCCESS) return {};
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
    auto path = std::make_shared<Path>();
    if (!parsePath(c->asString(), path.get()))
      throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("invalid JSON path '{}'", c->asString()), pos,
                     "write a path as '$.field', '$.a.b[0]' or '$[\\'key\\']'");
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
void appendJsonSkippingNullFields(std::string& out, const Value& v, const DataType& t) {
  if (v.isNull() || (t.id != TypeId::Struct && t.id != TypeId::Array)) {
    appendJsonValue(out, v, t);
    return;
  }
  const ValueList& items = v.asList();
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
  auto id = args[0]->type()->id;
  if (id != TypeId::Struct && id != TypeId::Array)
    throwArgError(name, args, pos, "the argument must be a STRUCT or an ARRAY",
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

}  // namespace

void registerJsonFunctions(FunctionTable& t) {
  t["get_json_object"] = {2, 2, buildGetJsonObject};
  t["json_extract"] = {2, 2, buildGetJsonObject};
  t["to_json"] = {1, 1, buildToJson};
}

}  // namespace rtsql::expr_internal
