#include "executor/operators/vectorized_batch.h"

#include "common/python/vectorized_call.h"

namespace rtsql {
namespace {

class VectorizedBatchOperator final : public Operator {
 public:
  explicit VectorizedBatchOperator(const VectorizedBatchSpec& spec)
      : batch_(spec.calls, spec.inputColumns) {
    rows_.reserve(VectorizedBatchSpec::kMaxVectorizedBatchRows);
    contexts_.reserve(VectorizedBatchSpec::kMaxVectorizedBatchRows);
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // The held rows are slots kept from batch to batch: a row is copied into
    // one's existing buffers rather than into a new vector.
    if (held_ < rows_.size()) {
      rows_[held_] = row;
      contexts_[held_] = ctx;
    } else {
      rows_.push_back(row);
      contexts_.push_back(ctx);
    }
    if (++held_ >= VectorizedBatchSpec::kMaxVectorizedBatchRows) flush();
  }
  void onWatermark(int64_t watermarkMicros) override {
    flush();
    Operator::onWatermark(watermarkMicros);
  }
  void onBatchEnd() override {
    flush();
    Operator::onBatchEnd();
  }
  void onEpochEnd() override {
    flush();
    Operator::onEpochEnd();
  }
  // A failed call is the batch's error, not the row's that filled the batch.
  bool errorsAreRows() const override { return false; }
  std::string name() const override { return "VectorizedBatch"; }

 private:
  void flush() {
    if (held_ == 0) return;
    // The rows leave the buffer whatever happens: a failed call fails the
    // flow with the whole batch undelivered, and nothing is passed on twice.
    struct Clear {
      size_t& held;
      ~Clear() { held = 0; }
    } clear{held_};
    batch_.appendResults(rows_, held_);
    for (size_t i = 0; i < held_; ++i) emit(rows_[i], contexts_[i]);
  }

  VectorizedBatch batch_;
  std::vector<Row> rows_;  // the first held_ are the batch's rows
  std::vector<RecordContext> contexts_;
  size_t held_ = 0;
};

}  // namespace

OperatorPtr makeVectorizedBatch(const VectorizedBatchSpec& spec) {
  return std::make_unique<VectorizedBatchOperator>(spec);
}

}  // namespace rtsql
