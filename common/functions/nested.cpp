// Constructors and accessors of nested values: named_struct, struct, array,
// size/cardinality, array_contains, element_at, and the array functions
// (array_distinct, array_union, sort_array, slice, sequence, ...).
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "common/ansi_mode.h"
#include "common/functions/higher_order.h"
#include "common/functions/internal.h"
#include "common/functions/map_funcs.h"
#include "common/map_order.h"

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
  if (args[0]->type()->id == TypeId::Map) return buildMapSize(name, args, pos);
  requireArray(name, args, pos);
  // NULL for a NULL array, as Spark 4 (-1 was the legacy sizeOfNull).
  return fn1(name, DataType::of(TypeId::Int), args,
             [](const Value& v) { return Value::integer(static_cast<int32_t>(v.asList().size())); });
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
// ANSI mode's errors of element_at (common/ansi_mode.h): index 0 raises in
// try_element_at too, as in Spark.
[[noreturn, gnu::cold, gnu::noinline]] void elementAtOutOfRange(int64_t k, int64_t n,
                                                                 bool tryFunction) {
  if (k == 0)
    ansi::raise(ansi::kInvalidIndexOfZero,
                "the index 0 is invalid: an index is 1-based (1 is the first element, -1 the last)");
  if (tryFunction) throw InternalError("try_element_at raised for an index in range");
  ansi::raise(ansi::kInvalidArrayIndexInElementAt,
              fmt::format("the index {} is out of bounds: the array has {} elements", k, n),
              "try_element_at");
}

ExprPtr buildElementAt(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Map) return buildMapLookup(name, args, pos);
  requireArray(name, args, pos);
  argBigInt(name, args, 1, pos);
  auto et = args[0]->type()->element ? args[0]->type()->element : nullType();
  const bool ansi = ansiMode();
  return fn2(name, et, args, [ansi](const Value& arr, const Value& i) {
    const auto& items = arr.asList();
    auto n = static_cast<int64_t>(items.size());
    int64_t k = i.asInt();
    if (k == 0 || k > n || k < -n) [[unlikely]] {
      if (ansi) elementAtOutOfRange(k, n, false);
      return Value();
    }
    return items[static_cast<size_t>(k > 0 ? k - 1 : n + k)];
  });
}

// ---- array functions ----------------------------------------------------------
// Elements compare as Value::compare does (NULL equals NULL, NaN equals NaN).
// Set-like functions sort indices once, so an array of n elements costs
// n log n comparisons, not n squared.

const DataTypePtr& elementOf(const ExprPtr& e) {
  return e->type()->element ? e->type()->element : nullType();
}

// Indices of the first occurrence of each distinct value, in array order.
std::vector<size_t> firstOccurrences(const ValueList& items) {
  std::vector<size_t> idx(items.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return items[a].compare(items[b]) < 0; });
  std::vector<bool> keep(items.size(), false);
  for (size_t k = 0; k < idx.size(); ++k)
    if (k == 0 || items[idx[k]].compare(items[idx[k - 1]]) != 0) keep[idx[k]] = true;
  std::vector<size_t> out;
  for (size_t i = 0; i < items.size(); ++i)
    if (keep[i]) out.push_back(i);
  return out;
}

// A sorted copy of the values, for membership tests by binary search.
ValueList sortedCopy(const ValueList& items) {
  ValueList s = items;
  std::sort(s.begin(), s.end(), [](const Value& a, const Value& b) { return a.compare(b) < 0; });
  return s;
}
bool containsSorted(const ValueList& sorted, const Value& v) {
  return std::binary_search(sorted.begin(), sorted.end(), v,
                            [](const Value& a, const Value& b) { return a.compare(b) < 0; });
}

ExprPtr buildArrayDistinct(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  return fn1(name, args[0]->type(), args, [](const Value& v) {
    const ValueList& items = v.asList();
    ValueList out;
    for (size_t i : firstOccurrences(items)) out.push_back(items[i]);
    return Value::array(std::move(out));
  });
}

template <bool Max>
ExprPtr buildArrayExtreme(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  return fn1(name, elementOf(args[0]), args, [](const Value& v) {
    Value best;
    for (const auto& item : v.asList()) {
      if (item.isNull()) continue;
      if (best.isNull() || (Max ? item.compare(best) > 0 : item.compare(best) < 0)) best = item;
    }
    return best;
  });
}

