// StatefulOperator: the watermark step (expire only when the watermark
// advances, statistics refreshed, every watermark forwarded), the epoch-end
// step (beforeFlush, flush, numRowsUpdated restarted, forwarded), the state
// statistics, and statefulness that comes from being a StatefulOperator.
#include "executor/operators/stateful_operator.h"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "capture_operator.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;

// Keeps one time-ordered entry per pushed row (time = the row's only value)
// and records what the base asks of it.
class Probe final : public StatefulOperator {
 public:
  explicit Probe(std::unique_ptr<StateTable> state) : StatefulOperator(std::move(state)) {
    refreshStats();
  }
  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    state_.putAt('T', row[0].asInt(), "", "");
    countUpdate();
    refreshStats();
    emit(row, ctx);
  }
  void drop() { countDropped(); }
  std::string name() const override { return "Probe"; }

  std::vector<int64_t> expired;  // the watermarks expire() was called with
  int beforeFlushes = 0;
  int64_t seenWatermark = 0;  // watermark_ as expire() saw it

 private:
  void expire(int64_t watermark) override {
    expired.push_back(watermark);
    seenWatermark = watermark_;
    state_.expireThrough('T', watermark, [](int64_t, std::string_view, std::string_view) {});
  }
  void beforeFlush() override { ++beforeFlushes; }
};

}  // namespace

TEST_CASE("stateful operator: expires when the watermark advances and forwards every watermark") {
  MemBackend b;
  Probe op(b.table());
  Capture out;
  op.setNext(&out);
  CHECK(op.stateful());
  for (int64_t time : {1, 2, 3, 4}) {
    Row r{Value::bigint(time)};
    op.push(r, {});
  }
  CHECK(op.stats().numRowsTotal.load() == 4);
  op.onWatermark(2);
  op.onWatermark(2);  // not an advance: forwarded, no expiry
  op.onWatermark(1);
  op.onWatermark(std::numeric_limits<int64_t>::max());
  CHECK(op.expired == std::vector<int64_t>{2, std::numeric_limits<int64_t>::max()});
  CHECK(op.seenWatermark == std::numeric_limits<int64_t>::max());
  CHECK(out.watermarks == std::vector<int64_t>{2, 2, 1, std::numeric_limits<int64_t>::max()});
  CHECK(op.stats().numRowsTotal.load() == 0);  // refreshed after the expiry
}

TEST_CASE("stateful operator: epoch end stores, flushes, restarts numRowsUpdated and forwards") {
  MemBackend b;
  Probe op(b.table());
  Capture out;
  op.setNext(&out);
  Row r{Value::bigint(7)};
  op.push(r, {});
  op.drop();
  CHECK(op.stats().numRowsUpdated.load() == 1);
  CHECK(op.stats().numRowsDroppedByWatermark.load() == 1);
  CHECK(op.stats().rowsIn.load() == 1);
  CHECK(op.stats().rowsOut.load() == 1);
  op.onEpochEnd();
  CHECK(op.beforeFlushes == 1);
  CHECK(b.flushes() == 1);
  CHECK(out.epochs == 1);
  CHECK(op.stats().numRowsUpdated.load() == 0);
  CHECK(op.stats().numRowsDroppedByWatermark.load() == 1);  // counts since the start
  CHECK(op.stats().numRowsTotal.load() == 1);
  CHECK(op.stats().memoryUsedBytes.load() > 0);
}

TEST_CASE("stateful operator: needs a state table") {
  CHECK_THROWS_AS(Probe(nullptr), InternalError);
}
