#include "common/functions/json_tuple.h"

#include <fmt/format.h>
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
               // As Spark: a field fills the column of every key naming it, and a
               // later field of the same name overwrites an earlier one. A number
               // with a fraction or an exponent is written as Java writes the
               // double (Spark's JSON generator reads it as one): 1E2 is 100.0.
               std::vector<Value> keys(a.size() - 1);
               for (size_t i = 1; i < a.size(); ++i) keys[i - 1] = a[i]->eval(row);
               for (auto [name, el] : obj) {
                 for (size_t k = 0; k < keys.size(); ++k) {
                   if (keys[k].isNull() || keys[k].asString() != name) continue;
                   std::string_view sv;
                   double d;
                   if (el.is_null())
                     out[k] = Value();
                   else if (el.get_string().get(sv) == simdjson::SUCCESS)
                     out[k] = Value::string(std::string(sv));
                   else if (el.type() == simdjson::dom::element_type::DOUBLE &&
                            el.get_double().get(d) == simdjson::SUCCESS)
                     out[k] = Value::string(formatDouble(d));
                   else
                     out[k] = Value::string(simdjson::to_string(el));
                 }
               }
               return Value::structure(std::move(out));
             });
}

}  // namespace rtsql
