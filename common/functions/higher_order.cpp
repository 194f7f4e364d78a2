// Lambdas and the higher-order functions that call them, as Spark has them:
// transform, filter, exists, forall, aggregate (and its alias reduce),
// zip_with and array_sort with a comparator; over maps, map_filter,
// transform_keys, transform_values and map_zip_with.
//
// A lambda's parameters are not columns of the row. The function that calls a
// lambda points one slot per parameter at the element it is looking at, and a
// LambdaVariable node reads its slot by reference. The slots are a small
// thread-local array: an expression tree is shared by every task thread, so it
// cannot hold them itself. Calling the lambda on an element is then one
// pointer store per parameter and one walk of the body: no row is copied and
// no element either, so filter, exists and forall allocate nothing per element
// and transform only what it returns.
#include <fmt/format.h>

#include <algorithm>

#include "common/functions/higher_order.h"
#include "common/functions/map_funcs.h"
#include "common/lambda.h"

namespace rtsql::expr_internal {

namespace {

thread_local const Value* tSlots[kMaxLambdaSlots] = {};

class LambdaVariableExpr final : public Expr {
 public:
  LambdaVariableExpr(int slot, DataTypePtr type, std::string name)
      : Expr(std::move(type)), slot_(slot), name_(std::move(name)) {}
  Value eval(const Row&) const override {
    const Value* v = tSlots[slot_];
    return v != nullptr ? *v : Value();
  }
  const Value& evalRef(const Row&, Value&) const override {
    const Value* v = tSlots[slot_];
    return v != nullptr ? *v : Value::null();
  }
  std::string toString() const override { return name_; }
  void forEachChild(const std::function<void(const Expr&)>&) const override {}
  ExprPtr withChildren(std::vector<ExprPtr>) const override {
    return std::make_shared<LambdaVariableExpr>(slot_, type(), name_);
  }

 private:
  int slot_;
  std::string name_;
};

// A bound lambda: only the function it is an argument of evaluates it, through
// body() with its slots() pointed at the values of its parameters.
class LambdaExpr final : public Expr {
 public:
  LambdaExpr(std::vector<int> slots, std::vector<std::string> names, ExprPtr body)
      : Expr(body->type()), slots_(std::move(slots)), names_(std::move(names)), body_(std::move(body)) {}
  Value eval(const Row&) const override {
    throw InternalError("a lambda evaluated outside its higher-order function");
  }
  std::string toString() const override {
    std::string s = names_.size() == 1 ? names_[0] : "(" + fmt::format("{}", fmt::join(names_, ", ")) + ")";
    return s + " -> " + body_->toString();
  }
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*body_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<LambdaExpr>(slots_, names_, std::move(c.at(0)));
  }
  size_t arity() const { return slots_.size(); }
  const Expr& body() const { return *body_; }
  const ExprPtr& bodyExpr() const { return body_; }
  int slot(size_t i) const { return slots_[i]; }

 private:
  std::vector<int> slots_;
  std::vector<std::string> names_;
  ExprPtr body_;
};

// Points a lambda's slots at values for the length of one call of a
// higher-order function, and gives the slots back as they were.
class SlotBinding {
 public:
  explicit SlotBinding(const LambdaExpr& l) : lambda_(l) {
    for (size_t i = 0; i < l.arity(); ++i) saved_[i] = tSlots[l.slot(i)];
  }
  ~SlotBinding() {
    for (size_t i = 0; i < lambda_.arity(); ++i) tSlots[lambda_.slot(i)] = saved_[i];
  }
  SlotBinding(const SlotBinding&) = delete;
  SlotBinding& operator=(const SlotBinding&) = delete;
  void set(size_t i, const Value& v) { tSlots[lambda_.slot(i)] = &v; }

