// The MAP type's functions, as Spark has them: map, map_from_arrays,
// map_from_entries, str_to_map, map_keys, map_values, map_entries,
// map_contains_key, map_concat, and the map forms of size, element_at and
// `m[k]`. A map value keeps its entries in insertion order, keys and values in
// turn in one list (Value::map); every constructor goes through makeMapValue,
// which refuses NULL and duplicate keys as Spark 4 does by default.
#include "common/functions/map_funcs.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "common/map_order.h"

namespace rtsql::expr_internal {

namespace {

constexpr const char* kNullMapKey = "2200E";    // Spark's NULL_MAP_KEY
constexpr const char* kDuplicateMapKey = "23505";  // Spark's DUPLICATED_MAP_KEY

DataTypePtr keyOf(const DataTypePtr& t) { return t->key ? t->key : nullType(); }
DataTypePtr valueOf(const DataTypePtr& t) { return t->value ? t->value : nullType(); }

// Makes args[i] a MAP (an untyped NULL becomes a NULL MAP) or throws 42804.
void requireMap(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto id = args[i]->type()->id;
  if (id == TypeId::Null) {
    args[i] = castTo(args[i], DataType::mapOf(nullType(), nullType()));
  } else if (id != TypeId::Map) {
    throwArgError(name, args, pos, fmt::format("argument {} must be a MAP", i + 1),
                  "build one with map('a', 1, 'b', 2)");
  }
}

}  // namespace

void requireKeyType(const std::string& name, const std::vector<ExprPtr>& args, const DataType& kt,
                    size_t pos) {
  if (containsMap(kt))
    throwArgError(name, args, pos,
                  fmt::format("a map key cannot be or hold a MAP ({}): a MAP has no equality",
                              kt.toString()),
                  "key it by one of the map's entries, m['key'], or by to_json(m)");
}

namespace {

// Casts a key argument to the map's key type, or throws 42804.
void alignKey(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  DataTypePtr kt = keyOf(args[0]->type());
  if (isNullType(kt)) return;
  auto c = commonType(kt, args[i]->type());
  if (!c || !c->equals(*kt)) {
    if (!c || !canCast(*args[i]->type(), *kt))
      throwArgError(name, args, pos,
                    fmt::format("the key must be of the map's key type {}", kt->toString()));
  }
  args[i] = castTo(args[i], kt);
}

const Value* lookup(const ValueList& items, const Value& key) {
  for (size_t i = 0; i + 1 < items.size(); i += 2)
    if (items[i].compare(key) == 0) return &items[i + 1];
  return nullptr;
}

ExprPtr buildMap(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() % 2 != 0)
    throwArgError(name, args, pos, "expects keys and values in turn: map('a', 1, 'b', 2)");
  std::vector<ExprPtr> keys, values;
  for (size_t i = 0; i < args.size(); ++i) (i % 2 == 0 ? keys : values).push_back(args[i]);
  DataTypePtr kt = keys.empty() ? nullType() : argsCommon(name, keys, 0, pos);
  DataTypePtr vt = values.empty() ? nullType() : argsCommon(name, values, 0, pos);
  requireKeyType(name, args, *kt, pos);
  for (size_t i = 0; i < args.size(); ++i) args[i] = i % 2 == 0 ? keys[i / 2] : values[i / 2];
  return fnN(name, DataType::mapOf(kt, vt), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               ValueList items;
               items.reserve(a.size());
               for (const auto& e : a) items.push_back(e->eval(row));
               return makeMapValue(std::move(items), "map");
             });
}

// map_from_arrays(keys, values): NULL if either is NULL; arrays of different
// lengths raise, as in Spark.
ExprPtr buildMapFromArrays(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 2; ++i) {
    if (isNullType(args[i]->type())) args[i] = castTo(args[i], DataType::arrayOf(nullType()));
    if (args[i]->type()->id != TypeId::Array)
      throwArgError(name, args, pos, "the arguments must be ARRAYs: map_from_arrays(keys, values)");
  }
  requireKeyType(name, args, *args[0]->type()->element, pos);
  auto t = DataType::mapOf(args[0]->type()->element, args[1]->type()->element);
  return fn2(name, t, args, [](const Value& k, const Value& v) {
    const ValueList& ks = k.asList();
    const ValueList& vs = v.asList();
    if (ks.size() != vs.size())
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("map_from_arrays: the key array has {} elements and the value "
                                 "array {}: they must have the same length",
                                 ks.size(), vs.size()));
    ValueList items;
    items.reserve(2 * ks.size());
    for (size_t i = 0; i < ks.size(); ++i) {
      items.push_back(ks[i]);
      items.push_back(vs[i]);
    }
    return makeMapValue(std::move(items), "map_from_arrays");
  });
}

