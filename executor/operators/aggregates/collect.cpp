// collect_list (array_agg), collect_set and string_agg (listagg): aggregates
// that keep the group's values, so they take retractions (a retracted value
// leaves the list once) and grow with the group. Each checks the cap on the
// size of one value (64 MiB, checkBuiltValueSize) before it grows: the row
// that would pass it fails with 54000 instead of the state growing without
// bound.
//
// State (family.h):
//   collect_list, string_agg: fixed64 n, then n values (encodeValue)
//   collect_set:              fixed64 n, then n times a value (encodeValue)
//                             and fixed64 its row count, in value order
//
// As in Spark, NULLs are skipped; collect_list and collect_set of no value are
// an empty array and string_agg of none is NULL. collect_list keeps the order
// in which the rows arrive (a retraction removes the value's last
// occurrence); collect_set answers its values in ascending order (Spark's
// order is its hash set's); string_agg joins the values in arrival order with
// the separator ('' when none is given).
#include <algorithm>

#include "common/error.h"
#include "common/row_codec.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql::aggregates {
namespace {

void encodeItems(std::string& out, const Accumulator& a, bool withCounts) {
  putFixed64(out, a.items.size());
  for (size_t i = 0; i < a.items.size(); ++i) {
    encodeValue(out, a.items[i]);
    if (withCounts) putFixed64(out, static_cast<uint64_t>(a.counts[i]));
  }
}

void decodeItems(std::string_view& in, Accumulator& a, const DataType& type, bool withCounts) {
  const uint64_t n = getFixed64(in);
  // Every item takes at least one byte: a count beyond the bytes left is a
  // damaged value, not a reason to reserve memory.
  if (n > in.size()) throw InternalError("aggregate state value is truncated");
  a.items.clear();
  a.counts.clear();
  a.bytes = 0;
  a.items.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    a.items.push_back(decodeValue(in, type));
    a.bytes += valueBytes(a.items.back());
    if (withCounts) a.counts.push_back(static_cast<int64_t>(getFixed64(in)));
  }
}

// Removes the last occurrence of `v`, if any.
void removeLast(Accumulator& a, const Value& v) {
  for (size_t i = a.items.size(); i-- > 0;) {
    if (a.items[i].compare(v) == 0) {
      a.bytes -= std::min(a.bytes, valueBytes(a.items[i]));
      a.items.erase(a.items.begin() + static_cast<long>(i));
      return;
    }
  }
}

class CollectList final : public AggregateFamily {
 public:
  CollectList(DataTypePtr type, const char* name, bool joined, std::string separator)
      : type_(std::move(type)), name_(name), joined_(joined), separator_(std::move(separator)) {}
  void add(Accumulator& a, const Value& v) const override {
    const size_t grown = a.bytes + valueBytes(v) + (joined_ ? separator_.size() : 0);
    checkListSize(name_, grown);
    a.items.push_back(v);
    a.bytes = grown;
  }
  void retract(Accumulator& a, const Value& v) const override {
    const size_t before = a.items.size();
    removeLast(a, v);
    if (joined_ && a.items.size() < before) a.bytes -= std::min(a.bytes, separator_.size());
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    for (const Value& v : from.items) add(into, v);
  }
  void encode(std::string& out, const Accumulator& a) const override { encodeItems(out, a, false); }
  void decode(std::string_view& in, Accumulator& a) const override {
    decodeItems(in, a, *type_, false);
    if (joined_) a.bytes += a.items.size() * separator_.size();
  }
  Value result(const Accumulator& a) const override {
    if (!joined_) return Value::array(a.items);
    if (a.items.empty()) return Value();
    std::string out;
    out.reserve(a.bytes);
    for (size_t i = 0; i < a.items.size(); ++i) {
      if (i) out += separator_;
      out += a.items[i].asString();
    }
    return type_->id == TypeId::Binary ? Value::binary(std::move(out))
                                       : Value::string(std::move(out));
  }

 private:
  DataTypePtr type_;
  const char* name_;
  bool joined_;
  std::string separator_;
};

class CollectSet final : public AggregateFamily {
 public:
  explicit CollectSet(DataTypePtr type) : type_(std::move(type)) {}
  void add(Accumulator& a, const Value& v) const override { addCount(a, v, 1); }
  void retract(Accumulator& a, const Value& v) const override { retractCounted(a, v); }
  void merge(Accumulator& into, const Accumulator& from) const override {
    for (size_t i = 0; i < from.items.size(); ++i) addCount(into, from.items[i], from.counts[i]);
  }
  void encode(std::string& out, const Accumulator& a) const override { encodeItems(out, a, true); }
  void decode(std::string_view& in, Accumulator& a) const override {
    decodeItems(in, a, *type_, true);
  }
  Value result(const Accumulator& a) const override { return Value::array(a.items); }

 private:
  void addCount(Accumulator& a, const Value& v, int64_t n) const {
    addCounted(a, v, n, "collect_set()");
  }
  DataTypePtr type_;
};

}  // namespace

std::shared_ptr<const AggregateFamily> makeCollect(const AggregateCall& call) {
  const DataTypePtr& t = call.arg->type();
  switch (call.function) {
    case AggregateFunction::CollectList:
      return std::make_shared<CollectList>(t, "collect_list()", false, std::string());
    case AggregateFunction::CollectSet: return std::make_shared<CollectSet>(t);
    case AggregateFunction::StringAgg:
      return std::make_shared<CollectList>(t, "string_agg()", true, call.separator);
    default: throw InternalError("not a collecting aggregate");
  }
}

}  // namespace rtsql::aggregates
