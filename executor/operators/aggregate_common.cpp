#include "executor/operators/aggregate_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "common/error.h"
#include "common/expr.h"
#include "common/row_codec.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql {

void putFixed64(std::string& out, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(buf, 8);
}

uint64_t getFixed64(std::string_view& in) {
  if (in.size() < 8) throw InternalError("aggregate state value is truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return v;
}

int64_t keyTimeAt(std::string_view in) {
  if (in.size() < 8) throw InternalError("aggregate state key is truncated");
  std::string_view t = in.substr(0, 8);
  return decodeKeyInt(t);
}

namespace {

uint64_t doubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double bitsDouble(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

// Integral sums wrap on overflow, as Spark's non-ANSI sum does; unsigned
// arithmetic makes that well defined.
int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// DECIMAL sums add unscaled values in 128 bits, wrapping (a sum past 38
// digits is NULL at the end, where its precision is checked).
Int128 decimalAdd(Int128 a, Int128 b) {
  return static_cast<Int128>(static_cast<UInt128>(a) + static_cast<UInt128>(b));
}

void putDecimal(std::string& out, Int128 v) {
  auto u = static_cast<UInt128>(v);
  putFixed64(out, static_cast<uint64_t>(u));
  putFixed64(out, static_cast<uint64_t>(u >> 64));
}

Int128 getDecimal(std::string_view& in) {
  UInt128 lo = getFixed64(in);
  UInt128 hi = getFixed64(in);
  return static_cast<Int128>((hi << 64) | lo);
}

// A DECIMAL sum or average, NULL when it does not fit its type (Spark's non-ANSI mode).
Value decimalResult(std::optional<Int128> v, decimal::Type t) {
  return v ? Value::decimal(*v, t.precision, t.scale) : Value();
}

// A min or max value kept in state is tagged with its own type (row_codec.h).
// One kept from before a replace that widened the argument (INT to BIGINT,
// DOUBLE or DECIMAL, a DECIMAL to more digits: planner/state_plan.cpp) is
// read as the wider type, which holds it exactly.
Value asArgType(Value v, const DataType& type) {
  if (v.isNull() ||
      (v.type() == type.id && (type.id != TypeId::Decimal || v.decimalScale() == type.scale)))
    return v;
  return castValue(v, type);
}

// A sum of YEAR-MONTH INTERVALs (their months, kept as a BIGINT sum); past
// an int32 of months it raises, as Spark's interval sum does.
Value yearMonthIntervalSum(int64_t months) {
  if (months < INT32_MIN || months > INT32_MAX)
    throw SqlError(sqlstate::kNumericOutOfRange,
                   "[ARITHMETIC_OVERFLOW] integer overflow in the sum of YEAR-MONTH INTERVALs",
                   SqlError::npos, "an INTERVAL YEAR TO MONTH holds at most 178956970-7");
  return Value::yearMonthInterval(static_cast<int32_t>(months));
}

// Their average: the sum divided by the count, rounded half away from zero
// (Spark's DivideYMInterval). The months are summed as a DOUBLE, exact for
// any sum an int32 holds.
Value yearMonthIntervalAverage(double sum, int64_t count) {
  const int64_t s = yearMonthIntervalSum(std::llround(sum)).asInt();
  int64_t q = s / count, rem = s % count;
  if (rem != 0 && 2 * (rem < 0 ? -rem : rem) >= count) q += s < 0 ? -1 : 1;
  return Value::yearMonthInterval(static_cast<int32_t>(q));
}

int64_t integralOf(const Value& v) {
  return v.type() == TypeId::Double || v.type() == TypeId::Float ? static_cast<int64_t>(v.asDouble())
                                                                 : v.asInt();
}

}  // namespace

AggregateCalls::AggregateCalls(const std::vector<AggregateCall>& calls, bool retracting)
    : retracting_(retracting) {
  calls_.reserve(calls.size());
  for (const AggregateCall& c : calls) {
    Call call{c.function, c.arg, c.arg ? c.arg->type() : nullptr, false, false, {}, false, c.filter,
              nullptr};
    // min/max of the distinct values are those of all values.
    call.distinct = c.distinct && c.function != AggregateFunction::Min &&
                    c.function != AggregateFunction::Max &&
                    c.function != AggregateFunction::CountStar;
    if (call.distinct || (retracting && (c.function == AggregateFunction::Min ||
                                         c.function == AggregateFunction::Max)))
      keyed_ = true;
    if (c.function != AggregateFunction::CountStar && !c.arg)
      throw InternalError("aggregate call without an argument");
    call.family = makeAggregateFamily(c);
    if (call.family && retracting && !aggregateTakesRetractions(c.function))
      throw InternalError(std::string(aggregateFunctionName(c.function)) +
                          "() over a retracting input: the planner refuses it");
    if (c.function == AggregateFunction::Sum) {
      call.doubleSum = c.resultType ? c.resultType->id == TypeId::Double
                                    : call.argType->id == TypeId::Double;
    }
    if ((c.function == AggregateFunction::Sum || c.function == AggregateFunction::Avg) &&
        c.resultType && c.resultType->id == TypeId::Decimal) {
      call.decimalSum = true;
      call.result = {c.resultType->precision, c.resultType->scale};
    }
    call.yearMonthInterval = (c.function == AggregateFunction::Sum || c.function == AggregateFunction::Avg) &&
                             c.resultType && c.resultType->id == TypeId::YearMonthInterval;
    calls_.push_back(std::move(call));
  }
}

void AggregateCalls::evalArgs(const Row& row, Row& args) const {
  args.resize(calls_.size());
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Call& c = calls_[i];
    if (c.filter) {
      Value keep = c.filter->eval(row);
      if (keep.isNull() || !keep.asBool()) {
        args[i] = Value();
        continue;
      }
      if (!c.arg) {
        args[i] = Value::boolean(true);
        continue;
      }
    }
    args[i] = c.arg ? c.arg->eval(row) : Value();
  }
}

void AggregateCalls::reset(std::vector<Accumulator>& accs) const {
  accs.resize(calls_.size());
  for (Accumulator& a : accs) {
    a.count = 0;
    a.isum = 0;
    a.dsum = 0;
    a.xsum = 0;
    a.has = false;
    a.value = Value();
    a.mean = 0;
    a.m2 = 0;
    a.hits = 0;
    a.items.clear();
    a.counts.clear();
    a.bytes = 0;
    a.sketch.clear();
  }
}

void AggregateCalls::update(std::vector<Accumulator>& accs, const Row& args) const {
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Call& c = calls_[i];
    Accumulator& a = accs[i];
    const Value& v = args[i];
    if (c.function == AggregateFunction::CountStar) {
      if (!c.filter || !v.isNull()) ++a.count;
      continue;
    }
    if (v.isNull()) continue;  // every other aggregate ignores NULL inputs
    if (c.family) {
      c.family->add(a, v);
      continue;
    }
    switch (c.function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        ++a.count;
        break;
      case AggregateFunction::Sum:
        if (c.decimalSum)
          a.xsum = decimalAdd(a.xsum, v.asDecimal());
        else if (c.doubleSum)
          a.dsum += v.toDouble();
        else
          a.isum = wrappingAdd(a.isum, integralOf(v));
        a.has = true;
        break;
      case AggregateFunction::Avg:
        if (c.decimalSum)
          a.xsum = decimalAdd(a.xsum, v.asDecimal());
        else
          a.dsum += v.toDouble();
        ++a.count;
        break;
      case AggregateFunction::Min:
        if (!a.has || v.compare(a.value) < 0) a.value = v;
        a.has = true;
        break;
      case AggregateFunction::Max:
        if (!a.has || v.compare(a.value) > 0) a.value = v;
        a.has = true;
        break;
    }
  }
}