// map_from_entries(array<struct<k, v>>): NULL if an entry is NULL, as in Spark.
ExprPtr buildMapFromEntries(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const auto& t = args[0]->type();
  if (t->id != TypeId::Array || !t->element || t->element->id != TypeId::Struct ||
      t->element->fields.size() != 2)
    throwArgError(name, args, pos, "the argument must be an ARRAY of two-field STRUCTs",
                  "map_from_entries(array(struct('a', 1), struct('b', 2)))");
  requireKeyType(name, args, *t->element->fields[0].type, pos);
  auto mt = DataType::mapOf(t->element->fields[0].type, t->element->fields[1].type);
  return fn1(name, mt, args, [](const Value& arr) {
    ValueList items;
    items.reserve(2 * arr.asList().size());
    for (const auto& e : arr.asList()) {
      if (e.isNull()) return Value();
      items.push_back(e.asList()[0]);
      items.push_back(e.asList()[1]);
    }
    return makeMapValue(std::move(items), "map_from_entries");
  });
}

// str_to_map(text[, pairDelim[, keyValueDelim]]): Spark reads the delimiters
// as regular expressions; rtsql splits at them as text and refuses a delimiter
// that would mean something else as a pattern, so no value differs silently.
void requireLiteralDelimiter(const std::string& name, const std::vector<ExprPtr>& args, size_t i,
                             size_t pos) {
  auto c = constantValue(args[i]);
  if (!c || c->isNull()) return;
  if (c->asString().find_first_of("\\.[]{}()*+?^$|") != std::string::npos)
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{}: delimiter '{}' is a regular expression; rtsql splits at "
                               "delimiters as plain text",
                               name, c->asString()),
                   pos, "use a delimiter without \\ . [ ] { } ( ) * + ? ^ $ |");
}

std::vector<std::string_view> splitAt(std::string_view s, std::string_view delim) {
  std::vector<std::string_view> out;
  if (delim.empty()) {
    // Spark splits at every character for an empty pattern.
    for (size_t i = 0; i < s.size();) {
      size_t n = 1;
      auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0xF0) n = 4; else if (c >= 0xE0) n = 3; else if (c >= 0xC0) n = 2;
      out.push_back(s.substr(i, n));
      i += n;
    }
    if (out.empty()) out.push_back(s);
    return out;
  }
  size_t start = 0;
  for (;;) {
    size_t at = s.find(delim, start);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + delim.size();
  }
  out.push_back(s.substr(start));
  return out;
}

ExprPtr buildStrToMap(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  auto str = DataType::of(TypeId::String);
  if (args.size() < 2) args.push_back(makeLiteral(Value::string(","), str));
  if (args.size() < 3) args.push_back(makeLiteral(Value::string(":"), str));
  for (size_t i = 0; i < 3; ++i) argString(name, args, i, pos);
  requireLiteralDelimiter(name, args, 1, pos);
  requireLiteralDelimiter(name, args, 2, pos);
  return fn3(name, DataType::mapOf(str, str), args,
             [](const Value& text, const Value& pairDelim, const Value& kvDelim) {
               ValueList items;
               for (std::string_view pair : splitAt(text.asString(), pairDelim.asString())) {
                 std::string_view kv = kvDelim.asString();
                 size_t at = kv.empty() ? (pair.empty() ? std::string_view::npos : 1)
                                        : pair.find(kv);
                 if (at == std::string_view::npos) {
                   items.push_back(Value::string(std::string(pair)));
                   items.push_back(Value());
                 } else {
                   items.push_back(Value::string(std::string(pair.substr(0, at))));
                   items.push_back(Value::string(std::string(pair.substr(at + kv.size()))));
                 }
               }
               return makeMapValue(std::move(items), "str_to_map");
             });
}

