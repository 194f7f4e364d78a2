// Constructors and accessors of nested values: named_struct, struct, array,
// size/cardinality, array_contains, element_at.
#include <fmt/format.h>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

Value evalAll(const Row& row, const std::vector<ExprPtr>& a, bool asStruct) {
  ValueList items;
  items.reserve(a.size());
  for (const auto& e : a) items.push_back(e->eval(row));
  return asStruct ? Value::structure(std::move(items)) : Value::array(std::move(items));
}

ExprPtr buildNamedStruct(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.empty() || args.size() % 2 != 0)
    throwArgError(name, args, pos, "expects name/value pairs: named_struct('a', x, 'b', y)");
  std::vector<StructField> fields;
  for (size_t i = 0; i < args.size(); i += 2) {
    auto c = constantValue(args[i]);
    if (!c || c->type() != TypeId::String)
      throwArgError(name, args, pos, fmt::format("field name {} must be a string literal", i / 2 + 1));
    fields.push_back({c->asString(), args[i + 1]->type()});
  }
  // The name literals stay among the arguments so that EXPLAIN shows them; only
  // the values are evaluated.
  return fnN(name, DataType::structOf(std::move(fields)), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               ValueList items;
               items.reserve(a.size() / 2);
               for (size_t i = 1; i < a.size(); i += 2) items.push_back(a[i]->eval(row));
               return Value::structure(std::move(items));
             });
}

// struct(x, y): fields are named after the column or field they read, else colN.
ExprPtr buildStruct(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  std::vector<StructField> fields;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string n;
    if (auto* c = dynamic_cast<const ColumnRefExpr*>(args[i].get()); c && !c->name().empty())
      n = c->name();
    else if (auto* f = dynamic_cast<const FieldAccessExpr*>(args[i].get()))
      n = f->field();
    else
      n = "col" + std::to_string(i + 1);
    fields.push_back({n, args[i]->type()});
  }
  return fnN(name, DataType::structOf(std::move(fields)), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) { return evalAll(row, a, true); });
}

ExprPtr buildArray(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr et = argsCommon(name, args, 0, pos);
  return fnN(name, DataType::arrayOf(et), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) { return evalAll(row, a, false); });
}

void requireArray(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  auto id = args[0]->type()->id;
  if (id == TypeId::Null) {
    args[0] = castTo(args[0], DataType::arrayOf(nullType()));
  } else if (id != TypeId::Array) {
    throwArgError(name, args, pos, "the first argument must be an ARRAY");
  }
}

ExprPtr buildSize(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  // Spark (non-ANSI legacy) gives -1 for a NULL array.
  return fnN(name, DataType::of(TypeId::Int), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value v = a[0]->eval(row);
    return Value::integer(v.isNull() ? -1 : static_cast<int32_t>(v.asList().size()));
  });
}

ExprPtr buildArrayContains(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  auto et = args[0]->type()->element;
  auto c = commonType(et, args[1]->type());
  if (!c) throwArgError(name, args, pos, "the value must have the array's element type");
  args[1] = castTo(args[1], c);
  return fn2(name, DataType::of(TypeId::Boolean), args, [](const Value& arr, const Value& x) {
    bool sawNull = false;
    for (const auto& item : arr.asList()) {
      if (item.isNull())
        sawNull = true;
      else if (item.compare(x) == 0)
        return Value::boolean(true);
    }
    return sawNull ? Value() : Value::boolean(false);
  });
}

// element_at(array, i): 1-based, negative counts from the end, NULL out of range.
ExprPtr buildElementAt(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  argBigInt(name, args, 1, pos);
  auto et = args[0]->type()->element ? args[0]->type()->element : nullType();
  return fn2(name, et, args, [](const Value& arr, const Value& i) {
    const auto& items = arr.asList();
    auto n = static_cast<int64_t>(items.size());
    int64_t k = i.asInt();
    if (k == 0 || k > n || k < -n) return Value();
    return items[static_cast<size_t>(k > 0 ? k - 1 : n + k)];
  });
}

}  // namespace

void registerNestedFunctions(FunctionTable& t) {
  t["named_struct"] = {2, -1, buildNamedStruct};
  t["struct"] = {1, -1, buildStruct};
  t["array"] = {0, -1, buildArray};
  t["size"] = {1, 1, buildSize};
  t["cardinality"] = {1, 1, buildSize};
  t["array_contains"] = {2, 2, buildArrayContains};
  t["element_at"] = {2, 2, buildElementAt};
}

}  // namespace rtsql::expr_internal