int64_t AggregateCalls::bumpValue(TimeIndexedTable& state, char tag, std::string_view group,
                                  size_t i, const Value& v, int64_t delta) const {
  rest_.clear();
  encodeKey(rest_, v);
  const auto index = static_cast<int64_t>(i);
  int64_t before = 0;
  if (state.getKeyAt(tag, group, index, rest_, value_)) {
    std::string_view in = value_;
    before = static_cast<int64_t>(getFixed64(in));
  }
  const int64_t after = before + delta;
  if (after <= 0) {
    if (before > 0) state.eraseKeyAt(tag, group, index, rest_);
    return before;
  }
  value_.clear();
  putFixed64(value_, static_cast<uint64_t>(after));
  if (tag == 'M') encodeValue(value_, v);
  state.putKeyAt(tag, group, index, rest_, value_);
  return before;
}

void AggregateCalls::apply(std::vector<Accumulator>& accs, const Row& args, bool retract,
                           TimeIndexedTable& state, std::string_view group) const {
  const int64_t d = retract ? -1 : 1;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Call& c = calls_[i];
    Accumulator& a = accs[i];
    const Value& v = args[i];
    if (c.function == AggregateFunction::CountStar) {
      if (!c.filter || !v.isNull()) a.count += d;
      continue;
    }
    if (v.isNull()) continue;
    if (c.distinct) {
      // Only a value's first row in, or its last row out, changes the result.
      const int64_t before = bumpValue(state, 'D', group, i, v, d);
      if (retract ? before != 1 : before != 0) continue;
    }
    if (c.family) {
      if (retract)
        c.family->retract(a, v);
      else
        c.family->add(a, v);
      continue;
    }
    switch (c.function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        a.count += d;
        break;
      case AggregateFunction::Sum:
        if (c.decimalSum)
          a.xsum = decimalAdd(a.xsum, retract ? -v.asDecimal() : v.asDecimal());
        else if (c.doubleSum)
          a.dsum += retract ? -v.toDouble() : v.toDouble();
        else
          a.isum = wrappingAdd(
              a.isum, retract ? static_cast<int64_t>(0 - static_cast<uint64_t>(integralOf(v)))
                              : integralOf(v));
        if (retracting_) {
          a.count += d;
          a.has = a.count > 0;
          if (!a.has) {  // no rounding residue survives an empty sum
            a.isum = 0;
            a.dsum = 0;
            a.xsum = 0;
          }
        } else {
          a.has = true;
        }
        break;
      case AggregateFunction::Avg:
        if (c.decimalSum)
          a.xsum = decimalAdd(a.xsum, retract ? -v.asDecimal() : v.asDecimal());
        else
          a.dsum += retract ? -v.toDouble() : v.toDouble();
        a.count += d;
        if (a.count <= 0) {
          a.count = 0;
          a.dsum = 0;
          a.xsum = 0;
        }
        break;
      case AggregateFunction::Min:
      case AggregateFunction::Max: {
        const bool isMin = c.function == AggregateFunction::Min;
        if (retracting_) {
          const int64_t before = bumpValue(state, 'M', group, i, v, d);
          if (retract && (before != 1 || !a.has || v.compare(a.value) != 0)) break;
        }
        if (!retract) {
          const int cmp = a.has ? v.compare(a.value) : 0;
          if (!a.has || (isMin ? cmp < 0 : cmp > 0)) a.value = v;
          a.has = true;
          break;
        }
        // The extreme left the group: the multiset's first (min) or last
        // (max) value replaces it.
        a.has = false;
        a.value = Value();
        std::string last;
        bool first = true;
        state.scanKey('M', group, static_cast<int64_t>(i), static_cast<int64_t>(i),
                      [&](int64_t, std::string_view, std::string_view value) {
                        if (isMin && !first) return;
                        last.assign(value);
                        first = false;
                      });
        if (!first) {
          std::string_view in = last;
          getFixed64(in);
          a.value = asArgType(decodeValue(in, *c.argType), *c.argType);
          a.has = true;
        }
        break;
      }
    }
  }
}