 private:
  const LambdaExpr& lambda_;
  const Value* saved_[3] = {};  // map_zip_with's lambda takes three
};

const LambdaExpr& lambdaAt(const std::vector<ExprPtr>& args, size_t i) {
  return static_cast<const LambdaExpr&>(*args[i]);
}

// The lambda's value, copied only when the body did not compute it.
Value callValue(const LambdaExpr& l, const Row& row) {
  Value scratch;
  const Value& v = l.body().evalRef(row, scratch);
  return &v == &scratch ? std::move(scratch) : v;
}

// TRUE, FALSE or NULL (-1) of a boolean lambda.
int callTruth(const LambdaExpr& l, const Row& row) {
  Value scratch;
  const Value& v = l.body().evalRef(row, scratch);
  return v.isNull() ? -1 : static_cast<int>(v.asBool());
}

DataTypePtr elementTypeOf(const std::string& name, const DataTypePtr& t, size_t argIndex,
                          size_t pos) {
  // An untyped NULL is refused, as Spark refuses it: CAST(NULL AS ARRAY<INT>)
  // says what the lambda's parameter is.
  if (isNullType(t) || t->id != TypeId::Array) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument {} of {}() must be an ARRAY, not {}", argIndex + 1, name,
                               t->toString()),
                   pos);
  }
  return t->element;
}

// Which arguments of each higher-order function are lambdas, and how many
// parameters each can take.
struct LambdaSlot {
  size_t index;
  size_t minArity;
  size_t maxArity;
};

std::vector<LambdaSlot> lambdaSlotsOf(const std::string& name) {
  if (name == "transform" || name == "filter") return {{1, 1, 2}};
  if (name == "exists" || name == "forall") return {{1, 1, 1}};
  if (name == "aggregate" || name == "reduce") return {{2, 2, 2}, {3, 1, 1}};
  if (name == "zip_with") return {{2, 2, 2}};
  if (name == "array_sort") return {{1, 2, 2}};
  if (name == "map_filter" || name == "transform_keys" || name == "transform_values")
    return {{1, 2, 2}};
  if (name == "map_zip_with") return {{2, 3, 3}};
  return {};
}

std::string exampleOf(const std::string& name) {
  if (name == "aggregate" || name == "reduce")
    return fmt::format("{}(arr, 0, (acc, x) -> acc + x, acc -> acc * 10)", name);
  if (name == "zip_with") return "zip_with(a, b, (x, y) -> x + y)";
  if (name == "array_sort") return "array_sort(arr, (l, r) -> CASE WHEN l < r THEN 1 WHEN l > r THEN -1 ELSE 0 END)";
  if (name == "filter" || name == "exists" || name == "forall") return name + "(arr, x -> x > 0)";
  if (name == "map_filter") return "map_filter(m, (k, v) -> v > 0)";
  if (name == "transform_keys") return "transform_keys(m, (k, v) -> upper(k))";
  if (name == "transform_values") return "transform_values(m, (k, v) -> v + 1)";
  if (name == "map_zip_with") return "map_zip_with(m1, m2, (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0))";
  return name + "(arr, x -> x + 1)";
}

// Checks that args[i] is an array.
void requireArrayArg(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  elementTypeOf(name, args[i]->type(), i, pos);
}

// Checks that the lambdas are where `name` takes them, and nothing else is.
void requireLambdas(const std::string& name, const std::vector<ExprPtr>& args, size_t pos) {
  std::vector<LambdaSlot> slots = lambdaSlotsOf(name);
  for (size_t i = 0; i < args.size(); ++i) {
    bool isLambda = dynamic_cast<const LambdaExpr*>(args[i].get()) != nullptr;
    bool wanted = std::any_of(slots.begin(), slots.end(), [i](const LambdaSlot& s) { return s.index == i; });
    if (isLambda != wanted) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     wanted ? fmt::format("argument {} of {}() must be a lambda function", i + 1, name)
                            : fmt::format("argument {} of {}() cannot be a lambda function", i + 1, name),
                     pos)
          .withHint("write " + exampleOf(name));
    }
  }
}

// A boolean lambda's body: BOOLEAN, or NULL that is taken as one.
void requireBooleanBody(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  const LambdaExpr& l = lambdaAt(args, i);
  TypeId t = l.type()->id;
  if (t == TypeId::Boolean) return;
  if (t == TypeId::Null) {
    args[i] = l.withChildren({castTo(l.bodyExpr(), DataType::of(TypeId::Boolean))});
    return;
  }
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("the lambda function of {}() must return BOOLEAN, not {}", name,
                             l.type()->toString()),
                 pos)
      .withHint("write " + exampleOf(name));
}

