// StatefulOperator: the watermark step (expire only when the watermark
// advances, statistics refreshed, every watermark forwarded), the epoch-end
// step (beforeFlush, flush, numRowsUpdated restarted, forwarded), the state
// statistics, late rows dropped or handed to a late-row writer, and
// statefulness that comes from being a StatefulOperator.
#include "executor/operators/stateful_operator.h"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "capture_operator.h"
#include "executor/connector_provider.h"
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
  // A late row at event time `t` on input `input`.
  void lateRow(const Row& row, int64_t t, int input = 0) { late(row, t, input); }
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

// Keeps what it is given, as the flow's late-row writer would write it.
class LateRows final : public FlowDeadLetterWriter {
 public:
  struct Written {
    Row row;
    std::string columns;  // the schema's column names, comma separated
    std::string operatorName;
    int operatorId = 0;
    std::string input;
    int64_t eventTime = 0;
    int64_t watermark = 0;
  };
  void writeError(const Row&, const Schema&, const RowErrorOrigin&) override {
    FAIL("a late-row writer got a failed row");
  }
  void writeLate(const Row& row, const Schema& schema, const LateRowOrigin& origin) override {
    Written w{row,
              "",
              std::string(origin.operatorName),
              origin.operatorId,
              std::string(origin.input),
              origin.eventTimeMicros,
              origin.watermarkMicros};
    for (const auto& c : schema.columns) w.columns += (w.columns.empty() ? "" : ",") + c.name;
    written.push_back(std::move(w));
  }
  void flush(int) override { ++flushes; }

  std::vector<Written> written;
  int flushes = 0;
};

Schema schemaOf(std::vector<std::string> names) {
  Schema s;
  for (auto& n : names) s.columns.push_back({std::move(n), DataType::of(TypeId::BigInt), false});
  return s;
}

}  // namespace

TEST_CASE("stateful operator: late rows go to the late-row writer with their input's schema") {
  MemBackend b;
  Probe op(b.table());
  Capture out;
  op.setNext(&out);
  LateRows late;
  op.sendLateRowsTo(&late, {schemaOf({"a"})}, 5);
  op.onWatermark(10);
  Row r{Value::bigint(4)};
  op.lateRow(r, 4);
  REQUIRE(late.written.size() == 1);
  const LateRows::Written& w = late.written[0];
  CHECK(w.row[0].asInt() == 4);
  CHECK(w.columns == "a");
  CHECK(w.operatorName == "Probe");
  CHECK(w.operatorId == 5);
  CHECK(w.input.empty());  // one input: no side named
  CHECK(w.eventTime == 4);
  CHECK(w.watermark == 10);
  CHECK(op.stats().numLateRowsDeadLettered.load() == 1);
  CHECK(op.stats().numRowsDroppedByWatermark.load() == 0);
  CHECK(out.rows.empty());  // never passed on

  // Two inputs (a join): each row with its side's schema, the side named.
  Probe join(b.table());
  join.sendLateRowsTo(&late, {schemaOf({"l1", "l2"}), schemaOf({"r1"})}, 6);
  Row right{Value::bigint(1)};
  join.lateRow(right, 1, 1);
  Row left{Value::bigint(2), Value::bigint(3)};
  join.lateRow(left, 2, 0);
  REQUIRE(late.written.size() == 3);
  CHECK(late.written[1].columns == "r1");
  CHECK(late.written[1].input == "right");
  CHECK(late.written[2].columns == "l1,l2");
  CHECK(late.written[2].input == "left");
  CHECK(join.stats().numLateRowsDeadLettered.load() == 2);
  CHECK_THROWS_AS(join.lateRow(right, 1, 2), InternalError);
}

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
  op.lateRow(r, 3);
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
