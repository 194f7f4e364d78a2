#include "executor/operators/session_window_aggregate.h"

#include <algorithm>

#include "common/error.h"
#include "common/row_codec.h"
#include "executor/operators/aggregate_common.h"

namespace rtsql {
namespace {

void putFixed32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t getFixed32(std::string_view& in) {
  if (in.size() < 4) throw InternalError("session state value is truncated");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(4);
  return v;
}

// State (TimeIndexedTable families, see aggregate.h for the whole layout):
//   'S' keyed: g -> the group's open sessions, ordered by start:
//                   count (4 bytes), then per session start (8), end (8),
//                   payload length (4) and payload = [ctx (16)] accumulators;
//                   then [group key values]
//   'T' time-ordered: time = session end, rest = g + encodeKeyInt(start)
//                   -> empty, one per session: the index the watermark scans
// The bracketed parts are kept only when emitting on close. Keeping all
// sessions of a group in one entry makes a row one get and one put, however
// the sessions overlap; a group rarely has more than one or two open sessions.
constexpr char kSessionsTag = 'S';
constexpr char kEndIndexTag = 'T';

class SessionWindowAggregateOperator final : public AggregateOperatorBase {
 public:
  SessionWindowAggregateOperator(const AggregateSpec& spec, std::unique_ptr<StateTable> state)
      : AggregateOperatorBase(spec, std::move(state)), time_(spec.window.time), gap_(spec.window.gapMicros) {
    if (!time_) throw InternalError("session window aggregate without a time expression");
    if (gap_ <= 0) throw InternalError("session window aggregate with a non-positive gap");
    // Sessions restored with the table are counted once, from the time index.
    auto count = [this](int64_t, std::string_view, std::string_view) { ++sessions_; };
    state_.forEachAt(kEndIndexTag, count);
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    Value tv = time_->eval(row);
    if (tv.isNull()) return;  // a row without event time belongs to no session
    const int64_t t = tv.asInt();
    if (t + gap_ <= watermark_) {  // the row's own session would already be closed
      late(row, t);
      return;
    }
    evalGroupKey(row);
    calls_.evalArgs(row, args_);

    sessionsOf(groupKey_);

    // The row's interval [t, t + gap) absorbs every session it overlaps.
    int64_t newStart = t;
    int64_t newEnd = t + gap_;
    calls_.reset(accs_);
    calls_.update(accs_, args_);
    size_t overlapped = 0;
    for (Session& s : list_) {
      s.merged = s.start < t + gap_ && s.end > t;
      if (!s.merged) continue;
      ++overlapped;
      std::string_view in = s.payload;
      if (emitOnClose_) in.remove_prefix(16);
      calls_.decode(in, mergeAccs_);
      calls_.merge(accs_, mergeAccs_);
      newStart = std::min(newStart, s.start);
      newEnd = std::max(newEnd, s.end);
    }

    payload_.clear();
    if (emitOnClose_) {
      putFixed64(payload_, static_cast<uint64_t>(ctx.sourceTimestampMicros));
      putFixed64(payload_, static_cast<uint64_t>(ctx.readMicros));
    }
    calls_.encode(payload_, accs_);

    // Rewrite the group's entry: the untouched sessions as they were, the
    // merged one in start order. The time index changes only where a
    // session's (end, start) did.
    bool indexUnchanged = false;
    value_.clear();
    putFixed32(value_, static_cast<uint32_t>(list_.size() - overlapped + 1));
    bool written = false;
    for (const Session& s : list_) {
      if (s.merged) {
        if (s.start == newStart && s.end == newEnd) {
          indexUnchanged = true;
        } else {
          state_.eraseAt(kEndIndexTag, s.end, indexRest(groupKey_, s.start));
        }
        continue;
      }
      if (!written && s.start > newStart) {
        appendSession(newStart, newEnd, payload_);
        written = true;
      }
      appendSession(s.start, s.end, s.payload);
    }
    if (!written) appendSession(newStart, newEnd, payload_);
    if (emitOnClose_) value_.append(groupValueBytes_);
    state_.put(kSessionsTag, groupKey_, value_);
    countUpdate();
    if (!indexUnchanged) state_.putAt(kEndIndexTag, newEnd, indexRest(groupKey_, newStart), {});
    sessions_ = sessions_ + 1 - overlapped;
    refreshStats();
    if (!emitOnClose_) {
      buildOutput(out_, groupValues_, true, newStart, newEnd, accs_);
      emit(out_, ctx);
    }
  }