ExprPtr buildTransform(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  DataTypePtr type = DataType::arrayOf(args[1]->type());
  return fnN(name, type, args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa;
    const Value& arr = a[0]->evalRef(row, sa);
    if (arr.isNull()) return {};
    const LambdaExpr& l = lambdaAt(a, 1);
    const ValueList& items = arr.asList();
    ValueList out;
    out.reserve(items.size());
    SlotBinding b(l);
    Value index;
    for (size_t i = 0; i < items.size(); ++i) {
      b.set(0, items[i]);
      if (l.arity() == 2) {
        index = Value::integer(static_cast<int32_t>(i));
        b.set(1, index);
      }
      out.push_back(callValue(l, row));
    }
    return Value::array(std::move(out));
  });
}

ExprPtr buildFilter(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  requireBooleanBody(name, args, 1, pos);
  return fnN(name, args[0]->type(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa;
    const Value& arr = a[0]->evalRef(row, sa);
    if (arr.isNull()) return {};
    const LambdaExpr& l = lambdaAt(a, 1);
    const ValueList& items = arr.asList();
    ValueList out;
    SlotBinding b(l);
    Value index;
    for (size_t i = 0; i < items.size(); ++i) {
      b.set(0, items[i]);
      if (l.arity() == 2) {
        index = Value::integer(static_cast<int32_t>(i));
        b.set(1, index);
      }
      if (callTruth(l, row) == 1) out.push_back(items[i]);
    }
    return Value::array(std::move(out));
  });
}

// exists: TRUE when the lambda is TRUE for an element, else NULL when it was
// NULL for one, else FALSE (Spark's three-valued exists). forall: FALSE when
// it is FALSE for an element, else NULL when it was NULL for one, else TRUE.
template <bool Exists>
ExprPtr buildQuantifier(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  requireBooleanBody(name, args, 1, pos);
  return fnN(name, DataType::of(TypeId::Boolean), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
               Value sa;
               const Value& arr = a[0]->evalRef(row, sa);
               if (arr.isNull()) return {};
               const LambdaExpr& l = lambdaAt(a, 1);
               SlotBinding b(l);
               bool sawNull = false;
               for (const Value& item : arr.asList()) {
                 b.set(0, item);
                 int t = callTruth(l, row);
                 if (t == (Exists ? 1 : 0)) return Value::boolean(Exists);
                 sawNull = sawNull || t < 0;
               }
               return sawNull ? Value() : Value::boolean(!Exists);
             });
}

// aggregate(arr, zero, (acc, x) -> merge[, acc -> finish]): as Spark, the
// merge function must return the type of zero.
ExprPtr buildAggregate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  const DataTypePtr& accType = args[1]->type();
  if (!args[2]->type()->equals(*accType)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the merge function of {}() returns {} where its start value is {}",
                               name, args[2]->type()->toString(), accType->toString()),
                   pos)
        .withHint(fmt::format("give the start value the merge function's type: CAST(0 AS {})",
                              args[2]->type()->toString()));
  }
  DataTypePtr type = args.size() == 4 ? args[3]->type() : accType;
  return fnN(name, type, args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa;
    const Value& arr = a[0]->evalRef(row, sa);
    if (arr.isNull()) return {};
    Value acc;
    a[1]->evalInto(row, acc);
    const LambdaExpr& merge = lambdaAt(a, 2);
    {
      SlotBinding b(merge);
      b.set(0, acc);
      for (const Value& item : arr.asList()) {
        b.set(1, item);
        // The body may read acc by reference: the new value is computed
        // before it replaces the old one.
        Value next = callValue(merge, row);
        acc = std::move(next);
      }
    }
    if (a.size() < 4) return acc;
    const LambdaExpr& finish = lambdaAt(a, 3);
    SlotBinding b(finish);
    b.set(0, acc);
    return callValue(finish, row);
  });
}