void AggregateCalls::merge(std::vector<Accumulator>& into, const std::vector<Accumulator>& from) const {
  for (size_t i = 0; i < calls_.size(); ++i) {
    Accumulator& a = into[i];
    const Accumulator& b = from[i];
    if (calls_[i].family) {
      calls_[i].family->merge(a, b);
      continue;
    }
    switch (calls_[i].function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        a.count += b.count;
        break;
      case AggregateFunction::Sum:
        a.isum = wrappingAdd(a.isum, b.isum);
        a.dsum += b.dsum;
        a.xsum = decimalAdd(a.xsum, b.xsum);
        a.has = a.has || b.has;
        break;
      case AggregateFunction::Avg:
        a.dsum += b.dsum;
        a.xsum = decimalAdd(a.xsum, b.xsum);
        a.count += b.count;
        break;
      case AggregateFunction::Min:
        if (b.has && (!a.has || b.value.compare(a.value) < 0)) a.value = b.value;
        a.has = a.has || b.has;
        break;
      case AggregateFunction::Max:
        if (b.has && (!a.has || b.value.compare(a.value) > 0)) a.value = b.value;
        a.has = a.has || b.has;
        break;
    }
  }
}

void AggregateCalls::encode(std::string& out, const std::vector<Accumulator>& accs) const {
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Accumulator& a = accs[i];
    if (calls_[i].family) {
      calls_[i].family->encode(out, a);
      continue;
    }
    switch (calls_[i].function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        putFixed64(out, static_cast<uint64_t>(a.count));
        break;
      case AggregateFunction::Sum:
        out.push_back(a.has ? 1 : 0);
        if (calls_[i].decimalSum)
          putDecimal(out, a.xsum);
        else
          putFixed64(out, calls_[i].doubleSum ? doubleBits(a.dsum) : static_cast<uint64_t>(a.isum));
        if (retracting_) putFixed64(out, static_cast<uint64_t>(a.count));
        break;
      case AggregateFunction::Avg:
        putFixed64(out, static_cast<uint64_t>(a.count));
        if (calls_[i].decimalSum)
          putDecimal(out, a.xsum);
        else
          putFixed64(out, doubleBits(a.dsum));
        break;
      case AggregateFunction::Min:
      case AggregateFunction::Max:
        out.push_back(a.has ? 1 : 0);
        if (a.has) encodeValue(out, a.value);
        break;
    }
  }
}

