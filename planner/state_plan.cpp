// The state plan of CREATE OR REPLACE FLOW (state_plan.h): matching the
// stateful operators of two plans and the rules of what state survives.
#include "planner/state_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "common/error.h"

namespace rtsql {

namespace {

// A stateful operator of a plan with what its state depends on around it.
struct StatefulOp {
  const OperatorSpec* spec = nullptr;
  int stage = 0;
  int tasks = 0;
  std::vector<Schema> inputs;  // the rows it reads (a join's left, then right)
};

std::vector<StatefulOp> statefulOps(const PhysicalPlan& plan) {
  std::vector<StatefulOp> out;
  for (const StageSpec& stage : plan.stages) {
    for (size_t i = 0; i < stage.operators.size(); ++i) {
      const OperatorSpec& op = stage.operators[i];
      if (!op.stateful()) continue;
      StatefulOp s;
      s.spec = &op;
      s.stage = stage.id;
      s.tasks = stage.tasks;
      if (i > 0) {
        s.inputs.push_back(stage.operators[i - 1].output());
      } else if (stage.scan >= 0) {
        s.inputs.push_back(plan.scans[static_cast<size_t>(stage.scan)].schema);
      } else {
        s.inputs.resize(static_cast<size_t>(std::max(stage.inputs, 1)));
        for (const StageSpec& from : plan.stages) {
          if (!from.output.feeds(stage.id)) continue;
          const auto input = static_cast<size_t>(from.output.targetInput);
          if (input < s.inputs.size() && s.inputs[input].size() == 0) {
            s.inputs[input] = from.outputSchema;
          }
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

// The kind of an operator, as its EXPLAIN line names it.
std::string kindOf(const OperatorSpec& op) {
  const std::string text = op.describe();
  return text.substr(0, text.find(' '));
}

// An expression's EXPLAIN text with its inputs (#3) named after the columns
// of the row it reads, so that the same column at another position reads the
// same and a reason names what the user wrote.
std::string namedText(const std::string& text, const Schema& input) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'') quoted = !quoted;
    if (c != '#' || quoted || i + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      out += c;
      continue;
    }
    size_t j = i + 1;
    size_t index = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      index = index * 10 + static_cast<size_t>(text[j] - '0');
      ++j;
    }
    out += index < input.columns.size() ? input.columns[index].name : text.substr(i, j - i);
    i = j - 1;
  }
  return out;
}

std::string named(const ExprPtr& e, const Schema& input) {
  return e ? namedText(e->toString(), input) : "";
}

// The texts of `before` and `after` to compare: the text of the one without
// the CAST when the other is it under a CAST to its own type (CAST(user_id AS
// BIGINT), or a column projected so and named after it), so that the two
// compare by type alone; else their own texts.
std::pair<std::string, std::string> comparable(const ExprPtr& before, const Schema& beforeIn,
                                               const ExprPtr& after, const Schema& afterIn) {
  std::string a = named(before, beforeIn);
  std::string b = named(after, afterIn);
  if (before && after && before->type() && after->type()) {
    if (b == "CAST(" + a + " AS " + after->type()->toString() + ")") b = a;
    if (a == "CAST(" + b + " AS " + before->type()->toString() + ")") a = b;
  }
  return {std::move(a), std::move(b)};
}

std::string typeText(const ExprPtr& e) { return e && e->type() ? e->type()->toString() : ""; }

// Keys as "(a, b)".
std::string keyList(const std::vector<ExprPtr>& keys, const Schema& input) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + named(k, input);
  return "(" + out + ")";
}

// Whether the keys are the same expressions, whatever their types.
bool sameKeyNames(const std::vector<ExprPtr>& before, const Schema& beforeIn,
                  const std::vector<ExprPtr>& after, const Schema& afterIn) {
  if (before.size() != after.size()) return false;
  for (size_t i = 0; i < before.size(); ++i) {
    const auto [a, b] = comparable(before[i], beforeIn, after[i], afterIn);
    if (a != b) return false;
  }
  return true;
}

// How a value of type `from` becomes one of type `to`. Widened: every value
// of `from` is exactly one of `to` (INT to BIGINT or DOUBLE, INT or BIGINT to a
// DECIMAL with room for its 10 or 19 digits before the point, DECIMAL(p, s) to
// one with at least as many digits on both sides of the point); narrowed: the
// reverse.
enum class TypeChange { Same, Widened, Narrowed, Other };

bool widens(const DataType& from, const DataType& to) {
  if ((from.id == TypeId::Int || from.id == TypeId::BigInt) && to.id == TypeId::Decimal)
    return to.precision - to.scale >= (from.id == TypeId::Int ? 10 : 19);
  if (from.id == TypeId::Int) return to.id == TypeId::BigInt || to.id == TypeId::Double;
  // TINYINT to SMALLINT to INT and on, and FLOAT to DOUBLE.
  if (from.id == TypeId::TinyInt || from.id == TypeId::SmallInt)
    return to.id == TypeId::Int || to.id == TypeId::BigInt || to.id == TypeId::Double ||
           (from.id == TypeId::TinyInt && to.id == TypeId::SmallInt);
  if (from.id == TypeId::Float) return to.id == TypeId::Double;
  return from.id == TypeId::Decimal && to.id == TypeId::Decimal && to.scale >= from.scale &&
         to.precision - to.scale >= from.precision - from.scale;
}

TypeChange typeChange(const DataTypePtr& from, const DataTypePtr& to) {
  if (!from || !to || from->toString() == to->toString()) return TypeChange::Same;
  if (widens(*from, *to)) return TypeChange::Widened;
  if (widens(*to, *from)) return TypeChange::Narrowed;
  return TypeChange::Other;
}

// Whether a value stored in `from`'s key encoding (common/row_codec.h) reads
// back as the same value of type `to`: INT and BIGINT share an encoding, and a
// DECIMAL key is its unscaled value, read at the column's precision.
bool sameKeyEncoding(const DataType& from, const DataType& to) {
  if (from.isIntegral() && to.isIntegral()) return true;
  return from.id == TypeId::Decimal && to.id == TypeId::Decimal && from.scale == to.scale;
}

// Why a key of this operator cannot be widened although its key encoding is
// the same: it keeps more than the key's encoding.
constexpr const char* kKeysOnlyWidenInGroupBy =
    "only a GROUP BY or DISTINCT ON key keeps its state when widened (this operator keeps rows "
    "of the old types)";

// Compares the keys by name, then by type. A key whose type is widened keeps
// its state (a note) where the stored keys read back as the wider type and
// `noWidening` is null; `noWidening` says why not otherwise.
void compareKeys(const char* what, const std::vector<ExprPtr>& before, const Schema& beforeIn,
                 const std::vector<ExprPtr>& after, const Schema& afterIn,
                 std::vector<std::string>& reasons, std::vector<std::string>* notes = nullptr,
                 const char* noWidening = kKeysOnlyWidenInGroupBy) {
  if (!sameKeyNames(before, beforeIn, after, afterIn)) {
    reasons.push_back(fmt::format("the {} changed from {} to {}", what, keyList(before, beforeIn),
                                  keyList(after, afterIn)));
    return;
  }
  for (size_t i = 0; i < before.size(); ++i) {
    const DataTypePtr& from = before[i]->type();
    const DataTypePtr& to = after[i]->type();
    const TypeChange change = typeChange(from, to);
    if (change == TypeChange::Same) continue;
    const std::string key = comparable(before[i], beforeIn, after[i], afterIn).first;
    const std::string types = fmt::format("{} to {}", from->toString(), to->toString());
    if (change == TypeChange::Narrowed) {
      reasons.push_back(fmt::format("the {} {} narrowed from {}: a stored key may not fit the "
                                    "narrower type",
                                    what, key, types));
    } else if (change == TypeChange::Other) {
      reasons.push_back(fmt::format("the type of the {} {} changed from {}: keys are stored in "
                                    "their type's encoding",
                                    what, key, types));
    } else if (!sameKeyEncoding(*from, *to)) {
      reasons.push_back(fmt::format("the {} {} widened from {}, but keys are stored in their "
                                    "type's encoding, and {}'s differs from {}'s",
                                    what, key, types, to->toString(), from->toString()));
    } else if (noWidening || !notes) {
      reasons.push_back(fmt::format("the {} {} widened from {}, but {}", what, key, types,
                                    noWidening ? noWidening : kKeysOnlyWidenInGroupBy));
    } else {
      notes->push_back(fmt::format("the {} {} widened from {}: its stored keys read as {}", what,
                                   key, types, to->toString()));
    }
  }
}

// A call as EXPLAIN names it; `arg`, when given, is the text of its argument.
std::string callText(const AggregateCall& call, const Schema& input, const std::string* arg = nullptr) {
  std::string out = call.function == AggregateFunction::CountStar
                        ? std::string("count(*)")
                        : fmt::format("{}({}{})", aggregateFunctionName(call.function),
                                      call.distinct ? "DISTINCT " : "", arg ? *arg : named(call.arg, input));
  if (call.function == AggregateFunction::StringAgg) out += " separator '" + call.separator + "'";
  if (call.function == AggregateFunction::ApproxCountDistinct) out += fmt::format(" rsd {}", call.relativeSD);
  if (call.ignoreNulls) out += " ignore nulls";
  if (call.filter) out += " FILTER (WHERE " + named(call.filter, input) + ")";
  return out;
}

std::string callWithTypes(const AggregateCall& call, const Schema& input) {
  const std::string arg = call.arg ? " " + typeText(call.arg) : std::string();
  return callText(call, input) + arg + " -> " + (call.resultType ? call.resultType->toString() : "");
}

// What a sum or avg accumulates in (aggregate_common.h): a DECIMAL sum is
// unscaled at its argument's scale, so the scale is part of it.
std::string accumulatorOf(const AggregateCall& call) {
  const DataTypePtr& result = call.resultType;
  if (result && result->id == TypeId::Decimal && call.arg && call.arg->type())
    return fmt::format("an unscaled DECIMAL at scale {}", call.arg->type()->scale);
  if (call.function == AggregateFunction::Avg || (result && result->id == TypeId::Double))
    return "a DOUBLE";
  return "a BIGINT";
}

// Whether the accumulator of `before` reads as that of `after`, the same call
// over a widened argument: a note when it does, else a reason. `retracting`:
// the aggregate's input retracts rows, and min and max keep every value.
void compareWidenedCall(const AggregateCall& before, const AggregateCall& after,
                        const std::string& text, bool retracting,
                        std::vector<std::string>& reasons, std::vector<std::string>& notes) {
  const DataTypePtr& from = before.arg->type();
  const DataTypePtr& to = after.arg->type();
  const std::string types = fmt::format("{} to {}", from->toString(), to->toString());
  const TypeChange change = typeChange(from, to);
  // A CAST to the argument's own type: the same call.
  if (change == TypeChange::Same && typeChange(before.resultType, after.resultType) == TypeChange::Same)
    return;
  if (change == TypeChange::Same) {
    reasons.push_back(fmt::format("the result of {} changed from {} to {}", text,
                                  before.resultType ? before.resultType->toString() : "",
                                  after.resultType ? after.resultType->toString() : ""));
    return;
  }
  if (change == TypeChange::Narrowed) {
    reasons.push_back(fmt::format("the argument of {} narrowed from {}: state is kept only for "
                                  "a widened type",
                                  text, types));
    return;
  }
  if (change != TypeChange::Widened) {
    reasons.push_back(fmt::format("the argument of {} changed from {}, which is no widening",
                                  text, types));
    return;
  }
  const AggregateFunction f = before.function;
  if (f == AggregateFunction::Min || f == AggregateFunction::Max) {
    // Each kept value carries its own type and reads back as the wider one
    // (executor/operators/aggregate_common.cpp), exactly. Over a retracting
    // input every value is kept under its key encoding, to find the next
    // extreme when one is retracted: that encoding must stay.
    if (retracting && !sameKeyEncoding(*from, *to)) {
      reasons.push_back(fmt::format("the argument of {} widened from {}, but over a retracting "
                                    "input {}() keeps every value in its type's key encoding, "
                                    "and {}'s differs from {}'s",
                                    text, types, aggregateFunctionName(f), to->toString(),
                                    from->toString()));
      return;
    }
    notes.push_back(fmt::format("the argument of {} widened from {}: its kept values read as {}",
                                text, types, to->toString()));
    return;
  }
  const bool counted = f == AggregateFunction::Count || f == AggregateFunction::Sum ||
                       f == AggregateFunction::Avg;
  if (!counted) {
    reasons.push_back(fmt::format("the argument of {} widened from {}, but {}() keeps values of "
                                  "its argument's type, which would read back as {}",
                                  text, types, aggregateFunctionName(f), from->toString()));
    return;
  }
  if (before.distinct && !sameKeyEncoding(*from, *to)) {
    reasons.push_back(fmt::format("the argument of {} widened from {}, but DISTINCT keeps each "
                                  "value in its type's key encoding, and {}'s differs from {}'s",
                                  text, types, to->toString(), from->toString()));
    return;
  }
  if (f != AggregateFunction::Count && accumulatorOf(before) != accumulatorOf(after)) {
    reasons.push_back(fmt::format("the argument of {} widened from {}, but the accumulator is {} "
                                  "for {} and {} for {}: the encoding differs",
                                  text, types, accumulatorOf(before), from->toString(),
                                  accumulatorOf(after), to->toString()));
    return;
  }
  notes.push_back(fmt::format("the argument of {} widened from {}: its accumulator reads as is",
                              text, types));
}

// Compares the aggregate calls; `appendable`: aggregates added after the
// old ones can start empty (the state value ends with the accumulators);
// `widenable`: a call's argument may widen where its accumulator reads as
// the wider call's.
void compareCalls(const std::vector<AggregateCall>& before, const Schema& beforeIn,
                  const std::vector<AggregateCall>& after, const Schema& afterIn, bool appendable,
                  bool widenable, bool retracting, const char* why,
                  std::vector<std::string>& reasons, std::vector<std::string>& notes) {
  const size_t common = std::min(before.size(), after.size());
  for (size_t i = 0; i < common; ++i) {
    const AggregateCall& a = before[i];
    const AggregateCall& b = after[i];
    if (callWithTypes(a, beforeIn) == callWithTypes(b, afterIn)) continue;
    const auto [argA, argB] = comparable(a.arg, beforeIn, b.arg, afterIn);
    const std::string text = callText(a, beforeIn, &argA);
    if (widenable && a.arg && b.arg && callText(b, afterIn, &argB) == text) {
      compareWidenedCall(a, b, text, retracting, reasons, notes);
    } else {
      reasons.push_back(fmt::format("aggregate {} changed from {} to {}", i + 1,
                                    callWithTypes(a, beforeIn), callWithTypes(b, afterIn)));
    }
  }
  if (after.size() < before.size()) {
    std::string gone;
    for (size_t i = after.size(); i < before.size(); ++i)
      gone += (gone.empty() ? "" : ", ") + callText(before[i], beforeIn);
    reasons.push_back(fmt::format("aggregates {} were removed: the stored accumulators of each "
                                  "group hold them in order",
                                  gone));
  }
  for (size_t i = before.size(); i < after.size(); ++i) {
    if (appendable) {
      notes.push_back(fmt::format("{} added: starts empty, so it covers the rows from the replace on",
                                  callText(after[i], afterIn)));
    } else {
      reasons.push_back(fmt::format("{} added: {}", callText(after[i], afterIn), why));
    }
  }
}

// A length of time in the largest unit that divides it: "5 minutes".
std::string duration(int64_t micros) {
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {86'400'000'000LL, "day"}, {3'600'000'000LL, "hour"}, {60'000'000LL, "minute"},
      {1'000'000LL, "second"},   {1'000LL, "millisecond"},  {1, "microsecond"}};
  for (const auto& [size, name] : kUnits) {
    if (micros % size == 0) {
      const int64_t n = micros / size;
      return fmt::format("{} {}{}", n, name, n == 1 ? "" : "s");
    }
  }
  return fmt::format("{} microseconds", micros);
}

std::string windowText(const WindowSpec& w, const Schema& input) {
  switch (w.kind) {
    case WindowKind::None: return "none";
    case WindowKind::Tumbling:
      return fmt::format("tumbling {} on {}", duration(w.sizeMicros), named(w.time, input));
    case WindowKind::Sliding:
      return fmt::format("sliding {} every {} on {}", duration(w.sizeMicros),
                         duration(w.slideMicros), named(w.time, input));
    case WindowKind::Session:
      return fmt::format("session gap {} on {}", duration(w.gapMicros), named(w.time, input));
  }
  return "?";
}

void compareSchemas(const char* what, const Schema& before, const Schema& after,
                    std::vector<std::string>& reasons) {
  if (before.toString() != after.toString()) {
    reasons.push_back(fmt::format("the {} changed from {} to {}: the operator keeps whole rows",
                                  what, before.toString(), after.toString()));
  }
}

void compareOrder(const std::vector<ExprPtr>& beforeKeys, const std::vector<bool>& beforeDesc,
                  const Schema& beforeIn, const std::vector<ExprPtr>& afterKeys,
                  const std::vector<bool>& afterDesc, const Schema& afterIn,
                  std::vector<std::string>& reasons) {
  compareKeys("ORDER BY", beforeKeys, beforeIn, afterKeys, afterIn, reasons);
  if (beforeDesc != afterDesc) reasons.push_back("the ORDER BY directions changed");
}

const char* modeName(ChangelogMode m) {
  return m == ChangelogMode::Append ? "append-only" : "retracting";
}

// The reasons the state of `before` cannot be `after`'s, and the notes of a
// kept one.
void compare(const StatefulOp& before, const StatefulOp& after, OperatorStateChange& change) {
  std::vector<std::string>& reasons = change.reasons;
  std::vector<std::string> notes;
  const Schema& in0 = before.inputs.empty() ? Schema{} : before.inputs[0];
  const Schema& out0 = after.inputs.empty() ? Schema{} : after.inputs[0];
  if (before.spec->base().input != after.spec->base().input) {
    reasons.push_back(fmt::format("its input changed from {} to {}", modeName(before.spec->base().input),
                                  modeName(after.spec->base().input)));
  }
  if (before.tasks != after.tasks) {
    reasons.push_back(fmt::format(
        "it runs in {} tasks instead of {} (shuffle.partitions or the source's partitions "
        "changed): each key's state lives in the task its hash picks",
        after.tasks, before.tasks));
  }
  if (before.spec->is<AggregateSpec>()) {
    const auto& a = before.spec->as<AggregateSpec>();
    const auto& b = after.spec->as<AggregateSpec>();
    if (windowText(a.window, in0) != windowText(b.window, out0)) {
      reasons.push_back(fmt::format("the window changed from {} to {}", windowText(a.window, in0),
                                    windowText(b.window, out0)));
    }
    if (a.emitOnWindowClose != b.emitOnWindowClose) reasons.push_back("EMIT ON WINDOW CLOSE changed");
    // A window closed by EMIT ON WINDOW CLOSE rebuilds its row from the key
    // values kept in its state value, in their own type's value encoding.
    const bool keepsKeyValues = a.emitOnWindowClose && a.window.kind != WindowKind::None;
    compareKeys("GROUP BY key", a.groupKeys, in0, b.groupKeys, out0, reasons, &notes,
                keepsKeyValues ? "EMIT ON WINDOW CLOSE keeps each window's key values with their "
                                 "old type, which its final row would carry"
                               : nullptr);
    const bool appendable = a.window.kind == WindowKind::None && a.input == ChangelogMode::Append;
    compareCalls(a.aggregates, in0, b.aggregates, out0, appendable, true,
                 a.input != ChangelogMode::Append, a.window.kind != WindowKind::None
                     ? "the open windows keep their accumulators packed, with no room for it"
                     : "a group over a retracting input keeps its row count after the accumulators",
                 reasons, notes);
  } else if (before.spec->is<DedupSpec>()) {
    const auto& a = before.spec->as<DedupSpec>();
    const auto& b = after.spec->as<DedupSpec>();
    compareKeys("DISTINCT ON key", a.dedupKeys, in0, b.dedupKeys, out0, reasons, &notes, nullptr);
    if (a.withinWatermark != b.withinWatermark) reasons.push_back("WITHIN WATERMARK changed");
    if (named(a.eventTime, in0) != named(b.eventTime, out0)) {
      reasons.push_back(fmt::format("the event time changed from {} to {}", named(a.eventTime, in0),
                                    named(b.eventTime, out0)));
    }
  } else if (before.spec->is<StreamJoinSpec>()) {
    const auto& a = before.spec->as<StreamJoinSpec>();
    const auto& b = after.spec->as<StreamJoinSpec>();
    const Schema& in1 = before.inputs.size() > 1 ? before.inputs[1] : Schema{};
    const Schema& out1 = after.inputs.size() > 1 ? after.inputs[1] : Schema{};
    compareKeys("left join key", a.leftKeys, in0, b.leftKeys, out0, reasons);
    compareKeys("right join key", a.rightKeys, in1, b.rightKeys, out1, reasons);
    compareSchemas("left input", in0, out0, reasons);
    compareSchemas("right input", in1, out1, reasons);
    if (a.leftOuter != b.leftOuter || a.rightOuter != b.rightOuter)
      reasons.push_back("the join type changed: which rows wait for a match differs");
    if (a.unbounded != b.unbounded || a.lowerBoundMicros != b.lowerBoundMicros ||
        a.upperBoundMicros != b.upperBoundMicros || a.stateTtlMicros != b.stateTtlMicros)
      reasons.push_back("the join's time bounds or state TTL changed");
  } else if (before.spec->is<TopNSpec>()) {
    const auto& a = before.spec->as<TopNSpec>();
    const auto& b = after.spec->as<TopNSpec>();
    compareKeys("PARTITION BY key", a.partitionKeys, in0, b.partitionKeys, out0, reasons);
    compareOrder(a.orderKeys, a.descending, in0, b.orderKeys, b.descending, out0, reasons);
    compareSchemas("input", in0, out0, reasons);
    if (a.limit != b.limit)
      reasons.push_back(fmt::format("the limit changed from {} to {}", a.limit, b.limit));
    if (a.rankColumn != b.rankColumn) reasons.push_back("the rank column was added or removed");
    if (a.function != b.function)
      reasons.push_back("the ranking function changed: the rows kept and their ranks differ");
  } else if (before.spec->is<OverAggregateSpec>()) {
    const auto& a = before.spec->as<OverAggregateSpec>();
    const auto& b = after.spec->as<OverAggregateSpec>();
    compareKeys("PARTITION BY key", a.partitionKeys, in0, b.partitionKeys, out0, reasons);
    compareOrder(a.orderKeys, a.descending, in0, b.orderKeys, b.descending, out0, reasons);
    compareSchemas("input", in0, out0, reasons);
    if (a.precedingRows != b.precedingRows) reasons.push_back("the frame changed");
    compareCalls(a.aggregates, in0, b.aggregates, out0, false, false, false,
                 "every row's frame is computed from the rows kept", reasons, notes);
  } else if (before.spec->is<TransformSpec>()) {
    const auto& a = before.spec->as<TransformSpec>();
    const auto& b = after.spec->as<TransformSpec>();
    compareKeys("PARTITION BY key", a.partitionKeys, in0, b.partitionKeys, out0, reasons);
    const std::string pa = a.processor ? a.processor->name() : "";
    const std::string pb = b.processor ? b.processor->name() : "";
    if (!iequals(pa, pb))
      reasons.push_back(fmt::format("the processor changed from {} to {}", pa, pb));
  }
  if (reasons.empty()) {
    change.fate = StateFate::Kept;
    change.reasons = std::move(notes);
  } else {
    change.fate = StateFate::Incompatible;
  }
}

}  // namespace

const char* stateFateName(StateFate fate) {
  switch (fate) {
    case StateFate::Kept: return "kept";
    case StateFate::New: return "new";
    case StateFate::Dropped: return "dropped";
    case StateFate::Incompatible: return "incompatible";
    case StateFate::Reset: return "reset";
  }
  return "?";
}

StatePlan planStateChange(const PhysicalPlan& running, const PhysicalPlan& next) {
  StatePlan plan;
  const std::vector<StatefulOp> before = statefulOps(running);
  const std::vector<StatefulOp> after = statefulOps(next);
  // In plan order, each new operator takes the first old one of its kind
  // after the last one taken; the old ones passed over are dropped.
  size_t from = 0;
  for (const StatefulOp& op : after) {
    size_t match = from;
    while (match < before.size() && kindOf(*before[match].spec) != kindOf(*op.spec)) ++match;
    OperatorStateChange change;
    change.newId = op.spec->id();
    change.kind = kindOf(*op.spec);
    change.text = op.spec->describe();
    if (match == before.size()) {
      change.fate = StateFate::New;
      plan.operators.push_back(std::move(change));
      continue;
    }
    for (size_t i = from; i < match; ++i) {
      OperatorStateChange gone;
      gone.fate = StateFate::Dropped;
      gone.oldId = before[i].spec->id();
      gone.kind = kindOf(*before[i].spec);
      gone.text = before[i].spec->describe();
      plan.operators.push_back(std::move(gone));
    }
    change.oldId = before[match].spec->id();
    compare(before[match], op, change);
    if (change.fate == StateFate::Kept) plan.stages[before[match].stage] = op.stage;
    plan.operators.push_back(std::move(change));
    from = match + 1;
  }
  for (size_t i = from; i < before.size(); ++i) {
    OperatorStateChange gone;
    gone.fate = StateFate::Dropped;
    gone.oldId = before[i].spec->id();
    gone.kind = kindOf(*before[i].spec);
    gone.text = before[i].spec->describe();
    plan.operators.push_back(std::move(gone));
  }

  for (size_t n = 0; n < next.scans.size(); ++n) {
    SourceOffsetChange s;
    s.source = next.scans[n].name;
    s.newScan = static_cast<int>(n);
    for (size_t o = 0; o < running.scans.size(); ++o) {
      if (!iequals(running.scans[o].name, s.source)) continue;
      bool taken = false;  // a source read twice (a self-join) keeps each reading's place
      for (const auto& other : plan.sources) taken = taken || other.oldScan == static_cast<int>(o);
      if (taken) continue;
      s.oldScan = static_cast<int>(o);
      break;
    }
    s.kept = s.oldScan >= 0;
    if (!s.kept) s.reason = "not read before: starts at its startingOffsets";
    if (s.kept) {
      for (const StageSpec& a : running.stages) {
        for (const StageSpec& b : next.stages) {
          if (a.scan == s.oldScan && b.scan == s.newScan && a.tasks == b.tasks) plan.stages[a.id] = b.id;
        }
      }
    }
    plan.sources.push_back(std::move(s));
  }
  for (size_t o = 0; o < running.scans.size(); ++o) {
    bool read = false;
    for (const auto& s : plan.sources) read = read || s.oldScan == static_cast<int>(o);
    if (read) continue;
    SourceOffsetChange s;
    s.source = running.scans[o].name;
    s.oldScan = static_cast<int>(o);
    s.reason = "no longer read: its offsets are dropped";
    plan.sources.push_back(std::move(s));
  }

  plan.viewTable = planViewTableChange(running, next);
  if (running.shards != next.shards) {
    plan.flowReasons.push_back(fmt::format(
        "the flow's shards changed from {} to {}: each copy keeps the state of its own keys",
        running.shards, next.shards));
  }
  if (running.exactlyOnce != next.exactlyOnce) {
    plan.flowReasons.push_back("'delivery' changed: the sink's transactions are tied to the checkpoints");
  }
  // A source's column types are not in EXPLAIN, and a widened one changes the
  // plan all the same.
  bool sameScans = running.scans.size() == next.scans.size();
  for (size_t i = 0; sameScans && i < running.scans.size(); ++i)
    sameScans = running.scans[i].schema.toString() == next.scans[i].schema.toString();
  plan.unchanged = sameScans && running.explain() == next.explain() &&
                   running.checkpointIntervalMicros == next.checkpointIntervalMicros &&
                   running.flowOptions.entries().size() == next.flowOptions.entries().size();
  if (plan.unchanged) {
    const auto& a = running.flowOptions.entries();
    const auto& b = next.flowOptions.entries();
    for (size_t i = 0; i < a.size(); ++i) {
      plan.unchanged = plan.unchanged && iequals(a[i].key, b[i].key) && a[i].value == b[i].value;
    }
  }
  return plan;
}

bool StatePlan::compatible() const {
  if (!flowReasons.empty()) return false;
  if (viewTable && viewTable->fate == StateFate::Incompatible) return false;
  return std::none_of(operators.begin(), operators.end(),
                      [](const auto& o) { return o.fate == StateFate::Incompatible; });
}

void StatePlan::reset(const std::vector<int>& ids, size_t pos) {
  for (int id : ids) {
    const bool known = std::any_of(operators.begin(), operators.end(),
                                   [&](const auto& o) { return o.newId == id && id >= 0; });
    if (!known) {
      throw SqlError(sqlstate::kUndefinedObject,
                     fmt::format("RESET STATE names operator {}, which is no stateful operator of "
                                 "the new plan",
                                 id),
                     pos, "EXPLAIN CREATE OR REPLACE FLOW lists the operators and their ids");
    }
  }
  if (ids.empty()) flowReasons.clear();
  for (auto& o : operators) {
    if (o.newId < 0 || o.fate == StateFate::New) continue;
    if (ids.empty() || std::find(ids.begin(), ids.end(), o.newId) != ids.end()) {
      o.fate = StateFate::Reset;
    }
  }
  // The view's table is rebuilt only with everything else: a part of the
  // state reset under it would leave rows the new plan never retracts.
  if (ids.empty() && viewTable) viewTable->fate = StateFate::Reset;
  if (ids.empty()) {
    for (auto& s : sources) {
      if (s.newScan < 0) continue;
      s.kept = false;
      s.reason = "RESET STATE: starts at its startingOffsets";
    }
  }
}

StateMigration StatePlan::migration() const {
  StateMigration m;
  for (const auto& o : operators) {
    if (o.fate == StateFate::Kept) m.operators[o.oldId] = o.newId;
  }
  for (const auto& s : sources) {
    if (s.kept) m.scans[s.oldScan] = s.newScan;
  }
  m.stages = stages;
  return m;
}

std::vector<std::string> StatePlan::lines() const {
  std::vector<std::string> out;
  if (unchanged) {
    out.push_back("unchanged: the flow runs this plan already; nothing happens");
    return out;
  }
  for (const auto& r : flowReasons) out.push_back("flow: incompatible: " + r);
  for (const auto& o : operators) {
    std::string ids = o.oldId >= 0 && o.newId >= 0 && o.oldId != o.newId
                          ? fmt::format("operator {} (was {})", o.newId, o.oldId)
                      : o.newId >= 0 ? fmt::format("operator {}", o.newId)
                                     : fmt::format("operator {} of the running plan", o.oldId);
    std::string line = fmt::format("{} {}: state {}", ids, o.text, stateFateName(o.fate));
    if (o.fate == StateFate::New) line += " (starts empty)";
    if (o.fate == StateFate::Reset) line += " (RESET STATE: starts empty)";
    for (const auto& r : o.reasons) line += "; " + r;
    out.push_back(std::move(line));
  }
  if (operators.empty()) out.push_back("no operator keeps state");
  if (viewTable) {
    std::string line = fmt::format("{}: state {}", viewTable->text, stateFateName(viewTable->fate));
    if (viewTable->fate == StateFate::Reset)
      line += " (RESET STATE: rebuilt from the sources' startingOffsets)";
    for (const auto& r : viewTable->reasons) line += "; " + r;
    out.push_back(std::move(line));
  }
  for (const auto& s : sources) {
    out.push_back(s.kept ? fmt::format("source {}: offsets kept", s.source)
                         : fmt::format("source {}: offsets not kept ({})", s.source, s.reason));
  }
  out.push_back(compatible() ? "the change keeps what the plan says and can be applied"
                             : "the change is refused without RESET STATE");
  return out;
}

std::string StatePlan::reasonsText() const {
  std::string out;
  for (const auto& r : flowReasons) out += (out.empty() ? "" : "; ") + r;
  if (viewTable && viewTable->fate == StateFate::Incompatible) {
    for (const auto& r : viewTable->reasons) out += (out.empty() ? "" : "; ") + r;
  }
  for (const auto& o : operators) {
    if (o.fate != StateFate::Incompatible) continue;
    for (const auto& r : o.reasons)
      out += (out.empty() ? "" : "; ") + fmt::format("operator {} ({}): {}", o.newId, o.kind, r);
  }
  return out;
}

bool StateMigration::identity(const std::vector<int>& oldStatefulIds, int oldScans,
                              int oldStages) const {
  for (int id : oldStatefulIds) {
    auto it = operators.find(id);
    if (it == operators.end() || it->second != id) return false;
  }
  for (int i = 0; i < oldScans; ++i) {
    auto it = scans.find(i);
    if (it == scans.end() || it->second != i) return false;
  }
  for (int i = 0; i < oldStages; ++i) {
    auto it = stages.find(i);
    if (it == stages.end() || it->second != i) return false;
  }
  return true;
}

namespace {

std::string formatMap(const std::map<int, int>& m) {
  std::string out;
  for (const auto& [a, b] : m) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", a, b);
  return out.empty() ? "-" : out;
}

bool parseMap(const std::string& text, std::map<int, int>& m) {
  if (text == "-") return true;
  std::stringstream in(text);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const auto colon = pair.find(':');
    if (colon == std::string::npos) return false;
    try {
      m[std::stoi(pair.substr(0, colon))] = std::stoi(pair.substr(colon + 1));
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string StateMigration::format() const {
  return fmt::format("{};{};{};{}", lastOldEpoch, formatMap(operators), formatMap(scans),
                     formatMap(stages));
}

std::optional<StateMigration> StateMigration::parse(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ';')) parts.push_back(part);
  if (parts.size() != 4) return std::nullopt;
  StateMigration m;
  try {
    m.lastOldEpoch = std::stoull(parts[0]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!parseMap(parts[1], m.operators) || !parseMap(parts[2], m.scans) ||
      !parseMap(parts[3], m.stages))
    return std::nullopt;
  return m;
}

}  // namespace rtsql