// zip_with(a, b, (x, y) -> ...): as long as the longer array, the shorter one
// read as NULLs past its end.
ExprPtr buildZipWith(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  requireArrayArg(name, args, 1, pos);
  DataTypePtr type = DataType::arrayOf(args[2]->type());
  return fnN(name, type, args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa, sb;
    const Value& x = a[0]->evalRef(row, sa);
    if (x.isNull()) return {};
    const Value& y = a[1]->evalRef(row, sb);
    if (y.isNull()) return {};
    const ValueList& xs = x.asList();
    const ValueList& ys = y.asList();
    const LambdaExpr& l = lambdaAt(a, 2);
    size_t n = std::max(xs.size(), ys.size());
    ValueList out;
    out.reserve(n);
    SlotBinding b(l);
    for (size_t i = 0; i < n; ++i) {
      b.set(0, i < xs.size() ? xs[i] : Value::null());
      b.set(1, i < ys.size() ? ys[i] : Value::null());
      out.push_back(callValue(l, row));
    }
    return Value::array(std::move(out));
  });
}

}  // namespace

// array_sort(arr, (l, r) -> n): a stable merge sort that asks the comparator
// (negative: l first, positive: r first, 0: as they were). A merge sort stays
// within its arrays whatever a comparator answers, so one that is not a
// consistent order gives some order, never a crash.
ExprPtr buildArraySortWithComparator(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  requireArrayArg(name, args, 0, pos);
  TypeId t = args[1]->type()->id;
  if (t != TypeId::Int) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the comparator of {}() must return INT, not {}", name,
                               args[1]->type()->toString()),
                   pos)
        .withHint("write " + exampleOf(name));
  }
  return fnN(name, args[0]->type(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa;
    const Value& arr = a[0]->evalRef(row, sa);
    if (arr.isNull()) return {};
    const ValueList& items = arr.asList();
    const LambdaExpr& l = lambdaAt(a, 1);
    SlotBinding b(l);
    auto before = [&](const Value* x, const Value* y) {  // y strictly before x?
      b.set(0, *y);
      b.set(1, *x);
      Value scratch;
      const Value& c = l.body().evalRef(row, scratch);
      if (c.isNull()) {
        throw SqlError(sqlstate::kDataException, "the comparator of array_sort() returned NULL");
      }
      return c.asInt() < 0;
    };
    std::vector<const Value*> cur(items.size()), tmp(items.size());
    for (size_t i = 0; i < items.size(); ++i) cur[i] = &items[i];
    for (size_t width = 1; width < cur.size(); width *= 2) {
      for (size_t lo = 0; lo < cur.size(); lo += 2 * width) {
        size_t mid = std::min(lo + width, cur.size()), hi = std::min(lo + 2 * width, cur.size());
        size_t i = lo, j = mid, k = lo;
        while (i < mid && j < hi) tmp[k++] = before(cur[i], cur[j]) ? cur[j++] : cur[i++];
        while (i < mid) tmp[k++] = cur[i++];
        while (j < hi) tmp[k++] = cur[j++];
      }
      cur.swap(tmp);
    }
    ValueList out;
    out.reserve(cur.size());
    for (const Value* v : cur) out.push_back(*v);
    return Value::array(std::move(out));
  });
}

// ---- over maps ------------------------------------------------------------------

// The key and value types of argument i of a map function, or 42804.
std::pair<DataTypePtr, DataTypePtr> mapTypesOf(const std::string& name, const DataTypePtr& t,
                                               size_t argIndex, size_t pos) {
  if (isNullType(t) || t->id != TypeId::Map) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument {} of {}() must be a MAP, not {}", argIndex + 1, name,
                               t ? t->toString() : std::string("NULL")),
                   pos)
        .withHint("write " + exampleOf(name));
  }
  return {t->key ? t->key : nullType(), t->value ? t->value : nullType()};
}

bool isMapLambdaFunction(const std::string& name) {
  return name == "map_filter" || name == "transform_keys" || name == "transform_values" ||
         name == "map_zip_with";
}

