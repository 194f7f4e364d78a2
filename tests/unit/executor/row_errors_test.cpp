// A flow's 'on.error' in the executor (executor/row_errors.h): a data error
// of the next operator is taken at that operator's boundary, in emit(); the
// operator before it goes on; other errors and 'fail' go on up.
#include "executor/row_errors.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "capture_operator.h"
#include "executor/operators/operator.h"

namespace rtsql {
namespace {

// Passes each row on twice, counting the pushes that came back, so a test
// sees that the operator before a failing one goes on.
class Twice final : public Operator {
 public:
  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    Row copy = row;
    emit(row, ctx);
    ++returned;
    emit(copy, ctx);
    ++returned;
  }
  std::string name() const override { return "Twice"; }
  int returned = 0;
};

// Fails on a row whose first column is `bad` with `sqlstate` (and a
// traceback as the detail); passes the others on.
class FailOn final : public Operator {
 public:
  FailOn(int64_t bad, std::string sqlstate) : bad_(bad), sqlstate_(std::move(sqlstate)) {}
  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    if (row[0].asInt() == bad_) {
      throw SqlError(sqlstate_, "function f raised ValueError: bad")
          .withDetail("Traceback (most recent call last):\nValueError: bad");
    }
    emit(row, ctx);
  }
  std::string name() const override { return "Project"; }

 private:
  int64_t bad_;
  std::string sqlstate_;
};

class Letters final : public FlowDeadLetterWriter {
 public:
  struct Written {
    Row row;
    std::string columns, op, input, sqlstate, message, detail;
    int id = 0;
  };
  void writeLate(const Row&, const Schema&, const LateRowOrigin&) override {
    FAIL("a failed row's writer got a late row");
  }
  void writeError(const Row& row, const Schema& schema, const RowErrorOrigin& o) override {
    Written w{row,
              "",
              std::string(o.operatorName),
              std::string(o.input),
              std::string(o.sqlstate),
              std::string(o.message),
              std::string(o.detail),
              o.operatorId};
    for (const auto& c : schema.columns) w.columns += (w.columns.empty() ? "" : ",") + c.name;
    written.push_back(std::move(w));
  }
  void flush(int) override {}
  std::vector<Written> written;
};

Schema schemaOf(const std::string& column) {
  Schema s;
  s.columns.push_back({column, DataType::of(TypeId::BigInt), true});
  return s;
}

// Twice -> FailOn -> Capture, with `errors` (none for 'fail') on each.
struct Chain {
  Twice twice;
  FailOn fail;
  testing::Capture capture;
  explicit Chain(RowErrors* errors, std::string sqlstate = "22000") : fail(2, std::move(sqlstate)) {
    twice.setNext(&fail);
    fail.setNext(&capture);
    for (Operator* op : std::initializer_list<Operator*>{&twice, &fail, &capture}) {
      op->sendRowErrorsTo(errors);
    }
  }
  void push(int64_t v) {
    Row row = {Value::integer(v)};
    twice.push(row, RecordContext{});
  }
};

TEST_CASE("row errors: 'fail' lets the error fail the flow") {
  Chain chain(nullptr);
  chain.push(1);
  CHECK(chain.capture.rows.size() == 2);
  CHECK_THROWS_AS(chain.push(2), SqlError);
  CHECK(chain.twice.returned == 2);  // the failing push never came back
}

TEST_CASE("row errors: 'skip' drops the row at the failing operator, the one before goes on") {
  RowErrors errors(RowErrorPolicy::Skip, "f", nullptr);
  Chain chain(&errors);
  chain.push(1);
  chain.push(2);
  chain.push(3);
  CHECK(chain.twice.returned == 6);
  REQUIRE(chain.capture.rows.size() == 4);
  CHECK(chain.capture.rows[2][0].asInt() == 3);
  CHECK(errors.skipped() == 2);
  CHECK(errors.deadLettered() == 0);
}

TEST_CASE("row errors: an error that is not the row's data fails the flow with any policy") {
  RowErrors errors(RowErrorPolicy::Skip, "f", nullptr);
  Chain chain(&errors, "XX000");
  CHECK_THROWS_AS(chain.push(2), SqlError);
  CHECK(errors.skipped() == 0);
  // raise_error's P0001 is the row's.
  RowErrors raised(RowErrorPolicy::Skip, "f", nullptr);
  Chain user(&raised, "P0001");
  user.push(2);
  CHECK(raised.skipped() == 2);
}

TEST_CASE("row errors: 'dead-letter' writes the failing operator's input row and the error") {
  Letters letters;
  RowErrors errors(RowErrorPolicy::DeadLetter, "f", &letters);
  Chain chain(&errors);
  errors.add(&chain.twice, 1, {schemaOf("n")});
  errors.add(&chain.fail, 2, {schemaOf("m")});
  errors.add(&chain.capture, -1, {schemaOf("out")});
  chain.push(2);
  chain.push(5);
  CHECK(errors.deadLettered() == 2);
  REQUIRE(letters.written.size() == 2);
  const auto& w = letters.written[0];
  REQUIRE(w.row.size() == 1);
  CHECK(w.row[0].asInt() == 2);
  CHECK(w.columns == "m");
  CHECK(w.op == "Project");
  CHECK(w.id == 2);
  CHECK(w.input.empty());
  CHECK(w.sqlstate == "22000");
  CHECK(w.message == "function f raised ValueError: bad");
  CHECK(w.detail == "Traceback (most recent call last):\nValueError: bad");
  CHECK(chain.capture.rows.size() == 2);

  // The task's first operator: the task hands its error over the same way.
  Row row = {Value::integer(2)};
  try {
    chain.fail.push(row, RecordContext{});
    FAIL("no error");
  } catch (const SqlError& e) {
    CHECK(takeRowError(&errors, e, chain.fail, row, 0));
  }
  CHECK(letters.written.size() == 3);
  CHECK_FALSE(takeRowError(nullptr, SqlError("22000", "x"), chain.fail, row, 0));
}

TEST_CASE("row errors: an operator whose errors belong to a batch fails the flow") {
  class Batch final : public Operator {
   public:
    void push(Row&, const RecordContext&) override { throw SqlError("22000", "batch failed"); }
    bool errorsAreRows() const override { return false; }
    std::string name() const override { return "VectorizedBatch"; }
  } batch;
  RowErrors errors(RowErrorPolicy::Skip, "f", nullptr);
  Twice twice;
  twice.setNext(&batch);
  twice.sendRowErrorsTo(&errors);
  Row row = {Value::integer(1)};
  CHECK_THROWS_AS(twice.push(row, RecordContext{}), SqlError);
  CHECK(errors.skipped() == 0);
}

}  // namespace
}  // namespace rtsql