// Casts args[1] to the array's element type (or both to a common one).
void alignElement(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto c = commonType(elementOf(args[0]), args[i]->type());
  if (!c) throwArgError(name, args, pos, "the value must have the array's element type");
  if (!isNullType(c) && !elementOf(args[0])->equals(*c))
    args[0] = castTo(args[0], DataType::arrayOf(c));
  args[i] = castTo(args[i], c);
}

// array_position(arr, x): 1-based index of the first x, 0 when absent.
ExprPtr buildArrayPosition(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  alignElement(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::BigInt), args, [](const Value& arr, const Value& x) {
    const auto& items = arr.asList();
    for (size_t i = 0; i < items.size(); ++i)
      if (!items[i].isNull() && items[i].compare(x) == 0)
        return Value::bigint(static_cast<int64_t>(i + 1));
    return Value::bigint(0);
  });
}

ExprPtr buildArrayRemove(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  alignElement(name, args, 1, pos);
  return fn2(name, args[0]->type(), args, [](const Value& arr, const Value& x) {
    ValueList out;
    for (const auto& item : arr.asList())
      if (item.isNull() || item.compare(x) != 0) out.push_back(item);
    return Value::array(std::move(out));
  });
}

// array_join(arr, delim[, null_replacement]): NULL elements are skipped
// unless a replacement is given.
ExprPtr buildArrayJoin(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  auto strArr = DataType::arrayOf(DataType::of(TypeId::String));
  if (!elementOf(args[0])->equals(*strArr->element)) {
    if (!canCast(*args[0]->type(), *strArr))
      throwArgError(name, args, pos, "the array's elements must convert to STRING");
    args[0] = castTo(args[0], strArr);
  }
  argString(name, args, 1, pos);
  if (args.size() == 3) argString(name, args, 2, pos);
  return fnN(name, DataType::of(TypeId::String), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               Value arr = a[0]->eval(row);
               if (arr.isNull()) return Value();
               Value d = a[1]->eval(row);
               if (d.isNull()) return Value();
               Value rep;
               if (a.size() == 3) {
                 rep = a[2]->eval(row);
                 if (rep.isNull()) return Value();
               }
               std::string out;
               bool first = true;
               for (const auto& item : arr.asList()) {
                 const Value& v = item.isNull() ? rep : item;
                 if (v.isNull()) continue;
                 checkValueSize("array_join",
                                out.size() + d.asString().size() + v.asString().size());
                 if (!first) out += d.asString();
                 first = false;
                 out += v.asString();
               }
               return Value::string(std::move(out));
             });
}

// Both arguments as arrays of one element type.
DataTypePtr alignArrays(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 2; ++i) {
    if (isNullType(args[i]->type())) args[i] = castTo(args[i], DataType::arrayOf(nullType()));
    if (args[i]->type()->id != TypeId::Array)
      throwArgError(name, args, pos, "the arguments must be ARRAYs");
  }
  auto c = commonType(elementOf(args[0]), elementOf(args[1]));
  if (!c) throwArgError(name, args, pos, "the arrays must have the same element type");
  auto t = DataType::arrayOf(c);
  for (size_t i = 0; i < 2; ++i)
    if (!args[i]->type()->equals(*t)) args[i] = castTo(args[i], t);
  return t;
}

// 0: union, 1: intersect, 2: except; each without duplicates, in order of
// first appearance.
template <int Op>
ExprPtr buildArraySetOp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  auto t = alignArrays(name, args, pos);
  return fn2(name, t, args, [](const Value& a, const Value& b) {
    const ValueList& x = a.asList();
    const ValueList& y = b.asList();
    ValueList out;
    if (Op == 0) {
      ValueList all = x;
      all.insert(all.end(), y.begin(), y.end());
      for (size_t i : firstOccurrences(all)) out.push_back(all[i]);
    } else {
      ValueList sy = sortedCopy(y);
      for (size_t i : firstOccurrences(x))
        if (containsSorted(sy, x[i]) == (Op == 1)) out.push_back(x[i]);
    }
    return Value::array(std::move(out));
  });
}

// arrays_overlap(a, b): TRUE when a non-NULL element is in both; NULL when
// none is but both are non-empty and one holds a NULL; else FALSE.
ExprPtr buildArraysOverlap(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  alignArrays(name, args, pos);
  return fn2(name, DataType::of(TypeId::Boolean), args, [](const Value& a, const Value& b) {
    const ValueList& x = a.asList();
    const ValueList& y = b.asList();
    ValueList sy = sortedCopy(y);
    bool sawNull = false;
    for (const auto& v : x) {
      if (v.isNull()) {
        sawNull = true;
        continue;
      }
      if (containsSorted(sy, v)) return Value::boolean(true);
    }
    for (const auto& v : y) sawNull = sawNull || v.isNull();
    if (sawNull && !x.empty() && !y.empty()) return Value();
    return Value::boolean(false);
  });
}

