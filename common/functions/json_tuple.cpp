#include "common/functions/json_tuple.h"

#include <fmt/format.h>

#include <algorithm>
#include <simdjson.h>

#include "common/functions/internal.h"

namespace rtsql {

std::string jsonTupleColumn(size_t i) { return "c" + std::to_string(i); }

ExprPtr makeJsonTuple(std::vector<ExprPtr> args, size_t pos) {
  using namespace expr_internal;
  const std::string name = "json_tuple";
  if (args.size() < 2)
    throw SqlError(sqlstate::kUndefinedFunction,
                   "json_tuple requires the JSON text and at least one key", pos,
                   "json_tuple(json, 'k1', 'k2', ...)");
  std::vector<StructField> fields;
  for (size_t i = 0; i < args.size(); ++i) {
    argString(name, args, i, pos);
    if (i > 0) fields.push_back(StructField{jsonTupleColumn(i - 1), DataType::of(TypeId::String)});
  }
  return fnN(name, DataType::structOf(std::move(fields)), std::move(args), true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               ValueList out(a.size() - 1);
               Value sj;
               const Value& json = a[0]->evalRef(row, sj);
               if (json.isNull()) return Value::structure(std::move(out));
               thread_local simdjson::dom::parser parser;
               simdjson::dom::object obj;
               if (parser.parse(json.asString()).get_object().get(obj) != simdjson::SUCCESS)
                 return Value::structure(std::move(out));
               // As Spark: a field fills the column of the first key naming it,
               // and a later field of the same name overwrites an earlier one.
               std::vector<Value> keys(a.size() - 1);
               for (size_t i = 1; i < a.size(); ++i) keys[i - 1] = a[i]->eval(row);
               for (auto [name, el] : obj) {
                 auto k = std::find_if(keys.begin(), keys.end(), [&](const Value& key) {
                   return !key.isNull() && key.asString() == name;
                 });
                 if (k == keys.end()) continue;
                 Value& slot = out[static_cast<size_t>(k - keys.begin())];
                 std::string_view sv;
                 if (el.is_null())
                   slot = Value();
                 else if (el.get_string().get(sv) == simdjson::SUCCESS)
                   slot = Value::string(std::string(sv));
                 else
                   slot = Value::string(simdjson::to_string(el));
               }
               return Value::structure(std::move(out));
             });
}

}  // namespace rtsql
