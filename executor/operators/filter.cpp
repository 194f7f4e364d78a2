#include "executor/operators/filter.h"

#include <optional>

namespace rtsql {
namespace {

class FilterOperator final : public Operator {
 public:
  explicit FilterOperator(ExprPtr predicate) : predicate_(std::move(predicate)) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // Read through evalRef: a predicate that is a boolean column costs no copy.
    Value scratch;
    const Value& v = predicate_->evalRef(row, scratch);
    if (!v.isNull() && v.asBool()) emit(row, ctx);
  }
  std::string name() const override { return "Filter"; }

 private:
  ExprPtr predicate_;
};

// A filter over a retracting stream keeps the changelog whole. An update is
// an UpdateBefore (old row) then an UpdateAfter (new row) of one key, and the
// predicate may hold for one of them only:
//   old passes, new passes   the update, as it came;
//   old passes, new fails    a delete of the old row (what follows saw it, and
//                            must drop it: an upsert sink writes a tombstone);
//   old fails,  new passes   an insert of the new row (nothing after saw the old);
//   both fail                nothing.
// So the UpdateBefore is held until the next row: its UpdateAfter decides.
// Any other row, the end of the task's batch, a watermark or the epoch's end
// releases a held row that passed as a delete: a retraction is never lost and
// never waits for a row that may not come. Inserts and deletes pass or not as
// in an append stream (a deleted row passed iff it passed when inserted).
class RetractFilterOperator final : public Operator {
 public:
  RetractFilterOperator(ExprPtr predicate, std::vector<int> key)
      : predicate_(std::move(predicate)), key_(std::move(key)) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    const bool pass = test(row);
    if (ctx.kind == RowKind::UpdateAfter && held_ && sameKey(*held_, row)) {
      Row old = std::move(*held_);
      held_.reset();
      RecordContext out = ctx;
      if (heldPassed_ && pass) {
        emit(old, heldCtx_);
        emit(row, ctx);
      } else if (heldPassed_) {
        out.kind = RowKind::Delete;
        emit(old, out);
      } else if (pass) {
        out.kind = RowKind::Insert;
        emit(row, out);
      }
      return;
    }
    release();
    if (ctx.kind == RowKind::UpdateBefore) {
      held_ = row;
      heldCtx_ = ctx;
      heldPassed_ = pass;
      return;
    }
    if (pass) emit(row, ctx);
  }

  void onBatchEnd() override {
    release();
    Operator::onBatchEnd();
  }
  void onWatermark(int64_t watermarkMicros) override {
    release();
    Operator::onWatermark(watermarkMicros);
  }
  void onEpochEnd() override {
    release();
    Operator::onEpochEnd();
  }
  std::string name() const override { return "Filter"; }

 private:
  bool test(const Row& row) const {
    Value scratch;
    const Value& v = predicate_->evalRef(row, scratch);
    return !v.isNull() && v.asBool();
  }

  // Without a known key, an UpdateAfter belongs to the UpdateBefore before it.
  bool sameKey(const Row& a, const Row& b) const {
    for (int k : key_) {
      const auto i = static_cast<size_t>(k);
      if (a[i].isNull() != b[i].isNull()) return false;
      if (!a[i].isNull() && !(a[i] == b[i])) return false;
    }
    return true;
  }

  // A held UpdateBefore that no UpdateAfter of its key followed: its row is gone.
  void release() {
    if (!held_) return;
    Row old = std::move(*held_);
    held_.reset();
    if (!heldPassed_) return;
    RecordContext out = heldCtx_;
    out.kind = RowKind::Delete;
    emit(old, out);
  }

  ExprPtr predicate_;
  std::vector<int> key_;
  std::optional<Row> held_;
  RecordContext heldCtx_;
  bool heldPassed_ = false;
};

}  // namespace

OperatorPtr makeFilter(const FilterSpec& spec) {
  if (spec.input == ChangelogMode::Retract) {
    return std::make_unique<RetractFilterOperator>(
        spec.predicate, spec.changelog.uniqueKey.value_or(std::vector<int>{}));
  }
  return std::make_unique<FilterOperator>(spec.predicate);
}

}  // namespace rtsql