// sort_array(arr[, asc]): NULLs first ascending, last descending.
// array_sort(arr): ascending with NULLs last.
template <bool ArraySort>
ExprPtr buildSortArray(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  if (ArraySort || args.size() == 1)
    args.push_back(makeLiteral(Value::boolean(true), DataType::of(TypeId::Boolean)));
  argBoolean(name, args, 1, pos);
  return fn2(name, args[0]->type(), args, [](const Value& arr, const Value& ascV) {
    bool asc = ascV.asBool();
    ValueList items = arr.asList();
    std::stable_sort(items.begin(), items.end(), [asc](const Value& a, const Value& b) {
      if (ArraySort && (a.isNull() || b.isNull())) return !a.isNull() && b.isNull();
      int c = a.compare(b);
      return asc ? c < 0 : c > 0;
    });
    return Value::array(std::move(items));
  });
}

// array_sort(arr) or, with a comparator, array_sort(arr, (l, r) -> n).
ExprPtr buildArraySort(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 2) return buildArraySortWithComparator(name, args, pos);
  return buildSortArray<true>(name, args, pos);
}

// _ordered_array_agg(arr, 'AD...'): PostgreSQL's array_agg(x ORDER BY k1,
// k2 DESC, ...), which the parser writes as this call over
// array_agg(struct(k1, k2, ..., x)). Sorts the structs by their leading
// fields, each ascending (A, NULLs last) or descending (D, NULLs first) as
// PostgreSQL orders them, equal keys in arrival order, and keeps the last
// field of each.
ExprPtr buildOrderedArrayAgg(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  const DataTypePtr& item = elementOf(args[0]);
  if (!args[1]->isConstant() || args[1]->type()->id != TypeId::String)
    throwArgError(name, args, pos, "the second argument must be a constant STRING");
  const std::string directions = args[1]->eval(Row{}).asString();
  if (item->id != TypeId::Struct || item->fields.size() != directions.size() + 1)
    throwArgError(name, args, pos, "the array's elements must be structs of the keys and a value");
  // The keys order the values: no key is or holds a map (the value may).
  for (size_t k = 0; k < directions.size(); ++k)
    refuseMapValues(*item->fields[k].type, "ORDER BY", pos, kOrderByMapHint);
  return fn1(name, DataType::arrayOf(item->fields.back().type), args,
             [directions](const Value& arr) {
               ValueList items = arr.asList();
               std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
                 const ValueList& x = a.asList();
                 const ValueList& y = b.asList();
                 for (size_t k = 0; k < directions.size(); ++k) {
                   const bool desc = directions[k] == 'D';
                   if (x[k].isNull() || y[k].isNull()) {
                     if (x[k].isNull() == y[k].isNull()) continue;
                     return desc ? x[k].isNull() : y[k].isNull();
                   }
                   const int c = x[k].compare(y[k]);
                   if (c != 0) return desc ? c > 0 : c < 0;
                 }
                 return false;
               });
               ValueList values;
               values.reserve(items.size());
               for (const Value& v : items) values.push_back(v.asList().back());
               return Value::array(std::move(values));
             });
}

// slice(arr, start, length): start is 1-based (negative counts from the end);
// start 0 and a negative length are 22023, as in Spark.
ExprPtr buildSlice(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  argInt(name, args, 1, pos);
  argInt(name, args, 2, pos);
  return fn3(name, args[0]->type(), args, [](const Value& arr, const Value& s, const Value& l) {
    const ValueList& items = arr.asList();
    auto n = static_cast<int64_t>(items.size());
    int64_t start = s.asInt(), len = l.asInt();
    if (start == 0)
      throw SqlError(sqlstate::kInvalidParameterValue, "slice: the start index must not be 0");
    if (len < 0)
      throw SqlError(sqlstate::kInvalidParameterValue, "slice: the length must not be negative");
    int64_t b = start > 0 ? start - 1 : n + start;
    if (b < 0 || b >= n) return Value::array({});
    int64_t e = std::min(n, b + len);
    return Value::array(ValueList(items.begin() + b, items.begin() + e));
  });
}

