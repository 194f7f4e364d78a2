#include "executor/operators/expand.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/decimal.h"

namespace rtsql {
namespace {

// One call's rows for one input row: how many, and the value of the k-th
// (0-based), as PostgreSQL gives them. generate_subscripts gives the
// subscripts `a[i]` reads, 0-based as rtsql's are (and as PostgreSQL's
// int2vector and oidvector, pg_index.indkey's types, are); _pg_expandarray's
// n is a position, from 1, as in PostgreSQL.
class CallRows {
 public:
  CallRows(const ExpandSpec::Call& call, const Row& row) : function_(call.function) {
    for (const ExprPtr& a : call.args) args_.push_back(a->eval(row));
    for (const Value& a : args_) {
      if (a.isNull()) return;  // a NULL argument gives no rows
    }
    switch (function_) {
      case ExpandSpec::Function::Unnest:
      case ExpandSpec::Function::ExpandArray:
        count_ = static_cast<int64_t>(args_[0].asList().size());
        break;
      case ExpandSpec::Function::Subscripts:
        // A one-dimensional array has subscripts in its dimension 1 only.
        if (args_[1].asInt() == 1) count_ = static_cast<int64_t>(args_[0].asList().size());
        break;
      case ExpandSpec::Function::Series: {
        const int64_t start = args_[0].asInt();
        const int64_t stop = args_[1].asInt();
        step_ = args_.size() > 2 ? args_[2].asInt() : 1;
        if (step_ == 0) {
          throw SqlError(sqlstate::kInvalidParameterValue, "step size cannot equal zero");
        }
        start_ = start;
        // Counted in 128 bits: stop - start overflows int64 at the extremes.
        const Int128 span = static_cast<Int128>(stop) - start;
        if ((span >= 0) == (step_ > 0) || span == 0) {
          const Int128 n = span / step_ + 1;
          count_ = n > ExpandSpec::kMaxRowsPerInput ? ExpandSpec::kMaxRowsPerInput + 1
                                                    : static_cast<int64_t>(n);
        }
        break;
      }
    }
  }

  int64_t count() const { return count_; }

  Value at(int64_t k, const DataTypePtr& type) const {
    if (k >= count_) return Value();
    switch (function_) {
      case ExpandSpec::Function::Unnest: return args_[0].asList()[static_cast<size_t>(k)];
      case ExpandSpec::Function::Subscripts: return Value::integer(static_cast<int32_t>(k));
      case ExpandSpec::Function::ExpandArray:
        return Value::structure(
            {args_[0].asList()[static_cast<size_t>(k)], Value::integer(static_cast<int32_t>(k + 1))});
      case ExpandSpec::Function::Series: {
        const int64_t v = start_ + k * step_;
        return type->id == TypeId::Int ? Value::integer(static_cast<int32_t>(v)) : Value::bigint(v);
      }
    }
    return Value();
  }

 private:
  ExpandSpec::Function function_;
  std::vector<Value> args_;
  int64_t count_ = 0;
  int64_t start_ = 0;
  int64_t step_ = 1;
};

class ExpandOperator final : public Operator {
 public:
  explicit ExpandOperator(const ExpandSpec& spec) : spec_(spec) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    std::vector<CallRows> calls;
    calls.reserve(spec_.calls.size());
    int64_t rows = 0;
    for (const ExpandSpec::Call& c : spec_.calls) {
      calls.emplace_back(c, row);
      rows = std::max(rows, calls.back().count());
    }
    if (rows > ExpandSpec::kMaxRowsPerInput) {
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("a set-returning function gives more than {} rows for one row",
                                 ExpandSpec::kMaxRowsPerInput))
          .withHint("narrow the generate_series range");
    }
    const auto width = static_cast<size_t>(spec_.inputColumns);
    for (int64_t k = 0; k < rows; ++k) {
      Row out(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(width));
      for (size_t i = 0; i < calls.size(); ++i) {
        out.push_back(calls[i].at(k, spec_.output.columns[width + i].type));
      }
      emit(out, ctx);
    }
  }
  std::string name() const override { return "Expand"; }

 private:
  ExpandSpec spec_;
};

}  // namespace

OperatorPtr makeExpand(const ExpandSpec& spec) { return std::make_unique<ExpandOperator>(spec); }

}  // namespace rtsql