// map_filter(m, (k, v) -> bool), transform_keys(m, (k, v) -> key) and
// transform_values(m, (k, v) -> value): the lambda sees each entry in order.
// New keys go through makeMapValue: a NULL or repeated one raises, as in Spark.
template <int Kind>  // 0 map_filter, 1 transform_keys, 2 transform_values
ExprPtr buildMapLambda(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  auto [kt, vt] = mapTypesOf(name, args[0]->type(), 0, pos);
  if (Kind == 0) requireBooleanBody(name, args, 1, pos);
  if (Kind == 1) requireKeyType(name, args, *args[1]->type(), pos);
  DataTypePtr type = Kind == 0   ? args[0]->type()
                     : Kind == 1 ? DataType::mapOf(args[1]->type(), vt)
                                 : DataType::mapOf(kt, args[1]->type());
  return fnN(name, type, args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa;
    const Value& m = a[0]->evalRef(row, sa);
    if (m.isNull()) return {};
    const LambdaExpr& l = lambdaAt(a, 1);
    const ValueList& items = m.asList();
    ValueList out;
    out.reserve(items.size());
    SlotBinding b(l);
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      b.set(0, items[i]);
      b.set(1, items[i + 1]);
      if (Kind == 0) {
        if (callTruth(l, row) != 1) continue;
        out.push_back(items[i]);
        out.push_back(items[i + 1]);
      } else if (Kind == 1) {
        out.push_back(callValue(l, row));
        out.push_back(items[i + 1]);
      } else {
        out.push_back(items[i]);
        out.push_back(callValue(l, row));
      }
    }
    if (Kind == 1) return makeMapValue(std::move(out), "transform_keys");
    return Value::map(std::move(out));
  });
}

// map_zip_with(m1, m2, (k, v1, v2) -> ...): every key of either map, those of
// m1 first in its order, then m2's others; a value a map lacks is NULL.
ExprPtr buildMapZipWith(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireLambdas(name, args, pos);
  auto [k1, v1] = mapTypesOf(name, args[0]->type(), 0, pos);
  auto [k2, v2] = mapTypesOf(name, args[1]->type(), 1, pos);
  // An empty map() has no key type: it takes the other map's.
  if (isNullType(k1)) k1 = k2;
  if (!isNullType(k2) && !k1->equals(*k2)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the maps of map_zip_with() must have one key type, not {} and {}",
                               k1->toString(), k2->toString()),
                   pos)
        .withHint("cast one: CAST(m AS MAP<" + k1->toString() + ", ...>)");
  }
  DataTypePtr type = DataType::mapOf(k1, args[2]->type());
  return fnN(name, type, args, true, [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
    Value sa, sb;
    const Value& x = a[0]->evalRef(row, sa);
    if (x.isNull()) return {};
    const Value& y = a[1]->evalRef(row, sb);
    if (y.isNull()) return {};
    const ValueList& xs = x.asList();
    const ValueList& ys = y.asList();
    // m2's keys sorted once, so each lookup is a binary search.
    std::vector<size_t> sorted(ys.size() / 2);
    for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = 2 * i;
    std::sort(sorted.begin(), sorted.end(),
              [&](size_t p, size_t q) { return ys[p].compare(ys[q]) < 0; });
    std::vector<bool> matched(ys.size() / 2, false);
    auto find = [&](const Value& k) -> const Value* {
      auto it = std::lower_bound(sorted.begin(), sorted.end(), k,
                                 [&](size_t p, const Value& key) { return ys[p].compare(key) < 0; });
      if (it == sorted.end() || ys[*it].compare(k) != 0) return nullptr;
      matched[*it / 2] = true;
      return &ys[*it + 1];
    };
    const LambdaExpr& l = lambdaAt(a, 2);
    ValueList out;
    out.reserve(xs.size() + ys.size());
    SlotBinding b(l);
    for (size_t i = 0; i + 1 < xs.size(); i += 2) {
      const Value* other = find(xs[i]);
      b.set(0, xs[i]);
      b.set(1, xs[i + 1]);
      b.set(2, other ? *other : Value::null());
      out.push_back(xs[i]);
      out.push_back(callValue(l, row));
    }
    for (size_t i = 0; i + 1 < ys.size(); i += 2) {
      if (matched[i / 2]) continue;
      b.set(0, ys[i]);
      b.set(1, Value::null());
      b.set(2, ys[i + 1]);
      out.push_back(ys[i]);
      out.push_back(callValue(l, row));
    }
    return Value::map(std::move(out));
  });
}