// flatten(array of arrays): NULL when one of the inner arrays is NULL.
ExprPtr buildFlatten(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  auto inner = elementOf(args[0]);
  if (isNullType(inner)) return args[0];
  if (inner->id != TypeId::Array)
    throwArgError(name, args, pos, "the argument must be an ARRAY of ARRAYs");
  return fn1(name, inner, args, [](const Value& v) {
    ValueList out;
    for (const auto& item : v.asList()) {
      if (item.isNull()) return Value();
      const ValueList& sub = item.asList();
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return Value::array(std::move(out));
  });
}

// The most elements a function that makes an array from numbers (sequence,
// array_repeat) builds: the value size limit at 16 bytes an element.
constexpr int64_t kMaxGeneratedElements = static_cast<int64_t>(kMaxValueBytes / 16);

[[noreturn]] void tooManyElements(const char* fn) {
  throw SqlError(sqlstate::kProgramLimitExceeded,
                 fmt::format("{} would build more than {} elements", fn, kMaxGeneratedElements));
}

// sequence(start, stop[, step]) over integers, or over timestamps with an
// INTERVAL step (1 day by default). A step of the wrong sign is 22023.
ExprPtr buildSequence(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Date || args[1]->type()->id == TypeId::Date) {
    // The days of a DATE sequence are those of the sequence of their
    // midnights (a day apart unless a step says otherwise), as in Spark.
    argTimestamp(name, args, 0, pos);
    argTimestamp(name, args, 1, pos);
    return castTo(buildSequence(name, args, pos), DataType::arrayOf(DataType::of(TypeId::Date)));
  }
  bool time = args[0]->type()->id == TypeId::Timestamp || args[1]->type()->id == TypeId::Timestamp;
  // Two TIMESTAMP_NTZs (or one and text) make a sequence of TIMESTAMP_NTZs.
  bool wallClock = !time && (args[0]->type()->id == TypeId::TimestampNtz ||
                             args[1]->type()->id == TypeId::TimestampNtz);
  if (time || wallClock) {
    if (wallClock) {
      DataTypePtr t = commonType(args[0]->type(), args[1]->type());
      if (!t || t->id != TypeId::TimestampNtz)
        throwArgError(name, args, pos, "the bounds must both be TIMESTAMP_NTZ");
      args[0] = castTo(args[0], t);
      args[1] = castTo(args[1], t);
    } else {
      argTimestamp(name, args, 0, pos);
      argTimestamp(name, args, 1, pos);
    }
    if (args.size() == 2)
      args.push_back(makeLiteral(Value::interval(kMicrosPerDay), DataType::of(TypeId::Interval)));
    if (args[2]->type()->id != TypeId::Interval && !isNullType(args[2]->type()))
      throwArgError(name, args, pos, "the step of a timestamp sequence must be an INTERVAL");
    args[2] = castTo(args[2], DataType::of(TypeId::Interval));
  } else {
    for (size_t i = 0; i < args.size(); ++i) {
      argNumeric(name, args, i, pos);
      if (args[i]->type()->id == TypeId::Double)
        throwArgError(name, args, pos, "the bounds must be integers");
    }
    argsCommon(name, args, 0, pos);
  }
  auto et = args[0]->type();
  bool hasStep = args.size() == 3;
  return fnN(
      name, DataType::arrayOf(et), args, true,
      [hasStep](const Row& row, const std::vector<ExprPtr>& a) {
        Value s = a[0]->eval(row);
        if (s.isNull()) return Value();
        Value e = a[1]->eval(row);
        if (e.isNull()) return Value();
        int64_t start = s.asInt(), stop = e.asInt(), step;
        if (hasStep) {
          Value st = a[2]->eval(row);
          if (st.isNull()) return Value();
          step = st.asInt();
        } else {
          step = stop >= start ? 1 : -1;
        }
        if ((s.type() == TypeId::Timestamp || s.type() == TypeId::TimestampNtz) && !hasStep && stop < start)
          step = -step;
        if (step == 0 ? start != stop : (step > 0) != (stop >= start) && start != stop)
          throw SqlError(
              sqlstate::kInvalidParameterValue,
              fmt::format("sequence: a step of {} cannot go from {} to {}", step, start, stop));
        if (step == 0) step = 1;
        // The count in unsigned arithmetic: stop - start may overflow int64.
        uint64_t span = step > 0 ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start)
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
        uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
        uint64_t count = span / mag + 1;
        if (count > static_cast<uint64_t>(kMaxGeneratedElements)) tooManyElements("sequence");
        ValueList out;
        out.reserve(count);
        auto type = s.type();
        for (uint64_t i = 0; i < count; ++i) {
          auto x =
              static_cast<int64_t>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(step));
          out.push_back(type == TypeId::Int         ? Value::integer(static_cast<int32_t>(x))
                        : type == TypeId::Timestamp ? Value::timestamp(x)
                        : type == TypeId::TimestampNtz ? Value::timestampNtz(x)
                                                    : Value::bigint(x));
        }
        return Value::array(std::move(out));
      });
}