  std::string name() const override { return "SessionWindowAggregate"; }

 private:
  struct Session {
    int64_t start;
    int64_t end;
    std::string_view payload;  // into listValue_
    bool merged;
  };

  // Loads the sessions of the group `g` into list_ (empty when the group has
  // none); the payloads point into listValue_.
  void sessionsOf(std::string_view g) {
    list_.clear();
    listTail_ = std::string_view();
    if (!state_.get(kSessionsTag, g, listValue_)) return;
    std::string_view in = listValue_;
    const uint32_t n = getFixed32(in);
    for (uint32_t i = 0; i < n; ++i) {
      Session s{};
      s.start = static_cast<int64_t>(getFixed64(in));
      s.end = static_cast<int64_t>(getFixed64(in));
      const uint32_t len = getFixed32(in);
      if (in.size() < len) throw InternalError("session state value is truncated");
      s.payload = in.substr(0, len);
      in.remove_prefix(len);
      list_.push_back(s);
    }
    listTail_ = in;
  }

  void appendSession(int64_t start, int64_t end, std::string_view payload) {
    putFixed64(value_, static_cast<uint64_t>(start));
    putFixed64(value_, static_cast<uint64_t>(end));
    putFixed32(value_, static_cast<uint32_t>(payload.size()));
    value_.append(payload);
  }

  // Sessions whose end <= watermark close, in end order: each final row is
  // emitted (when emitting on close), then the session leaves its group's
  // entry and its index entry is dropped.
  void expire(int64_t watermark) override {
    auto close = [this](int64_t end, std::string_view rest, std::string_view) {
      if (rest.size() < 8) throw InternalError("session index key is truncated");
      const int64_t start = keyTimeAt(rest.substr(rest.size() - 8));
      const std::string_view g = rest.substr(0, rest.size() - 8);
      sessionsOf(g);
      if (sessions_ > 0) --sessions_;
      auto it = std::find_if(list_.begin(), list_.end(),
                             [&](const Session& s) { return s.start == start; });
      if (it == list_.end()) return;  // nothing left to close
      if (emitOnClose_) {
        std::string_view in = it->payload;
        RecordContext ctx;
        ctx.sourceTimestampMicros = static_cast<int64_t>(getFixed64(in));
        ctx.readMicros = static_cast<int64_t>(getFixed64(in));
        calls_.decode(in, accs_);
        std::string_view tail = listTail_;
        decodeGroupValues(tail, groupValues_);
        buildOutput(out_, groupValues_, true, start, end, accs_);
        emit(out_, ctx);
      }
      if (list_.size() == 1) {
        state_.erase(kSessionsTag, g);
        return;
      }
      value_.clear();
      putFixed32(value_, static_cast<uint32_t>(list_.size() - 1));
      for (const Session& s : list_)
        if (s.start != start) appendSession(s.start, s.end, s.payload);
      value_.append(listTail_);
      state_.put(kSessionsTag, g, value_);
    };
    state_.expireThrough(kEndIndexTag, watermark, close);
  }

  // The index entry's bytes after its time: the group key, then the start.
  const std::string& indexRest(std::string_view g, int64_t start) {
    indexRest_.assign(g);
    encodeKeyInt(indexRest_, start);
    return indexRest_;
  }

  // numRowsTotal counts sessions, not state entries (a group's entry holds
  // all of its sessions).
  uint64_t stateRows() const override { return sessions_; }

  ExprPtr time_;
  int64_t gap_ = 0;
  uint64_t sessions_ = 0;  // open sessions over all groups
  std::vector<Session> list_;
  std::string listValue_;
  std::string_view listTail_;  // the group key values after the sessions
  std::string payload_;
  std::string indexRest_;
  std::vector<Accumulator> mergeAccs_;
};

}  // namespace

OperatorPtr makeSessionWindowAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<SessionWindowAggregateOperator>(spec, std::move(state));
}

}  // namespace rtsql
