#include "executor/operators/transform.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/python/processor.h"
#include "common/row_codec.h"
#include "executor/operators/stateful_operator.h"

namespace rtsql {
namespace {

constexpr char kStateTag = 'S';
constexpr char kTtlTag = 'E';
constexpr char kTimerTag = 'T';
constexpr char kKeyTimerTag = 'K';

// The first byte of an 'S' value (transform.h): the layout with the expiry
// time, and the one before it (the pickle alone, which starts with pickle's
// PROTO opcode).
constexpr char kStateLayout = '\x01';
constexpr char kPickleOnly = '\x80';
constexpr size_t kExpiryEnd = 1 + 8;  // the layout byte, encodeKeyInt(expiry)
constexpr int64_t kNoExpiry = std::numeric_limits<int64_t>::max();
// wakeAt_ before the operator has looked at its state (a restore may have
// brought timers and expiries): now, so that the task's next step looks.
constexpr int64_t kWakeUnknown = std::numeric_limits<int64_t>::min();

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

  // Processing-time work (timers, TTL) is done as the task goes through its
  // batches, and the task ends one, empty, when wakeAtMillis() has come.
  void onBatchEnd() override {
    onClock();
    Operator::onBatchEnd();
  }

  int64_t wakeAtMillis() override { return std::min(wakeAt_, Operator::wakeAtMillis()); }

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
    expiries_.clear();
    state_.scanKey(kStateTag, key_, 0, 0,
                   [this](int64_t, std::string_view name, std::string_view v) {
                     int64_t expiry = kNoExpiry;
                     std::string_view pickle = storedPickle(name, v, expiry);
                     entries_.emplace_back(std::string(name), std::string(pickle));
                     expiries_.push_back(expiry);
                   });
    timers_.clear();
    state_.scanKey(kKeyTimerTag, key_, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::max(),
                   [this](int64_t t, std::string_view, std::string_view) { timers_.push_back(t); });
    const std::optional<int64_t> watermark = watermark_ == std::numeric_limits<int64_t>::min()
                                                 ? std::nullopt
                                                 : std::optional<int64_t>(watermark_ / 1000);
    ProcessorInstance::Result result;
    const int64_t now = wallClockMillis();
    instance_->handleInputRows(keyValues_, keyTypes_, rows_, spec_.inputSchema, entries_, timers_,
                               now, watermark, expiry, result);
    for (const auto& [t, add] : result.timerChanges) {
      if (add) {
        keyRow_.clear();
        encodeRow(keyRow_, keyValues_);
        state_.putAt(kTimerTag, t, key_, keyRow_);
        state_.putKeyAt(kKeyTimerTag, key_, t, {}, {});
        if (!spec_.processor->eventTimeTimers()) wakeAt_ = std::min(wakeAt_, t);
      } else {
        state_.eraseAt(kTimerTag, t, key_);
        state_.eraseKeyAt(kKeyTimerTag, key_, t, {});
      }
      countUpdate();
    }
    for (const ProcessorStateChange& c : result.changes) {
      const int64_t was = storedExpiry(c.name);
      const int64_t expires =
          c.bytes && c.ttlMs && *c.ttlMs <= kNoExpiry - now ? now + *c.ttlMs : kNoExpiry;
      if (was != expires) {
        ttlRest_.assign(key_);
        ttlRest_.append(c.name);
        if (was != kNoExpiry) state_.eraseAt(kTtlTag, was, ttlRest_);
        if (expires != kNoExpiry) {
          state_.putAt(kTtlTag, expires, ttlRest_, c.name);
          wakeAt_ = std::min(wakeAt_, expires);
        }
      }
      if (c.bytes) {
        value_.assign(1, kStateLayout);
        encodeKeyInt(value_, expires);
        value_.append(*c.bytes);
        state_.putKeyAt(kStateTag, key_, 0, c.name, value_);
      } else {
        state_.eraseKeyAt(kStateTag, key_, 0, c.name);
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

  // The pickle of the 'S' value `v` of state `name`, and its expiry time
  // (kNoExpiry when it has none or is of the layout before expiry times).
  std::string_view storedPickle(std::string_view name, std::string_view v, int64_t& expiry) const {
    if (!v.empty() && v[0] == kPickleOnly) return v;
    if (v.size() < kExpiryEnd || v[0] != kStateLayout) {
      throw InternalError(
          fmt::format("Transform (processor {}): state {} has a value of an unknown layout (first "
                      "byte {:#04x})",
                      spec_.processor->name(), name, v.empty() ? 0 : static_cast<uint8_t>(v[0])));
    }
    std::string_view t = v.substr(1, kExpiryEnd - 1);
    expiry = decodeKeyInt(t);
    return v.substr(kExpiryEnd);
  }

  // The expiry of the entry `name` of the key the call read, kNoExpiry when
  // it had none (or no entry).
  int64_t storedExpiry(const std::string& name) const {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == name) return expiries_[i];
    }
    return kNoExpiry;
  }

  // The work the clock brings, when its time has come: processing-time
  // timers fire, expired entries are deleted, and the time of the next such
  // work is looked up again.
  void onClock() {
    const int64_t now = wallClockMillis();
    if (now < wakeAt_) return;
    const bool processingTimers = !spec_.processor->eventTimeTimers();
    if (processingTimers) fireThrough(now);
    sweepExpired(now);
    wakeAt_ = kNoExpiry;
    if (processingTimers) wakeAt_ = state_.firstAt(kTimerTag).value_or(kNoExpiry);
    wakeAt_ = std::min(wakeAt_, state_.firstAt(kTtlTag).value_or(kNoExpiry));
  }

  // Deletes every entry whose TTL ended at or before `now` (ms), with no
  // call: the processor would read it as absent.
  void sweepExpired(int64_t now) {
    bool swept = false;
    state_.expireThrough(kTtlTag, now, [&](int64_t, std::string_view rest, std::string_view name) {
      state_.eraseKeyAt(kStateTag, rest.substr(0, rest.size() - name.size()), 0, name);
      countUpdate();
      swept = true;
    });
    if (swept) refreshStats();
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

  // Event-time timers fire as the watermark passes them; the clock's work is
  // looked at too, as at a batch's end. The states themselves are kept until
  // the processor clears them or their TTL ends.
  void expire(int64_t watermark) override {
    if (spec_.processor->eventTimeTimers()) fireThrough(watermark / 1000);
    onClock();
  }

  TransformSpec spec_;
  std::vector<DataTypePtr> keyTypes_;
  std::unique_ptr<ProcessorInstance> instance_;
  // Buffers reused for every row.
  Row keyValues_;
  std::string key_;
  std::vector<ProcessorStateEntry> entries_;
  std::vector<int64_t> expiries_;  // of entries_, one each
  std::string value_, ttlRest_;
  std::vector<Row> rows_;
  std::vector<int64_t> timers_;
  std::string keyRow_;
  std::vector<Fired> fired_;
  // No processing-time work is due before this wall-clock time (ms): a
  // bound kept low by every timer or expiry added, and made exact by
  // onClock() after it worked.
  int64_t wakeAt_ = kWakeUnknown;
};

}  // namespace

OperatorPtr makeTransform(const TransformSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<TransformOperator>(spec, std::move(state));
}

}  // namespace rtsql
