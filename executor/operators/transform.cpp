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
constexpr char kTimerTag = 'T';
constexpr char kKeyTimerTag = 'K';

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
    keyValues_.clear();
    key_.clear();
    for (const auto& k : spec_.partitionKeys) {
      keyValues_.push_back(k->eval(row));
      encodeKey(key_, keyValues_.back());
    }
    rows_.assign(1, Row(row.begin(), row.begin() + spec_.inputColumns));
    call(std::nullopt, ctx);
  }

  // Processing-time timers fire as the task goes through its batches.
  void onBatchEnd() override {
    if (!spec_.processor->eventTimeTimers()) fireThrough(wallClockMillis());
    Operator::onBatchEnd();
  }

  std::string name() const override { return "Transform"; }

 private:
  struct Fired {
    int64_t time;
    std::string key, keyRow;
  };

  // One call for the key in key_ / keyValues_: handle_input_rows over rows_,
  // or handle_expired_timer for the key's timer at `expiry`; writes back what
  // the call changed and emits its rows.
  void call(std::optional<int64_t> expiry, const RecordContext& ctx) {
    // The processor's object is made on the task's thread when first needed,
    // so that an exception in its init() fails the flow as a row's would.
    if (!instance_) instance_ = std::make_unique<ProcessorInstance>(spec_.processor, spec_.options);
    entries_.clear();
    state_.scanKey(kStateTag, key_, 0, 0,
                   [this](int64_t, std::string_view name, std::string_view v) {
                     entries_.emplace_back(std::string(name), std::string(v));
                   });
    timers_.clear();
    state_.scanKey(kKeyTimerTag, key_, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::max(),
                   [this](int64_t t, std::string_view, std::string_view) { timers_.push_back(t); });
    const std::optional<int64_t> watermark = watermark_ == std::numeric_limits<int64_t>::min()
                                                 ? std::nullopt
                                                 : std::optional<int64_t>(watermark_ / 1000);
    ProcessorInstance::Result result;
    instance_->handleInputRows(keyValues_, keyTypes_, rows_, spec_.inputSchema, entries_, timers_,
                               wallClockMillis(), watermark, expiry, result);
    for (const auto& [t, add] : result.timerChanges) {
      if (add) {
        keyRow_.clear();
        encodeRow(keyRow_, keyValues_);
        state_.putAt(kTimerTag, t, key_, keyRow_);
        state_.putKeyAt(kKeyTimerTag, key_, t, {}, {});
      } else {
        state_.eraseAt(kTimerTag, t, key_);
        state_.eraseKeyAt(kKeyTimerTag, key_, t, {});
      }
      countUpdate();
    }
    for (const auto& [name, bytes] : result.changes) {
      if (bytes) {
        state_.putKeyAt(kStateTag, key_, 0, name, *bytes);
      } else {
        state_.eraseKeyAt(kStateTag, key_, 0, name);
      }
      countUpdate();
    }
    if (!result.changes.empty() || !result.timerChanges.empty()) refreshStats();
    for (Row& produced : result.rows) {
      Row out;
      out.reserve(keyValues_.size() + produced.size());
      out.insert(out.end(), keyValues_.begin(), keyValues_.end());
      for (Value& v : produced) out.push_back(std::move(v));
      emit(out, ctx);
    }
  }

  // Calls handle_expired_timer for every timer at or before `through` (ms),
  // in time order. The timers are taken out before the first call, so a
  // timer that a call registers at or before `through` fires at the next
  // step, not in this one.
  void fireThrough(int64_t through) {
    fired_.clear();
    state_.expireThrough(kTimerTag, through,
                         [this](int64_t t, std::string_view key, std::string_view keyRow) {
                           fired_.push_back(Fired{t, std::string(key), std::string(keyRow)});
                         });
    for (const Fired& f : fired_) {
      key_ = f.key;
      keyValues_ = decodeRow(f.keyRow, keyTypes_);
      state_.eraseKeyAt(kKeyTimerTag, key_, f.time, {});
      rows_.clear();
      call(f.time, RecordContext{});
    }
    if (!fired_.empty()) refreshStats();
  }

  // Event-time timers fire as the watermark passes them; processing-time
  // ones are checked here too, so that they fire while the task sees
  // watermarks but no rows. The states themselves are kept until the
  // processor clears them (or TTL finds them expired).
  void expire(int64_t watermark) override {
    fireThrough(spec_.processor->eventTimeTimers() ? watermark / 1000 : wallClockMillis());
  }

  TransformSpec spec_;
  std::vector<DataTypePtr> keyTypes_;
  std::unique_ptr<ProcessorInstance> instance_;
  // Buffers reused for every row.
  Row keyValues_;
  std::string key_;
  std::vector<ProcessorStateEntry> entries_;
  std::vector<Row> rows_;
  std::vector<int64_t> timers_;
  std::string keyRow_;
  std::vector<Fired> fired_;
};

}  // namespace

OperatorPtr makeTransform(const TransformSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<TransformOperator>(spec, std::move(state));
}

}  // namespace rtsql