void AggregateCalls::decode(std::string_view& in, std::vector<Accumulator>& accs) const {
  reset(accs);
  for (size_t i = 0; i < calls_.size(); ++i) {
    // A value that ends before this call's accumulator was written before the
    // call was added to the flow (CREATE OR REPLACE FLOW keeps a GROUP BY's
    // state when aggregates are appended, planner/state_plan.h): it starts
    // empty. Only an unwindowed aggregate of an append-only input allows it,
    // as its value is the accumulators alone.
    if (in.empty() && i > 0) return;
    Accumulator& a = accs[i];
    if (calls_[i].family) {
      calls_[i].family->decode(in, a);
      continue;
    }
    switch (calls_[i].function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        a.count = static_cast<int64_t>(getFixed64(in));
        break;
      case AggregateFunction::Sum: {
        if (in.empty()) throw InternalError("aggregate state value is truncated");
        a.has = in[0] != 0;
        in.remove_prefix(1);
        if (calls_[i].decimalSum) {
          a.xsum = getDecimal(in);
        } else {
          uint64_t bits = getFixed64(in);
          if (calls_[i].doubleSum)
            a.dsum = bitsDouble(bits);
          else
            a.isum = static_cast<int64_t>(bits);
        }
        if (retracting_) a.count = static_cast<int64_t>(getFixed64(in));
        break;
      }
      case AggregateFunction::Avg:
        a.count = static_cast<int64_t>(getFixed64(in));
        if (calls_[i].decimalSum)
          a.xsum = getDecimal(in);
        else
          a.dsum = bitsDouble(getFixed64(in));
        break;
      case AggregateFunction::Min:
      case AggregateFunction::Max:
        if (in.empty()) throw InternalError("aggregate state value is truncated");
        a.has = in[0] != 0;
        in.remove_prefix(1);
        if (a.has) a.value = asArgType(decodeValue(in, *calls_[i].argType), *calls_[i].argType);
        break;
    }
  }
}

