#include "executor/operators/transform.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/functions/python_processor.h"
#include "common/row_codec.h"
#include "executor/operators/stateful_operator.h"

namespace rtsql {
namespace {

constexpr char kStateTag = 'S';

int64_t wallClockMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class TransformOperator final : public StatefulOperator {
 public:
  TransformOperator(const TransformSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)), spec_(spec) {
    if (!spec_.processor) throw InternalError("Transform without a processor");
    for (const auto& k : spec_.partitionKeys) keyTypes_.push_back(k->type());
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // The processor's object is made on the task's thread at its first row,
    // so that an exception in its init() fails the flow as a row's would.
    if (!instance_) instance_ = std::make_unique<ProcessorInstance>(spec_.processor, spec_.options);
    keyValues_.clear();
    key_.clear();
    for (const auto& k : spec_.partitionKeys) {
      keyValues_.push_back(k->eval(row));
      encodeKey(key_, keyValues_.back());
    }
    entries_.clear();
    state_.scanKey(kStateTag, key_, 0, 0,
                   [this](int64_t, std::string_view name, std::string_view v) {
                     entries_.emplace_back(std::string(name), std::string(v));
                   });
    rows_.assign(1, Row(row.begin(), row.begin() + spec_.inputColumns));
    const std::optional<int64_t> watermark = watermark_ == std::numeric_limits<int64_t>::min()
                                                 ? std::nullopt
                                                 : std::optional<int64_t>(watermark_ / 1000);
    ProcessorInstance::Result result;
    instance_->handleInputRows(keyValues_, keyTypes_, rows_, spec_.inputSchema, entries_,
                               wallClockMillis(), watermark, result);
    for (const auto& [name, bytes] : result.changes) {
      if (bytes) {
        state_.putKeyAt(kStateTag, key_, 0, name, *bytes);
      } else {
        state_.eraseKeyAt(kStateTag, key_, 0, name);
      }
      countUpdate();
    }
    if (!result.changes.empty()) refreshStats();
    for (Row& produced : result.rows) {
      Row out;
      out.reserve(keyValues_.size() + produced.size());
      out.insert(out.end(), keyValues_.begin(), keyValues_.end());
      for (Value& v : produced) out.push_back(std::move(v));
      emit(out, ctx);
    }
  }

  std::string name() const override { return "Transform"; }

 private:
  // State is kept until the processor clears it (or TTL finds it expired).
  void expire(int64_t) override {}

  TransformSpec spec_;
  std::vector<DataTypePtr> keyTypes_;
  std::unique_ptr<ProcessorInstance> instance_;
  // Buffers reused for every row.
  Row keyValues_;
  std::string key_;
  std::vector<ProcessorStateEntry> entries_;
  std::vector<Row> rows_;
};

}  // namespace

OperatorPtr makeTransform(const TransformSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<TransformOperator>(spec, std::move(state));
}

}  // namespace rtsql
