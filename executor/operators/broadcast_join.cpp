#include "executor/operators/broadcast_join.h"

#include <unordered_map>
#include <vector>

namespace rtsql {
namespace {

// Hash and equality over a key tuple. Value::hash agrees with Value::compare,
// so keys of different numeric types (INT 1, BIGINT 1) find each other, as SQL
// equality does.
struct KeyHash {
  size_t operator()(const std::vector<Value>& key) const {
    size_t h = 0x12345;
    for (const auto& v : key) h ^= v.hash() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};
struct KeyEq {
  bool operator()(const std::vector<Value>& a, const std::vector<Value>& b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].compare(b[i]) != 0) return false;
    return true;
  }
};

bool hasNull(const std::vector<Value>& key) {
  for (const auto& v : key)
    if (v.isNull()) return true;
  return false;
}

class BroadcastJoinOperator final : public Operator {
 public:
  explicit BroadcastJoinOperator(const BroadcastJoinSpec& spec)
      : rows_(spec.tableRows),
        tableWidth_(spec.tableSchema.size()),
        probeKeys_(spec.probeKeys),
        leftOuter_(spec.leftOuter),
        residual_(spec.residual) {
    if (!rows_) rows_ = std::make_shared<const std::vector<Row>>();
    if (spec.probeKeys.size() != spec.buildKeys.size())
      throw InternalError("BroadcastJoin: probe and build key counts differ");
    // Rows with a NULL key can never be equal to anything, so they are left out
    // of the table rather than filtered at every probe.
    std::vector<Value> key(spec.buildKeys.size());
    for (uint32_t i = 0; i < rows_->size(); ++i) {
      const Row& r = (*rows_)[i];
      for (size_t k = 0; k < key.size(); ++k) key[k] = spec.buildKeys[k]->eval(r);
      if (hasNull(key)) continue;
      table_[key].push_back(i);
    }
    probe_.resize(probeKeys_.size());
    // One integer key on both sides (the usual id join): a table keyed by the
    // number itself, whose lookups hash an int64 and compare without following
    // a key vector's pointer. Same matches: Value equality of INT and BIGINT
    // is equality of the numbers.
    if (probeKeys_.size() == 1 && isInteger(*probeKeys_[0]->type()) &&
        isInteger(*spec.buildKeys[0]->type())) {
      for (auto& [k, indexes] : table_) intTable_.emplace(k[0].asInt(), std::move(indexes));
      table_.clear();
      byInt_ = true;
    }
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    const std::vector<uint32_t>* indexes = byInt_ ? findInt(row) : find(row);
    bool matched = false;
    if (indexes) {
      for (uint32_t index : *indexes) {
        // The joined row is rebuilt for every match: the operators downstream
        // may have modified the previous one in place.
        fill(row, &(*rows_)[index]);
        if (residual_) {
          Value scratch;
          const Value& ok = residual_->evalRef(out_, scratch);
          if (ok.isNull() || !ok.asBool()) continue;
        }
        matched = true;
        emit(out_, ctx);
      }
    }
    if (!matched && leftOuter_) {
      fill(row, nullptr);
      emit(out_, ctx);
    }
  }

  std::string name() const override { return "BroadcastJoin"; }

 private:
  static bool isInteger(const DataType& t) { return t.id == TypeId::Int || t.id == TypeId::BigInt; }

  // The table rows matching `row`'s key; null when none (or the key has a NULL).
  const std::vector<uint32_t>* find(const Row& row) {
    for (size_t k = 0; k < probeKeys_.size(); ++k) probeKeys_[k]->evalInto(row, probe_[k]);
    if (hasNull(probe_)) return nullptr;
    auto it = table_.find(probe_);
    return it == table_.end() ? nullptr : &it->second;
  }
  const std::vector<uint32_t>* findInt(const Row& row) {
    Value scratch;
    const Value& key = probeKeys_[0]->evalRef(row, scratch);
    if (key.isNull()) return nullptr;
    auto it = intTable_.find(key.asInt());
    return it == intTable_.end() ? nullptr : &it->second;
  }

  // Stream columns then the table row's columns (NULLs when `table` is null).
  // out_ is a member reused for every row, so it stops reallocating once it
  // reached the joined width.
  void fill(const Row& stream, const Row* table) {
    out_.resize(stream.size() + tableWidth_);
    for (size_t i = 0; i < stream.size(); ++i) out_[i] = stream[i];
    // Copy-assigning into out_'s Values reuses their string buffers; a ternary
    // of a row's Value and Value() would copy into a temporary first.
    for (size_t i = 0; i < tableWidth_; ++i) {
      if (table && i < table->size()) {
        out_[stream.size() + i] = (*table)[i];
      } else {
        out_[stream.size() + i] = Value();
      }
    }
  }

  std::shared_ptr<const std::vector<Row>> rows_;
  size_t tableWidth_;
  std::vector<ExprPtr> probeKeys_;
  bool leftOuter_;
  ExprPtr residual_;
  std::unordered_map<std::vector<Value>, std::vector<uint32_t>, KeyHash, KeyEq> table_;
  bool byInt_ = false;
  std::unordered_map<int64_t, std::vector<uint32_t>> intTable_;
  std::vector<Value> probe_;
  Row out_;
};

}  // namespace

OperatorPtr makeBroadcastJoin(const BroadcastJoinSpec& spec) {
  return std::make_unique<BroadcastJoinOperator>(spec);
}

}  // namespace rtsql