void AggregateCalls::appendResults(Row& out, const std::vector<Accumulator>& accs) const {
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Accumulator& a = accs[i];
    if (calls_[i].family) {
      out.push_back(calls_[i].family->result(a));
      continue;
    }
    switch (calls_[i].function) {
      default:  // Spark's families (aggregates/), handled above
        break;
      case AggregateFunction::CountStar:
      case AggregateFunction::Count:
        out.push_back(Value::bigint(a.count));
        break;
      case AggregateFunction::Sum:
        if (!a.has)
          out.emplace_back();
        else if (calls_[i].decimalSum)
          out.push_back(decimalResult(decimal::toType(a.xsum, calls_[i].argType->scale, calls_[i].result),
                                      calls_[i].result));
        else if (calls_[i].yearMonthInterval)
          out.push_back(yearMonthIntervalSum(a.isum));
        else
          out.push_back(calls_[i].doubleSum ? Value::float64(a.dsum) : Value::bigint(a.isum));
        break;
      case AggregateFunction::Avg:
        if (a.count == 0)
          out.emplace_back();
        else if (calls_[i].decimalSum)
          out.push_back(decimalResult(
              decimal::div(a.xsum, calls_[i].argType->scale, a.count, 0, calls_[i].result),
              calls_[i].result));
        else if (calls_[i].yearMonthInterval)
          out.push_back(yearMonthIntervalAverage(a.dsum, a.count));
        else
          out.push_back(Value::float64(a.dsum / static_cast<double>(a.count)));
        break;
      case AggregateFunction::Min:
      case AggregateFunction::Max:
        out.push_back(a.has ? a.value : Value());
        break;
    }
  }
}

AggregateOperatorBase::AggregateOperatorBase(const AggregateSpec& spec,
                                             std::unique_ptr<StateTable> state)
    : StatefulOperator(std::move(state)),
      groupKeys_(spec.groupKeys),
      calls_(spec.aggregates, spec.input != ChangelogMode::Append),
      emitOnClose_(spec.emitOnWindowClose && spec.window.kind != WindowKind::None),
      wallClockWindow_(spec.window.time && spec.window.time->type()->id == TypeId::TimestampNtz),
      retractOut_(spec.changelog.mode == ChangelogMode::Retract) {
  groupValues_.resize(groupKeys_.size());
  calls_.reset(accs_);
  refreshStats();
}

void AggregateOperatorBase::evalGroupKey(const Row& row) {
  groupKey_.clear();
  for (size_t i = 0; i < groupKeys_.size(); ++i) {
    // Into the value's own buffer: a string key is copied once, not into a
    // new Value that then replaces the old one.
    groupKeys_[i]->evalInto(row, groupValues_[i]);
    encodeKey(groupKey_, groupValues_[i]);
  }
  if (emitOnClose_) {
    groupValueBytes_.clear();
    for (const Value& v : groupValues_) encodeValue(groupValueBytes_, v);
  }
}

void AggregateOperatorBase::decodeGroupValues(std::string_view& in, Row& out) const {
  out.resize(groupKeys_.size());
  for (size_t i = 0; i < groupKeys_.size(); ++i) out[i] = decodeValue(in, *groupKeys_[i]->type());
}

void AggregateOperatorBase::buildOutput(Row& out, const Row& groupValues, bool windowed, int64_t start,
                                        int64_t end, const std::vector<Accumulator>& accs) const {
  // The group values are assigned over the previous row's, so that a string
  // key is copied into the buffer it had (unless downstream took it) rather
  // than into a new one.
  out.resize(groupValues.size());
  out.reserve(groupValues.size() + (windowed ? 1 : 0) + calls_.size());
  std::copy(groupValues.begin(), groupValues.end(), out.begin());
  if (windowed) {
    out.push_back(wallClockWindow_
                      ? Value::structure({Value::timestampNtz(start), Value::timestampNtz(end)})
                      : Value::structure({Value::timestamp(start), Value::timestamp(end)}));
  }
  calls_.appendResults(out, accs);
}

}  // namespace rtsql