void registerHigherOrderFunctions(FunctionTable& t) {
  t["map_filter"] = {2, 2, buildMapLambda<0>};
  t["transform_keys"] = {2, 2, buildMapLambda<1>};
  t["transform_values"] = {2, 2, buildMapLambda<2>};
  t["map_zip_with"] = {3, 3, buildMapZipWith};
  t["transform"] = {2, 2, buildTransform};
  t["filter"] = {2, 2, buildFilter};
  t["exists"] = {2, 2, buildQuantifier<true>};
  t["forall"] = {2, 2, buildQuantifier<false>};
  t["aggregate"] = {3, 4, buildAggregate};
  t["reduce"] = {3, 4, buildAggregate};
  t["zip_with"] = {3, 3, buildZipWith};
}

}  // namespace rtsql::expr_internal

namespace rtsql {

using expr_internal::LambdaExpr;

ExprPtr makeLambdaVariable(int slot, DataTypePtr type, std::string name) {
  return std::make_shared<expr_internal::LambdaVariableExpr>(slot, std::move(type), std::move(name));
}

ExprPtr makeLambda(std::vector<int> slots, std::vector<std::string> names, ExprPtr body) {
  return std::make_shared<LambdaExpr>(std::move(slots), std::move(names), std::move(body));
}

std::vector<DataTypePtr> lambdaParameterTypes(const std::string& name,
                                              const std::vector<ExprPtr>& before, size_t index,
                                              size_t arity, size_t pos) {
  using namespace expr_internal;
  std::vector<LambdaSlot> slots = lambdaSlotsOf(name);
  auto it = std::find_if(slots.begin(), slots.end(), [index](const LambdaSlot& s) { return s.index == index; });
  if (slots.empty()) {
    std::vector<std::string> known = functionNames();
    if (!std::binary_search(known.begin(), known.end(), name)) {
      throw SqlError(sqlstate::kUndefinedFunction, fmt::format("function {} does not exist", name), pos)
          .withHint("the functions that take a lambda are transform, filter, exists, forall, map_filter, "
                    "transform_keys, transform_values, map_zip_with, "
                    "aggregate, reduce, zip_with and array_sort");
    }
  }
  if (it == slots.end()) {
    SqlError err(sqlstate::kDatatypeMismatch,
                 slots.empty() ? fmt::format("{}() does not take a lambda function", name)
                               : fmt::format("argument {} of {}() cannot be a lambda function",
                                             index + 1, name),
                 pos);
    if (!slots.empty()) err.withHint("write " + exampleOf(name));
    throw err;
  }
  if (arity < it->minArity || arity > it->maxArity) {
    std::string expected = it->minArity == it->maxArity
                               ? fmt::format("{}", it->minArity)
                               : fmt::format("{} or {}", it->minArity, it->maxArity);
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the lambda function of {}() takes {} parameter{}, not {}", name,
                               expected, expected == "1" ? "" : "s", arity),
                   pos)
        .withHint("write " + exampleOf(name));
  }
  if (name == "aggregate" || name == "reduce") {
    DataTypePtr acc = before.at(1)->type();
    if (index == 3) return {acc};
    return {acc, elementTypeOf(name, before.at(0)->type(), 0, pos)};
  }
  if (isMapLambdaFunction(name)) {
    auto [k, v] = mapTypesOf(name, before.at(0)->type(), 0, pos);
    if (name != "map_zip_with") return {k, v};
    return {k, v, mapTypesOf(name, before.at(1)->type(), 1, pos).second};
  }
  if (name == "zip_with") {
    return {elementTypeOf(name, before.at(0)->type(), 0, pos),
            elementTypeOf(name, before.at(1)->type(), 1, pos)};
  }
  DataTypePtr element = elementTypeOf(name, before.at(0)->type(), 0, pos);
  if (name == "array_sort") return {element, element};
  if (arity == 2) return {element, DataType::of(TypeId::Int)};  // the element's index
  return {element};
}

}  // namespace rtsql