// map_keys(m), map_values(m), map_entries(m).
template <int Part>  // 0 keys, 1 values, 2 entries
ExprPtr buildMapPart(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireMap(name, args, 0, pos);
  const auto& t = args[0]->type();
  DataTypePtr et = Part == 0   ? keyOf(t)
                   : Part == 1 ? valueOf(t)
                               : DataType::structOf({{"key", keyOf(t)}, {"value", valueOf(t)}});
  return fn1(name, DataType::arrayOf(et), args, [](const Value& m) {
    const ValueList& items = m.asList();
    ValueList out;
    out.reserve(items.size() / 2);
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (Part == 2)
        out.push_back(Value::structure({items[i], items[i + 1]}));
      else
        out.push_back(items[i + Part]);
    }
    return Value::array(std::move(out));
  });
}

ExprPtr buildMapContainsKey(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireMap(name, args, 0, pos);
  // An untyped NULL key is refused, as Spark refuses it (element_at takes it).
  if (isNullType(args[1]->type())) throwArgError(name, args, pos, "the key cannot be an untyped NULL");
  alignKey(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::Boolean), args, [](const Value& m, const Value& k) {
    return Value::boolean(lookup(m.asList(), k) != nullptr);
  });
}

// map_concat(m1, m2, ...): NULL if any is NULL; a key in two maps raises.
ExprPtr buildMapConcat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.empty())
    return makeLiteral(Value::map({}), DataType::mapOf(nullType(), nullType()));
  for (size_t i = 0; i < args.size(); ++i) {
    // An untyped NULL is refused, as Spark refuses it: CAST(NULL AS MAP<K, V>).
    if (isNullType(args[i]->type()))
      throwArgError(name, args, pos, fmt::format("argument {} must be a MAP, not NULL", i + 1));
    requireMap(name, args, i, pos);
  }
  DataTypePtr t = argsCommon(name, args, 0, pos);
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    ValueList items;
    for (const auto& e : a) {
      Value m = e->eval(row);
      if (m.isNull()) return Value();
      items.insert(items.end(), m.asList().begin(), m.asList().end());
    }
    return makeMapValue(std::move(items), "map_concat");
  });
}

}  // namespace

Value makeMapValue(ValueList items, const char* fn) {
  size_t n = items.size() / 2;
  for (size_t i = 0; i < items.size(); i += 2)
    if (items[i].isNull())
      throw SqlError(kNullMapKey, fmt::format("{}: a map key cannot be NULL", fn));
  // Sorted indices find a duplicate in n log n comparisons.
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = 2 * i;
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return items[a].compare(items[b]) < 0; });
  for (size_t i = 1; i < n; ++i)
    if (items[idx[i - 1]].compare(items[idx[i]]) == 0)
      throw SqlError(kDuplicateMapKey,
                     fmt::format("{}: duplicate map key {}", fn, items[idx[i]].toString()))
          .withHint("a map's keys must be distinct (Spark's spark.sql.mapKeyDedupPolicy EXCEPTION)");
  return Value::map(std::move(items));
}

ExprPtr buildMapSize(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireMap(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& m) {
    return Value::integer(static_cast<int32_t>(m.asList().size() / 2));
  });
}

ExprPtr buildMapLookup(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireMap(name, args, 0, pos);
  alignKey(name, args, 1, pos);
  return fn2(name, valueOf(args[0]->type()), args, [](const Value& m, const Value& k) {
    const Value* v = lookup(m.asList(), k);
    return v ? *v : Value();
  });
}

void registerMapFunctions(FunctionTable& t) {
  t["map"] = {0, -1, buildMap};
  t["map_from_arrays"] = {2, 2, buildMapFromArrays};
  t["map_from_entries"] = {1, 1, buildMapFromEntries};
  t["str_to_map"] = {1, 3, buildStrToMap};
  t["map_keys"] = {1, 1, buildMapPart<0>};
  t["map_values"] = {1, 1, buildMapPart<1>};
  t["map_entries"] = {1, 1, buildMapPart<2>};
  t["map_contains_key"] = {2, 2, buildMapContainsKey};
  t["map_concat"] = {0, -1, buildMapConcat};
}

}  // namespace rtsql::expr_internal