// array_repeat(x, n): n copies of x (NULL x gives NULLs, as in Spark).
ExprPtr buildArrayRepeat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argInt(name, args, 1, pos);
  auto et = args[0]->type();
  return fnN(name, DataType::arrayOf(et), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               Value n = a[1]->eval(row);
               if (n.isNull()) return Value();
               Value x = a[0]->eval(row);
               int64_t k = std::max<int64_t>(0, n.asInt());
               if (k > kMaxGeneratedElements) tooManyElements("array_repeat");
               return Value::array(ValueList(static_cast<size_t>(k), x));
             });
}

// array_append(arr, x), array_prepend(arr, x): x may be NULL.
template <bool Append>
ExprPtr buildArrayAdd(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  alignElement(name, args, 1, pos);
  return fnN(name, args[0]->type(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value arr = a[0]->eval(row);
    if (arr.isNull()) return Value();
    ValueList items;
    items.reserve(arr.asList().size() + 1);
    if (!Append) items.push_back(a[1]->eval(row));
    items.insert(items.end(), arr.asList().begin(), arr.asList().end());
    if (Append) items.push_back(a[1]->eval(row));
    return Value::array(std::move(items));
  });
}

ExprPtr buildArrayCompact(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  return fn1(name, args[0]->type(), args, [](const Value& v) {
    ValueList out;
    for (const auto& item : v.asList())
      if (!item.isNull()) out.push_back(item);
    return Value::array(std::move(out));
  });
}

// array_size(arr): the number of elements; NULL for NULL (unlike size()).
ExprPtr buildArraySize(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
    return Value::integer(static_cast<int32_t>(v.asList().size()));
  });
}

// get(arr, i): 0-based, NULL out of range. try_element_at: element_at's
// 1-based index with NULL for index 0 too.
template <bool ZeroBased>
ExprPtr buildGet(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (!ZeroBased && args[0]->type()->id == TypeId::Map) return buildMapLookup(name, args, pos);
  requireArray(name, args, pos);
  argBigInt(name, args, 1, pos);
  // get() answers NULL in both modes, try_element_at too but for index 0.
  // Not const: as a constant (when ZeroBased) it would need no capture.
  bool ansi = !ZeroBased && ansiMode();
  return fn2(name, elementOf(args[0]), args, [ansi](const Value& arr, const Value& i) {
    const auto& items = arr.asList();
    auto n = static_cast<int64_t>(items.size());
    int64_t k = i.asInt();
    if (ZeroBased) return k < 0 || k >= n ? Value() : items[static_cast<size_t>(k)];
    if (k == 0 && ansi) elementAtOutOfRange(k, n, true);
    if (k == 0 || k > n || k < -n) return Value();
    return items[static_cast<size_t>(k > 0 ? k - 1 : n + k)];
  });
}

// arrays_zip(a, b, ...): an array of structs, the i-th holding the i-th
// element of each array (NULL where an array is shorter).
ExprPtr buildArraysZip(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  std::vector<StructField> fields;
  for (size_t i = 0; i < args.size(); ++i) {
    if (isNullType(args[i]->type())) args[i] = castTo(args[i], DataType::arrayOf(nullType()));
    if (args[i]->type()->id != TypeId::Array)
      throwArgError(name, args, pos, "the arguments must be ARRAYs");
    std::string n;
    if (auto* c = dynamic_cast<const ColumnRefExpr*>(args[i].get()); c && !c->name().empty())
      n = c->name();
    else
      n = std::to_string(i);
    fields.push_back({n, elementOf(args[i])});
  }
  return fnN(name, DataType::arrayOf(DataType::structOf(std::move(fields))), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               std::vector<Value> arrays;
               size_t longest = 0;
               for (const auto& e : a) {
                 arrays.push_back(e->eval(row));
                 if (arrays.back().isNull()) return Value();
                 longest = std::max(longest, arrays.back().asList().size());
               }
               ValueList out;
               out.reserve(longest);
               for (size_t i = 0; i < longest; ++i) {
                 ValueList fs;
                 for (const auto& arr : arrays)
                   fs.push_back(i < arr.asList().size() ? arr.asList()[i] : Value());
                 out.push_back(Value::structure(std::move(fs)));
               }
               return Value::array(std::move(out));
             });
}

// shuffle(arr): a random permutation; non-deterministic.
ExprPtr buildShuffle(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  return fnN(name, args[0]->type(), args, false, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value v = a[0]->eval(row);
    if (v.isNull()) return v;
    thread_local std::mt19937_64 gen{randomSeed()};
    ValueList items = v.asList();
    std::shuffle(items.begin(), items.end(), gen);
    return Value::array(std::move(items));
  });
}

// array_insert(arr, pos, x): x inserted at 1-based pos; a negative pos counts
// from the end (-1 appends); a pos beyond either end pads with NULLs. pos 0
// is 22023, as in Spark.
ExprPtr buildArrayInsert(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  requireArray(name, args, pos);
  argInt(name, args, 1, pos);
  alignElement(name, args, 2, pos);
  return fnN(name, args[0]->type(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value arr = a[0]->eval(row);
    if (arr.isNull()) return Value();
    Value p = a[1]->eval(row);
    if (p.isNull()) return Value();
    Value x = a[2]->eval(row);
    const ValueList& items = arr.asList();
    auto n = static_cast<int64_t>(items.size());
    int64_t k = p.asInt();
    if (k == 0)
      throw SqlError(sqlstate::kInvalidParameterValue, "array_insert: the position must not be 0");
    int64_t at = k > 0 ? k - 1 : n + k + 1;  // 0-based place of x
    int64_t total = at < 0 ? n - at + 1 : std::max(n, at) + 1;
    if (total > kMaxGeneratedElements) tooManyElements("array_insert");
    ValueList out;
    out.reserve(static_cast<size_t>(total));
    if (at < 0) {
      out.push_back(x);
      out.resize(static_cast<size_t>(1 - at));  // -at NULLs between x and the array
      out.insert(out.end(), items.begin(), items.end());
    } else if (at >= n) {
      out = items;
      out.resize(static_cast<size_t>(at));
      out.push_back(x);
    } else {
      out.insert(out.end(), items.begin(), items.begin() + at);
      out.push_back(x);
      out.insert(out.end(), items.begin() + at, items.end());
    }
    return Value::array(std::move(out));
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
  t["array_distinct"] = {1, 1, buildArrayDistinct};
  t["array_max"] = {1, 1, buildArrayExtreme<true>};
  t["array_min"] = {1, 1, buildArrayExtreme<false>};
  t["array_position"] = {2, 2, buildArrayPosition};
  t["array_remove"] = {2, 2, buildArrayRemove};
  t["array_join"] = {2, 3, buildArrayJoin};
  t["array_union"] = {2, 2, buildArraySetOp<0>};
  t["array_intersect"] = {2, 2, buildArraySetOp<1>};
  t["array_except"] = {2, 2, buildArraySetOp<2>};
  t["arrays_overlap"] = {2, 2, buildArraysOverlap};
  t["sort_array"] = {1, 2, buildSortArray<false>};
  t["array_sort"] = {1, 2, buildArraySort};
  t["_ordered_array_agg"] = {2, 2, buildOrderedArrayAgg};
  t["slice"] = {3, 3, buildSlice};
  t["flatten"] = {1, 1, buildFlatten};
  t["sequence"] = {2, 3, buildSequence};
  t["array_repeat"] = {2, 2, buildArrayRepeat};
  t["array_append"] = {2, 2, buildArrayAdd<true>};
  t["array_prepend"] = {2, 2, buildArrayAdd<false>};
  t["array_compact"] = {1, 1, buildArrayCompact};
  t["array_size"] = {1, 1, buildArraySize};
  t["get"] = {2, 2, buildGet<true>};
  t["try_element_at"] = {2, 2, buildGet<false>};
  t["arrays_zip"] = {1, -1, buildArraysZip};
  t["shuffle"] = {1, 1, buildShuffle, kNotDeterministic};
  t["array_insert"] = {3, 3, buildArrayInsert};
}

}  // namespace rtsql::expr_internal
